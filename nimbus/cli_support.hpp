// Shared plumbing of the `rstorm` commands that talk to nimbus (submit, list,
// kill, activate, deactivate, rebalance, describe, cluster): config loading
// like Storm's (-c key=value, --config rstorm.yaml), connecting to the leader
// from nimbus.seeds (host or host:port entries), and exit codes. Free functions.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "nimbus/nimbus_client.hpp"
#include "rstorm/config.hpp"

namespace rstorm::nimbus {

// Exit codes, as in cli/command.hpp.
inline constexpr int kCliOk = 0;
inline constexpr int kCliFailure = 1;
inline constexpr int kCliUsage = 2;
inline constexpr int kCliUnavailable = 3;

// The options every nimbus command accepts.
struct ClientFlags {
  std::string config_file;             // --config
  std::vector<std::string> overrides;  // -c key=value
  bool json = false;                   // --json (read commands)
};

// defaults < --config < -c.
Result<Config> load_client_config(const ClientFlags& flags);
// Loads the config and connects to the leading nimbus.
Result<std::unique_ptr<NimbusClient>> connect_for_cli(const ClientFlags& flags);
// kUnavailable -> 3, kInvalidArgument, kIoError or kNotFound from local input
// (a bad argument, a config file that is not there) -> 2 when `local`, else 1.
int exit_code_for(const Status& status, bool local = false);
// Prints "rstorm <command>: <message>" to stderr and returns exit_code_for().
int report_error(const std::string& command, const Status& status, bool local = false);

}  // namespace rstorm::nimbus
