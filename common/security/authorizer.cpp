#include "common/security/authorizer.hpp"

#include <grp.h>
#include <netdb.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <algorithm>

namespace rstorm::security {
namespace {

// Whether any of `user_groups` is in `wanted`.
template <typename Wanted>
bool in_any(const std::set<std::string, std::less<>>& user_groups, const Wanted& wanted) {
  return std::any_of(wanted.begin(), wanted.end(),
                     [&](const std::string& g) { return user_groups.contains(g); });
}

// Whether `host` (a name or an address) resolves to `address`.
bool host_has_address(const std::string& host, const std::string& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return false;
  bool match = false;
  for (addrinfo* a = found; a != nullptr && !match; a = a->ai_next) {
    char text[NI_MAXHOST];
    if (getnameinfo(a->ai_addr, a->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) ==
        0) {
      match = address == text;
    }
  }
  freeaddrinfo(found);
  return match;
}

bool is_topology_operation(Operation op) {
  switch (op) {
    case Operation::kKill:
    case Operation::kActivate:
    case Operation::kDeactivate:
    case Operation::kRebalance:
    case Operation::kDescribe:
    case Operation::kDownload:
      return true;
    default:
      return false;
  }
}

bool listed(const std::vector<std::string>& list, const std::string& user) {
  return std::find(list.begin(), list.end(), user) != list.end();
}

std::set<std::string, std::less<>> user_set(const Config& config, std::string_view key) {
  const Config::Entry* entry = config.find(key);
  if (entry == nullptr || entry->value.is_null()) return {};
  auto list = config.get_string_list(key);
  return {list.begin(), list.end()};
}

}  // namespace

std::string_view operation_name(Operation op) {
  switch (op) {
    case Operation::kSubmit:
      return "submit";
    case Operation::kUpload:
      return "upload code";
    case Operation::kList:
      return "list topologies";
    case Operation::kGetLeader:
      return "ask for the leader";
    case Operation::kKill:
      return "kill";
    case Operation::kActivate:
      return "activate";
    case Operation::kDeactivate:
      return "deactivate";
    case Operation::kRebalance:
      return "rebalance";
    case Operation::kDescribe:
      return "describe";
    case Operation::kDownload:
      return "download";
    case Operation::kSupervisorHeartbeat:
      return "send supervisor heartbeats";
  }
  return "?";
}

PrincipalMapper PrincipalMapper::from_config(const Config& config) {
  PrincipalMapper mapper;
  const Config::Entry* entry = config.find("storm.principal.tolocal.rules");
  if (entry == nullptr || entry->value.is_null()) return mapper;
  for (const std::string& rule : config.get_string_list("storm.principal.tolocal.rules")) {
    const std::size_t arrow = rule.find("=>");
    if (arrow == std::string::npos) {
      throw ConfigError("storm.principal.tolocal.rules: rule '" + rule +
                        "' is not \"regex => replacement\"");
    }
    const auto trim = [](std::string s) {
      const auto b = s.find_first_not_of(' ');
      const auto e = s.find_last_not_of(' ');
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    try {
      mapper.rules_.emplace_back(std::regex(trim(rule.substr(0, arrow))),
                                 trim(rule.substr(arrow + 2)));
    } catch (const std::regex_error& e) {
      throw ConfigError("storm.principal.tolocal.rules: rule '" + rule + "': " + e.what());
    }
  }
  return mapper;
}

std::string PrincipalMapper::to_local(const std::string& principal) const {
  for (const auto& [pattern, replacement] : rules_) {
    if (std::regex_match(principal, pattern)) {
      return std::regex_replace(principal, pattern, replacement);
    }
  }
  return principal;
}

std::shared_ptr<GroupMapping> GroupMapping::fixed(const std::vector<std::string>& lines) {
  auto m = std::make_shared<GroupMapping>();
  m->kind_ = Kind::kFixed;
  const auto trim = [](std::string_view s) {
    const auto b = s.find_first_not_of(' ');
    const auto e = s.find_last_not_of(' ');
    return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
  };
  for (const std::string& line : lines) {
    const std::size_t colon = line.find(':');
    const std::string user = colon == std::string::npos ? "" : trim(line.substr(0, colon));
    if (user.empty()) {
      throw ConfigError("storm.group.mapping.fixed: '" + line + "' is not \"user: group, group\"");
    }
    auto& groups = m->fixed_[user];
    std::string_view rest(line);
    rest.remove_prefix(colon + 1);
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      const std::string group = trim(rest.substr(0, comma));
      if (!group.empty()) groups.insert(group);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return m;
}

std::shared_ptr<GroupMapping> GroupMapping::unix(std::chrono::seconds ttl) {
  auto m = std::make_shared<GroupMapping>();
  m->kind_ = Kind::kUnix;
  m->ttl_ = ttl;
  return m;
}

std::shared_ptr<GroupMapping> GroupMapping::from_config(const Config& config) {
  const Config::Entry* entry = config.find("storm.group.mapping.service");
  if (entry == nullptr || entry->value.is_null()) return std::make_shared<GroupMapping>();
  const std::string name = config.get_string("storm.group.mapping.service");
  if (name == "unix") {
    const Config::Entry* ttl = config.find("storm.group.mapping.service.cache.duration.secs");
    return unix(std::chrono::seconds(
        ttl == nullptr || ttl->value.is_null()
            ? 120
            : std::max<std::int64_t>(
                  0, config.get_int("storm.group.mapping.service.cache.duration.secs"))));
  }
  if (name == "fixed") {
    const Config::Entry* lines = config.find("storm.group.mapping.fixed");
    return fixed(lines == nullptr || lines->value.is_null()
                     ? std::vector<std::string>{}
                     : config.get_string_list("storm.group.mapping.fixed"));
  }
  throw ConfigError("storm.group.mapping.service: '" + name + "' (" + entry->origin +
                    ") is not a group mapping; use \"unix\", \"fixed\" or null");
}

namespace {

// The system's groups of `user` (its primary group and every group that lists
// it), through NSS as id(1) finds them; empty for an unknown user.
std::set<std::string, std::less<>> system_groups(const std::string& user) {
  std::set<std::string, std::less<>> out;
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    return out;
  }
  int n = 64;
  std::vector<gid_t> gids(static_cast<std::size_t>(n));
  if (getgrouplist(user.c_str(), pw.pw_gid, gids.data(), &n) < 0) {
    gids.resize(static_cast<std::size_t>(n));
    if (getgrouplist(user.c_str(), pw.pw_gid, gids.data(), &n) < 0) return out;
  }
  gids.resize(static_cast<std::size_t>(n));
  for (gid_t gid : gids) {
    group gr{};
    group* g = nullptr;
    std::vector<char> gbuf(16384);
    if (getgrgid_r(gid, &gr, gbuf.data(), gbuf.size(), &g) == 0 && g != nullptr) {
      out.insert(g->gr_name);
    }
  }
  return out;
}

}  // namespace

std::set<std::string, std::less<>> GroupMapping::groups_of(const std::string& user) const {
  switch (kind_) {
    case Kind::kNone:
      return {};
    case Kind::kFixed: {
      auto it = fixed_.find(user);
      return it == fixed_.end() ? std::set<std::string, std::less<>>{} : it->second;
    }
    case Kind::kUnix:
      break;
  }
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    auto it = cache_.find(user);
    if (it != cache_.end() && now - it->second.at < ttl_) return it->second.groups;
  }
  auto groups = system_groups(user);
  std::lock_guard lock(mutex_);
  cache_[user] = Cached{groups, now};
  return groups;
}

Authorizer::Options Authorizer::options_from_config(const Config& config) {
  Options o;
  const Config::Entry* entry = config.find("nimbus.authorizer");
  if (entry != nullptr && !entry->value.is_null()) {
    const std::string name = config.get_string("nimbus.authorizer");
    if (name != "simple-acl") {
      throw ConfigError("nimbus.authorizer: '" + name + "' (" + entry->origin +
                        ") is not an authorizer; use \"simple-acl\" or null");
    }
    o.enabled = true;
  }
  o.admins = user_set(config, "nimbus.admins");
  o.users = user_set(config, "nimbus.users");
  o.supervisor_users = user_set(config, "nimbus.supervisor.users");
  o.daemon_users = user_set(config, "nimbus.daemon.users");
  o.admin_groups = user_set(config, "nimbus.admins.groups");
  o.user_groups = user_set(config, "nimbus.groups");
  auto mapping = GroupMapping::from_config(config);
  if (mapping->kind() == GroupMapping::Kind::kNone) {
    for (const char* key : {"nimbus.admins.groups", "nimbus.groups"}) {
      if (!user_set(config, key).empty()) {
        throw ConfigError(std::string(key) +
                          " is set but storm.group.mapping.service is null: no user would be "
                          "found in a group (use \"unix\" or \"fixed\")");
      }
    }
  }
  o.groups = std::move(mapping);
  for (const std::string& line : user_set(config, "nimbus.impersonation.acl")) {
    auto [user, rule] = parse_impersonation_rule(line);
    if (!rule.groups.empty() && !rule.groups.contains("*") &&
        o.groups->kind() == GroupMapping::Kind::kNone) {
      throw ConfigError("nimbus.impersonation.acl: '" + line +
                        "' names groups but storm.group.mapping.service is null: no user would "
                        "be found in a group (use \"unix\" or \"fixed\")");
    }
    if (!o.impersonation.emplace(user, std::move(rule)).second) {
      throw ConfigError("nimbus.impersonation.acl: two rules for '" + user + "'");
    }
  }
  return o;
}

std::pair<std::string, ImpersonationRule> Authorizer::parse_impersonation_rule(
    const std::string& line) {
  const auto malformed = [&](const std::string& why) {
    return ConfigError("nimbus.impersonation.acl: '" + line + "' " + why +
                       " (want \"user: users=a, b; groups=g; hosts=h1, h2\")");
  };
  const auto trim = [](std::string_view s) {
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t");
    return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
  };
  const std::size_t colon = line.find(':');
  const std::string user = colon == std::string::npos ? "" : trim(line.substr(0, colon));
  if (user.empty()) throw malformed("names no user before ':'");
  ImpersonationRule rule;
  std::string_view rest(line);
  rest.remove_prefix(colon + 1);
  while (!trim(rest).empty()) {
    const std::size_t semicolon = rest.find(';');
    const std::string_view field = rest.substr(0, semicolon);
    rest.remove_prefix(semicolon == std::string_view::npos ? rest.size() : semicolon + 1);
    if (trim(field).empty()) continue;
    const std::size_t equals = field.find('=');
    if (equals == std::string_view::npos) throw malformed("has a field without '='");
    const std::string name = trim(field.substr(0, equals));
    std::set<std::string, std::less<>>* into = name == "users"    ? &rule.users
                                               : name == "groups" ? &rule.groups
                                               : name == "hosts"  ? &rule.hosts
                                                                  : nullptr;
    if (into == nullptr) throw malformed("has field '" + name + "'; want users, groups or hosts");
    std::string_view values = field.substr(equals + 1);
    while (!values.empty()) {
      const std::size_t comma = values.find(',');
      const std::string value = trim(values.substr(0, comma));
      if (!value.empty()) into->insert(value);
      values.remove_prefix(comma == std::string_view::npos ? values.size() : comma + 1);
    }
  }
  if (rule.hosts.empty()) throw malformed("names no hosts (hosts=* for any)");
  if (rule.users.empty() && rule.groups.empty()) {
    throw malformed("names no users or groups to act for (users=* for anyone)");
  }
  return {user, std::move(rule)};
}

Status Authorizer::check_impersonation(const std::string& user, const std::string& target,
                                       const std::string& peer_address) const {
  if (!options_.enabled || user == target) return Status::ok();
  const auto deny = [&](const std::string& why) {
    return Status(
        ErrorCode::kPermissionDenied,
        (user.empty() ? std::string("an unauthenticated client") : "user '" + user + "'") +
            " may not act for user '" + target + "': " + why);
  };
  if (user.empty()) return deny("connect over TLS with a client certificate");
  const auto rule = options_.impersonation.find(user);
  if (rule == options_.impersonation.end()) {
    return deny("no nimbus.impersonation.acl rule for '" + user + "'");
  }
  const ImpersonationRule& r = rule->second;
  if (!r.hosts.contains("*") && !r.hosts.contains(peer_address) &&
      std::none_of(r.hosts.begin(), r.hosts.end(),
                   [&](const std::string& host) { return host_has_address(host, peer_address); })) {
    return deny("its nimbus.impersonation.acl rule does not list host " + peer_address);
  }
  if (r.users.contains("*") || r.groups.contains("*") || r.users.contains(target)) {
    return Status::ok();
  }
  if (!r.groups.empty() && options_.groups &&
      in_any(options_.groups->groups_of(target), r.groups)) {
    return Status::ok();
  }
  return deny("its nimbus.impersonation.acl rule lists neither the user nor a group of theirs");
}

bool Authorizer::may_read_secrets(const std::string& user) const {
  if (user.empty()) return false;
  if (!options_.enabled) return true;
  return options_.admins.contains(user) || options_.supervisor_users.contains(user);
}

void read_acl_keys(const Config& config, TopologyAcl& acl) {
  for (auto [key, field] : {std::pair{"topology.users", &acl.users},
                            {"topology.readonly.users", &acl.readonly_users},
                            {"topology.groups", &acl.groups},
                            {"topology.readonly.groups", &acl.readonly_groups}}) {
    const Config::Entry* entry = config.find(key);
    if (entry != nullptr && !entry->value.is_null()) *field = config.get_string_list(key);
  }
}

Status Authorizer::check(const std::string& user, Operation op, const TopologyAcl* topology) const {
  if (!options_.enabled) return Status::ok();
  const bool topology_op = is_topology_operation(op) && topology != nullptr;
  const auto deny = [&](const std::string& why) {
    std::string what(operation_name(op));
    if (topology_op) {
      what += " topology '" + topology->name + "'";
      if (!topology->owner.empty()) what += " (owner '" + topology->owner + "')";
    } else if (op == Operation::kDownload || op == Operation::kDescribe) {
      what += " this";
    }
    const std::string who = user.empty() ? "an unauthenticated client" : "user '" + user + "'";
    return Status(ErrorCode::kPermissionDenied,
                  who + " may not " + what + (why.empty() ? "" : ": " + why));
  };
  if (op == Operation::kGetLeader) return Status::ok();  // how a client finds the leader
  if (user.empty()) {
    return deny("connect over TLS with a client certificate (nimbus.thrift.client.use.tls)");
  }
  // The groups are looked up only when a group could grant what is asked.
  std::optional<std::set<std::string, std::less<>>> groups_cache;
  const auto groups = [&]() -> const std::set<std::string, std::less<>>& {
    if (!groups_cache) {
      groups_cache =
          options_.groups ? options_.groups->groups_of(user) : std::set<std::string, std::less<>>{};
    }
    return *groups_cache;
  };
  if (options_.admins.contains(user)) return Status::ok();
  if (!options_.admin_groups.empty() && in_any(groups(), options_.admin_groups)) {
    return Status::ok();
  }
  const bool supervisor = options_.supervisor_users.contains(user);
  const bool daemon = options_.daemon_users.contains(user);
  switch (op) {
    case Operation::kSupervisorHeartbeat:
      if (supervisor) return Status::ok();
      return deny("not in nimbus.supervisor.users");
    case Operation::kSubmit:
    case Operation::kUpload:
    case Operation::kList:
      if (op == Operation::kList && daemon) return Status::ok();
      if (options_.users.empty() && options_.user_groups.empty()) return Status::ok();
      if (options_.users.contains(user) || in_any(groups(), options_.user_groups)) {
        return Status::ok();
      }
      return deny(options_.user_groups.empty()
                      ? "not in nimbus.users or nimbus.admins"
                      : "not in nimbus.users, nimbus.groups or nimbus.admins");
    case Operation::kDescribe:
    case Operation::kDownload:
      if (supervisor || daemon) return Status::ok();
      break;
    default:
      break;
  }
  if (topology == nullptr) return deny("it belongs to no topology this user may read");
  if (user == topology->owner || listed(topology->users, user)) return Status::ok();
  if (!topology->groups.empty() && in_any(groups(), topology->groups)) return Status::ok();
  if (op == Operation::kDescribe) {
    if (listed(topology->readonly_users, user)) return Status::ok();
    if (!topology->readonly_groups.empty() && in_any(groups(), topology->readonly_groups)) {
      return Status::ok();
    }
  }
  const bool any_groups = !topology->groups.empty() || !topology->readonly_groups.empty();
  if (op == Operation::kDescribe) {
    return deny(any_groups ? "not in its topology.users, topology.readonly.users or their groups"
                           : "not in its topology.users or topology.readonly.users");
  }
  return deny(any_groups ? "not in its topology.users or topology.groups"
                         : "not in its topology.users");
}

}  // namespace rstorm::security
