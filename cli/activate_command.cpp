// `rstorm activate N` and `rstorm deactivate N`: set the topology's desired
// status (ACTIVE/INACTIVE) that its workers follow (spouts resume or pause).
#include <iostream>

#include "client_flags.hpp"
#include "command.hpp"
#include "nimbus/cli_support.hpp"

namespace {

struct StatusArgs {
  std::string name;
  rstorm::nimbus::ClientFlags flags;
};

void add_status_command(CLI::App& app, int& exit_code, const std::string& verb, bool activate) {
  auto args = std::make_shared<StatusArgs>();
  auto* sub = app.add_subcommand(
      verb, activate ? "Resume a topology's spouts" : "Pause a topology's spouts");
  sub->add_option("name", args->name, "topology name or id")->required();
  rstorm::cli::add_client_flags(sub, args->flags);
  sub->callback([&exit_code, args, verb, activate] {
    using namespace rstorm::nimbus;
    auto client = connect_for_cli(args->flags);
    if (!client) return void(exit_code = report_error(verb, client.status(), true));
    auto s = activate ? (*client)->activate(args->name) : (*client)->deactivate(args->name);
    if (!s) return void(exit_code = report_error(verb, s));
    std::cout << "topology '" << args->name << "' " << (activate ? "activated" : "deactivated")
              << "\n";
    exit_code = kCliOk;
  });
}

RSTORM_CLI_COMMAND("activate", [](CLI::App& app, int& exit_code) {
  add_status_command(app, exit_code, "activate", true);
});
RSTORM_CLI_COMMAND("deactivate", [](CLI::App& app, int& exit_code) {
  add_status_command(app, exit_code, "deactivate", false);
});

}  // namespace
