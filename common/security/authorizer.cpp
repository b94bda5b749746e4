#include "common/security/authorizer.hpp"

#include <algorithm>

namespace rstorm::security {
namespace {

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
  return o;
}

bool Authorizer::may_read_secrets(const std::string& user) const {
  if (user.empty()) return false;
  if (!options_.enabled) return true;
  return options_.admins.contains(user) || options_.supervisor_users.contains(user);
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
  if (options_.admins.contains(user)) return Status::ok();
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
      if (options_.users.empty() || options_.users.contains(user)) return Status::ok();
      return deny("not in nimbus.users or nimbus.admins");
    case Operation::kDescribe:
    case Operation::kDownload:
      if (supervisor || daemon) return Status::ok();
      break;
    default:
      break;
  }
  if (topology == nullptr) return deny("it belongs to no topology this user may read");
  if (user == topology->owner || listed(topology->users, user)) return Status::ok();
  if (op == Operation::kDescribe && listed(topology->readonly_users, user)) return Status::ok();
  return deny(op == Operation::kDescribe ? "not in its topology.users or topology.readonly.users"
                                         : "not in its topology.users");
}

}  // namespace rstorm::security
