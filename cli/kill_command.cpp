// `rstorm kill N [--wait S] [--wait-gone]`: as Storm, returns once nimbus has
// accepted the kill: it deactivates the topology, waits S seconds for tuples
// in flight, then removes its assignment (supervisors stop its workers) and
// code. --wait-gone blocks until nimbus no longer lists it.
#include <algorithm>
#include <iostream>

#include "client_flags.hpp"
#include "command.hpp"
#include "common/thrift/codec.hpp"
#include "nimbus/cli_support.hpp"
#include "nimbus/submitter.hpp"

namespace {

struct KillArgs {
  std::string name;
  std::optional<int> wait_secs;
  rstorm::nimbus::ClientFlags flags;
  bool wait_gone = false;
};

RSTORM_CLI_COMMAND("kill", [](CLI::App& app, int& exit_code) {
  auto args = std::make_shared<KillArgs>();
  auto* sub = app.add_subcommand("kill", "Kill a topology");
  sub->add_option("name", args->name, "topology name or id")->required();
  sub->add_option(
      "--wait,-w", args->wait_secs,
      "seconds between deactivation and removal (default topology.message.timeout.secs)")
      ->check(rstorm::cli::at_least(0));
  sub->add_flag("--wait-gone", args->wait_gone,
                "block until the topology is removed (after the wait) instead of returning once "
                "nimbus accepted the kill");
  rstorm::cli::add_client_flags(sub, args->flags);
  sub->callback([&exit_code, args] {
    using namespace rstorm::nimbus;
    auto client = connect_for_cli(args->flags);
    if (!client) return void(exit_code = report_error("kill", client.status(), true));
    if (auto s = (*client)->kill_topology(args->name, args->wait_secs); !s) {
      return void(exit_code = report_error("kill", s));
    }
    std::cout << "killing topology '" << args->name << "': spouts deactivated, removed after "
              << (args->wait_secs ? std::to_string(*args->wait_secs) + " s"
                                  : std::string("its message timeout"))
              << "\n";
    if (args->wait_gone) {
      // Without -w nimbus waits the topology's message timeout (nimbus's
      // own when it sets none; 30 s by default).
      std::int64_t wait = args->wait_secs.value_or(30);
      if (!args->wait_secs) {
        if (auto info = (*client)->topology_info(args->name)) {
          wait = std::max<std::int64_t>(
              wait, rstorm::config_int_or(info->config, "topology.message.timeout.secs", wait));
        }
      }
      auto gone = wait_until_gone(**client, args->name, std::chrono::seconds(wait + 60));
      if (!gone) return void(exit_code = report_error("kill", gone));
      std::cout << "topology '" << args->name << "' removed\n";
    }
    exit_code = kCliOk;
  });
});

}  // namespace
