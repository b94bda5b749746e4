// `rstorm describe N [--json]`: status, placement by rack/node/worker,
// resources used against requested, network cost, last errors.
#include <iostream>

#include "client_flags.hpp"
#include "command.hpp"
#include "nimbus/cli_support.hpp"
#include "nimbus/render.hpp"

namespace {

struct DescribeArgs {
  std::string name;
  rstorm::nimbus::ClientFlags flags;
};

RSTORM_CLI_COMMAND("describe", [](CLI::App& app, int& exit_code) {
  auto args = std::make_shared<DescribeArgs>();
  auto* sub = app.add_subcommand("describe", "Show a topology's status and placement");
  sub->add_option("name", args->name, "topology name or id")->required();
  rstorm::cli::add_client_flags(sub, args->flags, rstorm::cli::JsonFlag::kOffered);
  sub->callback([&exit_code, args] {
    using namespace rstorm::nimbus;
    auto client = connect_for_cli(args->flags);
    if (!client) return void(exit_code = report_error("describe", client.status(), true));
    auto info = (*client)->topology_info(args->name);
    if (!info) return void(exit_code = report_error("describe", info.status()));
    auto placement = (*client)->placement(args->name);
    if (!placement) return void(exit_code = report_error("describe", placement.status()));
    std::cout << (args->flags.json ? render_describe_json(*info, *placement)
                                   : render_describe_text(*info, *placement));
    exit_code = kCliOk;
  });
});

}  // namespace
