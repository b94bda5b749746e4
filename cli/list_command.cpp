// `rstorm list [--json]`: the topologies nimbus knows, with status and size.
#include <iostream>

#include "command.hpp"
#include "nimbus/cli_support.hpp"
#include "nimbus/render.hpp"

namespace {

RSTORM_CLI_COMMAND("list", [](CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<rstorm::nimbus::ClientFlags>();
  auto* sub = app.add_subcommand("list", "List the topologies of the cluster");
  sub->add_option("-c", flags->overrides, "key=value config override (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--config", flags->config_file, "an rstorm.yaml");
  sub->add_flag("--json", flags->json, "print JSON");
  sub->callback([&exit_code, flags] {
    using namespace rstorm::nimbus;
    auto client = connect_for_cli(*flags);
    if (!client) return void(exit_code = report_error("list", client.status(), true));
    auto cluster = (*client)->cluster_info();
    if (!cluster) return void(exit_code = report_error("list", cluster.status()));
    std::cout << (flags->json ? render_list_json(*cluster) : render_list_text(*cluster));
    exit_code = kCliOk;
  });
});

}  // namespace
