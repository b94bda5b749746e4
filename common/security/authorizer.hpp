// Who may do what on nimbus: Storm's SimpleACLAuthorizer semantics with its
// key names.
//
//   nimbus.admins            may do everything.
//   nimbus.users             may submit and list; when empty, every
//                            authenticated user may.
//   nimbus.supervisor.users  may heartbeat, and read the topologies and code
//                            their workers run.
//   nimbus.daemon.users      other rstorm daemons (a standby nimbus, rstorm-ui):
//                            may list, describe and download, never change.
//   topology.users           (per topology, plus its submitter, the owner) may
//                            kill, activate, deactivate, rebalance, describe
//                            and download it.
//   topology.readonly.users  may describe it.
//
// The groups variants (nimbus.admins.groups, nimbus.groups, topology.groups,
// topology.readonly.groups) grant the same to every member of a group, as
// the user's groups are given by storm.group.mapping.service: "unix" (the
// system's groups of the local user, through NSS, cached for
// storm.group.mapping.service.cache.duration.secs) or "fixed"
// (storm.group.mapping.fixed: ["alice: ops, dev", ...]).
//
// A client is the principal of its certificate, mapped to a local user by
// storm.principal.tolocal.rules. No one acts for another unless
// nimbus.impersonation.acl lets them (Storm's ImpersonationAuthorizer, as a
// list of lines since rstorm's config has no maps):
//
//   nimbus.impersonation.acl:
//     - "ui: users=*; hosts=127.0.0.1, ui1.example.com"
//     - "gateway: groups=analysts; users=carol; hosts=10.0.0.7"
//
// lets `ui`, connecting from one of those hosts, act for any user, and
// `gateway` for members of `analysts` and for carol. A rule must name its
// hosts ("*": any) and users or groups ("*": anyone).
//
// Thread contract: immutable after construction (but for the group cache,
// which has its own lock); thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.hpp"
#include "rstorm/config.hpp"

namespace rstorm::security {

enum class Operation {
  kSubmit,
  kUpload,
  kList,
  kGetLeader,
  kKill,
  kActivate,
  kDeactivate,
  kRebalance,
  kDescribe,
  kDownload,
  kSupervisorHeartbeat,
};

// "submit", "kill", "describe", ... as in a denial message.
std::string_view operation_name(Operation op);

// What the authorizer needs to know of one topology.
struct TopologyAcl {
  std::string name;
  std::string owner;  // the submitter's local user; empty when submitted without security
  std::vector<std::string> users;           // topology.users
  std::vector<std::string> readonly_users;  // topology.readonly.users
  std::vector<std::string> groups;          // topology.groups
  std::vector<std::string> readonly_groups;  // topology.readonly.groups
  std::string id;                            // the topology's id (empty: unknown)
};

// The ACL keys of a topology's config into `acl`: topology.users,
// topology.readonly.users, topology.groups, topology.readonly.groups (a key
// unset or null leaves its list as it was). ConfigError naming the key when
// one is not a list of strings.
void read_acl_keys(const Config& config, TopologyAcl& acl);

// storm.group.mapping.service: the groups a local user belongs to.
class GroupMapping {
 public:
  enum class Kind { kNone, kUnix, kFixed };
  GroupMapping() = default;
  // ConfigError naming the key on an unknown service or a malformed
  // storm.group.mapping.fixed entry.
  static std::shared_ptr<GroupMapping> from_config(const Config& config);
  // A "fixed" mapping from "user: group, group" lines (tests, small clusters).
  static std::shared_ptr<GroupMapping> fixed(const std::vector<std::string>& lines);
  // The system's groups, cached for `ttl`.
  static std::shared_ptr<GroupMapping> unix(std::chrono::seconds ttl);

  Kind kind() const { return kind_; }
  // The user's groups; empty for an unknown user or without a mapping.
  std::set<std::string, std::less<>> groups_of(const std::string& user) const;

 private:
  Kind kind_ = Kind::kNone;
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>> fixed_;
  std::chrono::seconds ttl_{120};
  struct Cached {
    std::set<std::string, std::less<>> groups;
    std::chrono::steady_clock::time_point at;
  };
  mutable std::mutex mutex_;
  mutable std::map<std::string, Cached, std::less<>> cache_;  // GUARDED_BY(mutex_)
};

// One nimbus.impersonation.acl line: for whom its user may act, from where.
struct ImpersonationRule {
  std::set<std::string, std::less<>> users;   // "*": anyone
  std::set<std::string, std::less<>> groups;  // their members; "*": anyone
  std::set<std::string, std::less<>> hosts;   // addresses or names; "*": any
};

// storm.principal.tolocal.rules: a list of "regex => replacement" rules; the
// first whose regex matches the whole principal gives the local user
// (std::regex_replace syntax, $1 for a group). No rule matches: the principal
// itself. E.g. "(.*)@EXAMPLE\\.COM => $1".
class PrincipalMapper {
 public:
  PrincipalMapper() = default;
  // ConfigError naming the rule when one is malformed.
  static PrincipalMapper from_config(const Config& config);
  std::string to_local(const std::string& principal) const;

 private:
  std::vector<std::pair<std::regex, std::string>> rules_;
};

class Authorizer {
 public:
  struct Options {
    bool enabled = false;  // nimbus.authorizer: "simple-acl"; null: allow everything
    std::set<std::string, std::less<>> admins;
    std::set<std::string, std::less<>> users;
    std::set<std::string, std::less<>> supervisor_users;
    std::set<std::string, std::less<>> daemon_users;
    std::set<std::string, std::less<>> admin_groups;  // nimbus.admins.groups
    std::set<std::string, std::less<>> user_groups;   // nimbus.groups
    // Who is in which group; null or kNone: no one is in any group.
    std::shared_ptr<const GroupMapping> groups;
    // nimbus.impersonation.acl, by the user who may act for others.
    std::map<std::string, ImpersonationRule, std::less<>> impersonation;
  };
  // One nimbus.impersonation.acl line ("ui: users=*; hosts=127.0.0.1");
  // ConfigError naming the line when it is malformed or names no hosts or
  // no users and groups.
  static std::pair<std::string, ImpersonationRule> parse_impersonation_rule(
      const std::string& line);
  // ConfigError on a wrong type, an unknown authorizer name, or group keys
  // set without a storm.group.mapping.service to read them with.
  static Options options_from_config(const Config& config);

  explicit Authorizer(Options options) : options_(std::move(options)) {}

  bool enabled() const { return options_.enabled; }

  // Whether `user` (empty: an unauthenticated client) may do `op`, on
  // `topology` for the per-topology operations. kPermissionDenied with a
  // message naming the user, the operation and the topology otherwise, e.g.
  // "user 'bob' may not kill topology 'wc' (owner 'alice')".
  Status check(const std::string& user, Operation op, const TopologyAcl* topology = nullptr) const;

  // Whether `user`, connected from `peer_address` (an IP address), may act
  // for `target`: always when they are the same user or the authorizer is
  // off; otherwise when a nimbus.impersonation.acl rule of `user` lists the
  // host and `target` (or one of its groups). kPermissionDenied naming both
  // users and what is missing, e.g. "user 'ui' may not act for user 'alice':
  // no nimbus.impersonation.acl rule for 'ui'".
  Status check_impersonation(const std::string& user, const std::string& target,
                             const std::string& peer_address) const;

  // Whether `user`, authenticated by a certificate, may receive a topology's
  // secret: admins and supervisors (every authenticated user when off).
  bool may_read_secrets(const std::string& user) const;

 private:
  Options options_;
};

}  // namespace rstorm::security
