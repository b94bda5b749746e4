// `rstorm submit <lib.so> --name N [-c key=value]... [--config f] [--wait]`:
// builds and validates the topology locally, uploads the library, submits it.
// The steps live in rstorm::nimbus_client (nimbus/submitter.hpp).
#include <iostream>

#include "client_flags.hpp"
#include "command.hpp"
#include "nimbus/cli_support.hpp"
#include "nimbus/submitter.hpp"

namespace {

struct SubmitArgs {
  std::string library;
  std::string name;
  rstorm::nimbus::ClientFlags flags;
  bool wait = false;
  int wait_secs = 120;
};

int run_submit(const SubmitArgs& args) {
  using namespace rstorm::nimbus;
  auto config = load_client_config(args.flags);
  if (!config) return report_error("submit", config.status(), true);
  auto prepared = prepare_topology(args.library, args.name, *config);
  if (!prepared) return report_error("submit", prepared.status(), true);
  auto client = NimbusClient::connect(NimbusClient::options_from_config(*config));
  if (!client) return report_error("submit", client.status());
  const auto chunk = static_cast<std::size_t>(config->get_int("storm.blobstore.chunk.size.bytes"));
  auto id = submit_prepared(**client, *prepared, chunk);
  if (!id) return report_error("submit", id.status());
  for (const auto& key : prepared->daemon_keys_ignored) {
    std::cerr << "rstorm submit: note: " << key
              << " (command line) is not sent with the topology: daemons and their workers read it "
                 "from each machine's rstorm.yaml\n";
  }
  // As Storm's: the resource-aware scheduler packs executors into workers by
  // memory and reads no topology.workers; say so when it was set.
  if (auto workers = prepared->config.find("topology.workers");
      workers != prepared->config.end() && workers->second.origin.find("defaults.yaml") ==
                                               std::string::npos) {
    auto strategy = prepared->config.find("topology.scheduler.strategy");
    if (strategy == prepared->config.end() ||
        strategy->second.value_yaml.find("round-robin") == std::string::npos) {
      std::cerr << "rstorm submit: note: topology.workers (" << workers->second.origin
                << ") is not read by the resource-aware scheduler, which packs executors into "
                   "workers by their memory (topology.worker.max.heap.size.mb); set "
                   "topology.scheduler.strategy=round-robin to choose the number of workers\n";
    }
  }
  std::cout << "submitted topology '" << prepared->name << "' as " << *id << "\n";
  if (!args.wait) return kCliOk;
  rstorm::Status running = wait_until_running(**client, *id, std::chrono::seconds(args.wait_secs));
  if (running.code() == rstorm::ErrorCode::kTimeout) {
    running = rstorm::Status(rstorm::ErrorCode::kTimeout,
                             "gave up waiting after " + std::to_string(args.wait_secs) +
                                 " s (--wait-timeout) for it to run: " + running.message() +
                                 "; it stays submitted (rstorm describe " + prepared->name + ")");
  }
  if (!running) return report_error("submit", running);
  std::cout << *id << " is running\n";
  return kCliOk;
}

RSTORM_CLI_COMMAND("submit", [](CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SubmitArgs>();
  auto* sub = app.add_subcommand("submit", "Upload a topology library to nimbus and run it");
  sub->add_option("library", args->library, "the topology's shared library (.so)")->required();
  sub->add_option("--name,-n", args->name,
                  "topology name (default: the library's RSTORM_TOPOLOGY name)");
  rstorm::cli::add_client_flags(sub, args->flags);
  sub->add_flag("--wait", args->wait, "wait until the topology is assigned and running");
  sub->add_option("--wait-timeout", args->wait_secs, "seconds --wait waits (default 120)")
      ->check(rstorm::cli::at_least(1));
  sub->callback([&exit_code, args, sub] {
    if (sub->count("--name") > 0 && args->name.empty()) {
      std::cerr << "rstorm submit: --name is empty: give the topology a name, or leave --name "
                   "out for the library's own\n";
      exit_code = rstorm::cli::kExitUsage;
      return;
    }
    exit_code = run_submit(*args);
  });
});

}  // namespace
