#include "common/security/authorizer.hpp"

#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

namespace rstorm::security {
namespace {

Authorizer acl_authorizer() {
  Authorizer::Options o;
  o.enabled = true;
  o.admins = {"admin"};
  o.supervisor_users = {"supervisor"};
  o.daemon_users = {"ui"};
  return Authorizer(o);
}

TopologyAcl wc() { return TopologyAcl{"wc", "alice", {"carol"}, {"dave"}, {}, {}, "wc-1"}; }

TEST(Authorizer, OffAllowsEverything) {
  Authorizer off{Authorizer::Options{}};
  const TopologyAcl t = wc();
  EXPECT_TRUE(off.check("", Operation::kKill, &t));
  EXPECT_TRUE(off.check("bob", Operation::kSubmit));
}

TEST(Authorizer, OwnerAndTopologyUsersMayChangeItOthersMayNot) {
  const Authorizer a = acl_authorizer();
  const TopologyAcl t = wc();
  for (Operation op : {Operation::kKill, Operation::kActivate, Operation::kDeactivate,
                       Operation::kRebalance, Operation::kDescribe, Operation::kDownload}) {
    EXPECT_TRUE(a.check("alice", op, &t)) << operation_name(op);
    EXPECT_TRUE(a.check("carol", op, &t)) << operation_name(op);
    EXPECT_TRUE(a.check("admin", op, &t)) << operation_name(op);
    EXPECT_EQ(a.check("bob", op, &t).code(), ErrorCode::kPermissionDenied) << operation_name(op);
  }
  Status denied = a.check("bob", Operation::kKill, &t);
  EXPECT_EQ(denied.message(),
            "user 'bob' may not kill topology 'wc' (owner 'alice'): not in its topology.users");
}

TEST(Authorizer, ReadOnlyUsersMayDescribeOnly) {
  const Authorizer a = acl_authorizer();
  const TopologyAcl t = wc();
  EXPECT_TRUE(a.check("dave", Operation::kDescribe, &t));
  EXPECT_FALSE(a.check("dave", Operation::kKill, &t));
  EXPECT_FALSE(a.check("dave", Operation::kRebalance, &t));
  EXPECT_FALSE(a.check("dave", Operation::kDownload, &t));
}

TEST(Authorizer, SupervisorsHeartbeatAndReadDaemonsOnlyRead) {
  const Authorizer a = acl_authorizer();
  const TopologyAcl t = wc();
  EXPECT_TRUE(a.check("supervisor", Operation::kSupervisorHeartbeat));
  EXPECT_TRUE(a.check("supervisor", Operation::kDownload, &t));
  EXPECT_TRUE(a.check("supervisor", Operation::kDescribe, &t));
  EXPECT_FALSE(a.check("supervisor", Operation::kKill, &t));
  EXPECT_FALSE(a.check("alice", Operation::kSupervisorHeartbeat));
  EXPECT_TRUE(a.check("ui", Operation::kList));
  EXPECT_TRUE(a.check("ui", Operation::kDescribe, &t));
  EXPECT_FALSE(a.check("ui", Operation::kKill, &t));
  EXPECT_FALSE(a.check("ui", Operation::kSupervisorHeartbeat));
}

TEST(Authorizer, NimbusUsersLimitsWhoSubmitsWhenSet) {
  Authorizer::Options o;
  o.enabled = true;
  Authorizer open(o);
  EXPECT_TRUE(open.check("anyone", Operation::kSubmit));
  o.users = {"alice"};
  Authorizer closed(o);
  EXPECT_TRUE(closed.check("alice", Operation::kSubmit));
  Status s = closed.check("bob", Operation::kSubmit);
  EXPECT_EQ(s.code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(s.message().find("user 'bob' may not submit"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("nimbus.users"), std::string::npos) << s.message();
}

TEST(Authorizer, UnauthenticatedClientsMayOnlyAskForTheLeader) {
  const Authorizer a = acl_authorizer();
  const TopologyAcl t = wc();
  EXPECT_TRUE(a.check("", Operation::kGetLeader));
  Status s = a.check("", Operation::kList);
  EXPECT_EQ(s.code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(s.message().find("unauthenticated"), std::string::npos) << s.message();
  EXPECT_FALSE(a.check("", Operation::kDescribe, &t));
}

TEST(Authorizer, CodeOfNoTopologyIsOnlyForAdminsAndDaemons) {
  const Authorizer a = acl_authorizer();
  EXPECT_FALSE(a.check("alice", Operation::kDownload, nullptr));
  EXPECT_TRUE(a.check("admin", Operation::kDownload, nullptr));
  EXPECT_TRUE(a.check("supervisor", Operation::kDownload, nullptr));
}

TEST(Authorizer, UnknownAuthorizerIsAConfigErrorNamingTheKey) {
  Config c;
  c.set("nimbus.authorizer", "kerberos", "rstorm.yaml");
  try {
    (void)Authorizer::options_from_config(c);
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("nimbus.authorizer"), std::string::npos) << e.what();
  }
  c.set("nimbus.authorizer", "simple-acl");
  c.set("nimbus.admins", ConfigValue::List{"root"});
  auto o = Authorizer::options_from_config(c);
  EXPECT_TRUE(o.enabled);
  EXPECT_TRUE(o.admins.contains("root"));
}

TEST(Authorizer, GroupMembersGetWhatTheirGroupIsGranted) {
  Config c;
  c.set("nimbus.authorizer", "simple-acl");
  c.set("nimbus.admins.groups", ConfigValue::List{"ops"});
  c.set("nimbus.groups", ConfigValue::List{"analysts", "ops"});
  c.set("storm.group.mapping.service", "fixed");
  c.set("storm.group.mapping.fixed",
        ConfigValue::List{"olga: ops", "erin: analysts, sales", "frank: sales", "gina: auditors"});
  const Authorizer a(Authorizer::options_from_config(c));
  TopologyAcl t = wc();
  t.groups = {"sales"};
  t.readonly_groups = {"auditors"};
  // nimbus.admins.groups: everything, on every topology.
  EXPECT_TRUE(a.check("olga", Operation::kKill, &t));
  // nimbus.groups limits who submits.
  EXPECT_TRUE(a.check("erin", Operation::kSubmit));
  EXPECT_EQ(a.check("frank", Operation::kSubmit).message(),
            "user 'frank' may not submit: not in nimbus.users, nimbus.groups or nimbus.admins");
  // topology.groups: change and describe; topology.readonly.groups: describe only.
  EXPECT_TRUE(a.check("frank", Operation::kRebalance, &t));
  EXPECT_TRUE(a.check("erin", Operation::kKill, &t));
  EXPECT_TRUE(a.check("gina", Operation::kDescribe, &t));
  EXPECT_EQ(a.check("gina", Operation::kKill, &t).message(),
            "user 'gina' may not kill topology 'wc' (owner 'alice'): not in its topology.users or "
            "topology.groups");
  EXPECT_FALSE(a.check("bob", Operation::kDescribe, &t));
}

TEST(Authorizer, GroupKeysWithoutAGroupMappingAreAConfigError) {
  Config c;
  c.set("nimbus.authorizer", "simple-acl");
  c.set("nimbus.admins.groups", ConfigValue::List{"ops"}, "rstorm.yaml");
  try {
    (void)Authorizer::options_from_config(c);
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "nimbus.admins.groups is set but storm.group.mapping.service is null: no user would "
              "be found in a group (use \"unix\" or \"fixed\")");
  }
  c.set("storm.group.mapping.service", "ldap", "rstorm.yaml");
  try {
    (void)Authorizer::options_from_config(c);
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("storm.group.mapping.service: 'ldap' (rstorm.yaml)"),
              std::string::npos)
        << e.what();
  }
  c.set("storm.group.mapping.service", "fixed");
  c.set("storm.group.mapping.fixed", ConfigValue::List{"no colon here"});
  EXPECT_THROW((void)Authorizer::options_from_config(c), ConfigError);
}

TEST(Authorizer, ImpersonationNeedsARuleForTheUserTheHostAndTheTarget) {
  Config c;
  c.set("nimbus.authorizer", "simple-acl");
  c.set("storm.group.mapping.service", "fixed");
  c.set("storm.group.mapping.fixed", ConfigValue::List{"erin: analysts", "frank: sales"});
  c.set("nimbus.impersonation.acl",
        ConfigValue::List{"ui: users=*; hosts=127.0.0.1",
                          "gateway: groups=analysts; users=carol; hosts=10.0.0.7",
                          "relay: users=alice; hosts=localhost"});
  const Authorizer a(Authorizer::options_from_config(c));
  EXPECT_TRUE(a.check_impersonation("ui", "alice", "127.0.0.1"));
  EXPECT_TRUE(a.check_impersonation("ui", "admin", "127.0.0.1"));
  EXPECT_TRUE(a.check_impersonation("relay", "alice", "127.0.0.1"));  // a host name resolves
  EXPECT_EQ(a.check_impersonation("ui", "alice", "10.1.2.3").message(),
            "user 'ui' may not act for user 'alice': its nimbus.impersonation.acl rule does not "
            "list host 10.1.2.3");
  EXPECT_TRUE(a.check_impersonation("gateway", "carol", "10.0.0.7"));
  EXPECT_TRUE(a.check_impersonation("gateway", "erin", "10.0.0.7"));  // in analysts
  EXPECT_EQ(a.check_impersonation("gateway", "frank", "10.0.0.7").message(),
            "user 'gateway' may not act for user 'frank': its nimbus.impersonation.acl rule "
            "lists neither the user nor a group of theirs");
  EXPECT_EQ(a.check_impersonation("bob", "alice", "127.0.0.1").message(),
            "user 'bob' may not act for user 'alice': no nimbus.impersonation.acl rule for 'bob'");
  EXPECT_TRUE(a.check_impersonation("bob", "bob", "10.9.9.9"));  // oneself, from anywhere
  EXPECT_FALSE(a.check_impersonation("", "alice", "127.0.0.1"));
  // Off: identities are not checked at all.
  EXPECT_TRUE(Authorizer(Authorizer::Options{}).check_impersonation("bob", "alice", "1.2.3.4"));
}

TEST(Authorizer, MalformedImpersonationRulesAreConfigErrorsNamingTheLine) {
  const auto error_of = [](const std::string& line, bool groups = true) -> std::string {
    Config c;
    c.set("nimbus.authorizer", "simple-acl");
    if (groups) c.set("storm.group.mapping.service", "fixed");
    c.set("nimbus.impersonation.acl", ConfigValue::List{line});
    try {
      (void)Authorizer::options_from_config(c);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(error_of("users=*; hosts=*").find("'users=*; hosts=*' names no user before ':'"),
            std::string::npos);
  EXPECT_NE(error_of("ui: users=*").find("names no hosts (hosts=* for any)"), std::string::npos);
  EXPECT_NE(error_of("ui: hosts=*").find("names no users or groups"), std::string::npos);
  EXPECT_NE(error_of("ui: people=*; hosts=*").find("has field 'people'"), std::string::npos);
  EXPECT_NE(error_of("ui: users; hosts=*").find("has a field without '='"), std::string::npos);
  EXPECT_NE(error_of("ui: groups=ops; hosts=*", false).find("storm.group.mapping.service is null"),
            std::string::npos);
  EXPECT_EQ(error_of("ui: users=*; hosts=*"), "accepted");
}

TEST(GroupMapping, UnixMappingFindsTheSystemsGroupsOfAUser) {
  // This process's own user and its primary group, as the system has them.
  const passwd* me = getpwuid(getuid());
  ASSERT_NE(me, nullptr);
  const group* primary = getgrgid(me->pw_gid);
  ASSERT_NE(primary, nullptr);
  auto mapping = GroupMapping::unix(std::chrono::seconds(120));
  const auto groups = mapping->groups_of(me->pw_name);
  EXPECT_TRUE(groups.contains(primary->gr_name)) << me->pw_name << " not in " << primary->gr_name;
  EXPECT_EQ(mapping->groups_of(me->pw_name), groups);  // from the cache
  EXPECT_TRUE(mapping->groups_of("no-such-user-rstorm-test").empty());

  Config c;
  c.set("nimbus.authorizer", "simple-acl");
  c.set("nimbus.admins.groups", ConfigValue::List{primary->gr_name});
  c.set("storm.group.mapping.service", "unix");
  const Authorizer a(Authorizer::options_from_config(c));
  const TopologyAcl t = wc();
  EXPECT_TRUE(a.check(me->pw_name, Operation::kKill, &t));
  EXPECT_FALSE(a.check("no-such-user-rstorm-test", Operation::kKill, &t));
}

TEST(PrincipalMapper, FirstMatchingRuleMapsThePrincipal) {
  Config c;
  c.set("storm.principal.tolocal.rules",
        ConfigValue::List{"(.*)@EXAMPLE\\.COM => $1", "svc-(.*) => daemon-$1"});
  auto m = PrincipalMapper::from_config(c);
  EXPECT_EQ(m.to_local("alice@EXAMPLE.COM"), "alice");
  EXPECT_EQ(m.to_local("svc-ui"), "daemon-ui");
  EXPECT_EQ(m.to_local("bob"), "bob");
  c.set("storm.principal.tolocal.rules", ConfigValue::List{"no arrow"});
  EXPECT_THROW(PrincipalMapper::from_config(c), ConfigError);
  c.set("storm.principal.tolocal.rules", ConfigValue::List{"([ => x"});
  EXPECT_THROW(PrincipalMapper::from_config(c), ConfigError);
}

}  // namespace
}  // namespace rstorm::security
