// `rstorm cluster [--json]`: nimbuses and supervisors with racks, capacities and use.
#include <iostream>

#include "client_flags.hpp"
#include "command.hpp"
#include "nimbus/cli_support.hpp"
#include "nimbus/render.hpp"

namespace {

RSTORM_CLI_COMMAND("cluster", [](CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<rstorm::nimbus::ClientFlags>();
  auto* sub =
      app.add_subcommand("cluster", "Show nimbus and the supervisors with their capacity and use");
  rstorm::cli::add_client_flags(sub, *flags, rstorm::cli::JsonFlag::kOffered);
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
