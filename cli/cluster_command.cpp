// `rstorm cluster [--json]`: nimbuses and supervisors with racks, capacities and use.
#include <iostream>

#include "command.hpp"
#include "nimbus/cli_support.hpp"
#include "nimbus/render.hpp"

namespace {

RSTORM_CLI_COMMAND("cluster", [](CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<rstorm::nimbus::ClientFlags>();
  auto* sub =
      app.add_subcommand("cluster", "Show nimbus and the supervisors with their capacity and use");
  sub->add_option("-c", flags->overrides, "key=value config override (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--config", flags->config_file, "an rstorm.yaml");
  sub->add_flag("--json", flags->json, "print JSON");
  sub->callback([&exit_code, flags] {
    using namespace rstorm::nimbus;
    auto client = connect_for_cli(*flags);
    if (!client) return void(exit_code = report_error("cluster", client.status(), true));
    auto cluster = (*client)->cluster_info();
    if (!cluster) return void(exit_code = report_error("cluster", cluster.status()));
    std::cout << (flags->json ? render_cluster_json(*cluster) : render_cluster_text(*cluster));
    exit_code = kCliOk;
  });
});

}  // namespace
