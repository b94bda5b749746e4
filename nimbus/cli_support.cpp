#include "nimbus/cli_support.hpp"

#include <iostream>

#include <thrift/TOutput.h>

#include "common/config_loader.hpp"

namespace rstorm::nimbus {

Result<Config> load_client_config(const ClientFlags& flags) {
  ConfigLoadOptions options;
  if (!flags.config_file.empty()) options.config_file = flags.config_file;
  options.overrides = flags.overrides;
  try {
    return load_config(options);
  } catch (const ConfigError& e) {
    return Status(ErrorCode::kInvalidArgument, e.what());
  }
}

Result<std::unique_ptr<NimbusClient>> connect_for_cli(const ClientFlags& flags) {
  auto config = load_client_config(flags);
  if (!config) return config.status();
  // The command prints its own error naming nimbus's address and what to do;
  // Thrift's own line about the same socket would only repeat it.
  apache::thrift::GlobalOutput.setOutputFunction([](const char*) {});
  try {
    auto client = NimbusClient::connect(NimbusClient::options_from_config(*config));
    if (!client && client.code() == ErrorCode::kUnavailable && flags.config_file.empty()) {
      // With no rstorm.yaml anywhere, nimbus.seeds is the default's
      // (localhost): say so, as that is the likely cause.
      const Config::Entry* seeds = config->find(keys::kNimbusSeeds);
      auto found = find_config_file();
      if (found && !found->has_value() && seeds != nullptr && seeds->origin != "command line") {
        return Status(ErrorCode::kUnavailable,
                      client.status().message() +
                          "; no rstorm.yaml was found ($RSTORM_CONF_DIR, ~/.rstorm/rstorm.yaml, "
                          "the install's etc/rstorm/rstorm.yaml, /etc/rstorm/rstorm.yaml), so "
                          "nimbus.seeds is the default: give --config FILE");
      }
    }
    if (client && !(*client)->not_leader_reason().empty()) {
      std::cerr << "rstorm: warning: answered by nimbus at " << (*client)->address().to_string()
                << ", which does not lead: " << (*client)->not_leader_reason()
                << " (a failover may be under way); what it shows may be out of date\n";
    }
    return client;
  } catch (const ConfigError& e) {
    return Status(ErrorCode::kInvalidArgument, e.what());
  }
}

int exit_code_for(const Status& status, bool local) {
  if (status.is_ok()) return kCliOk;
  switch (status.code()) {
    case ErrorCode::kUnavailable:
      return kCliUnavailable;
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kIoError:
    case ErrorCode::kNotFound:  // locally: a config file that is not there
      return local ? kCliUsage : kCliFailure;
    default:
      return kCliFailure;
  }
}

int report_error(const std::string& command, const Status& status, bool local) {
  std::cerr << "rstorm " << command << ": " << status.message() << "\n";
  return exit_code_for(status, local);
}

}  // namespace rstorm::nimbus
