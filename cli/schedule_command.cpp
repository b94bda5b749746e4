// `rstorm schedule`: a dry run of the scheduler on a cluster description and
// one or more topology descriptions. The logic lives in rstorm::scheduler.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "scheduler/render.hpp"
#include "scheduler/scheduler.hpp"
#include "scheduler/yaml_loader.hpp"

namespace {

struct ScheduleOptions {
  std::string cluster;
  std::vector<std::string> topologies;
  std::string strategy;  // empty: each topology's topology.scheduler.strategy
  bool json = false;
};

int run_schedule(const ScheduleOptions& options) {
  using namespace rstorm::scheduler;
  Result<Cluster> cluster = load_cluster_file(options.cluster);
  if (!cluster) {
    std::cerr << "rstorm schedule: " << cluster.error().message << "\n";
    return rstorm::cli::kExitUsage;
  }
  std::vector<TopologyRequest> requests;
  for (const std::string& path : options.topologies) {
    Result<TopologyRequest> request = load_topology_file(path);
    if (!request) {
      std::cerr << "rstorm schedule: " << request.error().message << "\n";
      return rstorm::cli::kExitUsage;
    }
    if (!options.strategy.empty()) request.value().strategy = *parse_strategy(options.strategy);
    requests.push_back(std::move(request).value());
  }
  Result<ScheduleResult> result = schedule(cluster.value(), requests);
  if (!result) {
    std::cerr << "rstorm schedule: " << options.cluster << ": " << result.error().message << "\n";
    return rstorm::cli::kExitUsage;
  }
  std::cout << (options.json ? render_json(result.value(), requests)
                             : render_text(result.value(), requests));
  int code = rstorm::cli::kExitOk;
  for (const TopologyPlacement& p : result.value().topologies) {
    if (!p.scheduled) {
      std::cerr << "rstorm schedule: topology '" << p.topology.value()
                << "' is unschedulable: " << p.reason << "\n";
      code = rstorm::cli::kExitFailure;
    }
  }
  return code;
}

}  // namespace

RSTORM_CLI_COMMAND("schedule", [](CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ScheduleOptions>();
  auto* sub = app.add_subcommand(
      "schedule", "Dry-run the scheduler: place topologies on a described cluster and explain it");
  sub->add_option("--cluster", options->cluster, "Cluster description (YAML)")->required();
  sub->add_option("topologies", options->topologies, "Topology descriptions (YAML)")->required();
  sub->add_option("--scheduler", options->strategy,
                  "resource-aware or round-robin (default: each topology's "
                  "topology.scheduler.strategy)")
      ->check(CLI::IsMember({"resource-aware", "round-robin"}));
  sub->add_flag("--json", options->json, "Print the placement as JSON");
  sub->callback([&exit_code, options] { exit_code = run_schedule(*options); });
});
