// `rstorm schedule`: a dry run of the scheduler on a cluster description and
// one or more topology descriptions. The logic lives in rstorm::scheduler.
#include <iostream>
#include <optional>
#include <rstorm/config.hpp>
#include <rstorm/topology_library.hpp>
#include <string>
#include <vector>

#include "command.hpp"
#include "scheduler/api_request.hpp"
#include "scheduler/render.hpp"
#include "scheduler/scheduler.hpp"
#include "scheduler/yaml_loader.hpp"

namespace {

struct ScheduleOptions {
  std::string cluster;
  std::vector<std::string> topologies;
  std::string strategy;             // empty: each topology's topology.scheduler.strategy
  std::vector<std::string> config;  // -c key=value, over every topology's config
  bool json = false;
  bool explain = false;
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A topology description (YAML) or a built topology library (.so), with the
// -c overrides on top of its config.
rstorm::scheduler::Result<rstorm::scheduler::TopologyRequest> load_request(
    const std::string& path, const rstorm::Config& overrides) {
  using rstorm::scheduler::Error;
  if (ends_with(path, ".so")) {
    auto library = rstorm::load_topology_library(path);
    if (!library) return Error{library.status().message()};
    auto topology = library->build(overrides);
    if (!topology) return Error{path + ": " + topology.status().message()};
    return rstorm::scheduler::request_from_topology(library->name(), topology->spec(), overrides);
  }
  auto request = rstorm::scheduler::load_topology_file(path);
  if (!request) return request;
  auto applied = rstorm::scheduler::apply_topology_config(std::move(request).value(), overrides);
  if (!applied) return Error{"-c: " + applied.error().message};
  return applied;
}

int run_schedule(const ScheduleOptions& options) {
  using namespace rstorm::scheduler;
  Result<Cluster> cluster = load_cluster_file(options.cluster);
  if (!cluster) {
    std::cerr << "rstorm schedule: " << cluster.error().message << "\n";
    return rstorm::cli::kExitUsage;
  }
  rstorm::Config overrides;
  for (const std::string& arg : options.config) {
    try {
      auto [key, value] = rstorm::parse_config_override(arg);
      overrides.set(key, std::move(value), "command line");
    } catch (const rstorm::ConfigError& e) {
      std::cerr << "rstorm schedule: -c " << arg << ": " << e.what() << "\n";
      return rstorm::cli::kExitUsage;
    }
  }
  std::vector<TopologyRequest> requests;
  for (const std::string& path : options.topologies) {
    Result<TopologyRequest> request = load_request(path, overrides);
    if (!request) {
      std::cerr << "rstorm schedule: " << request.error().message << "\n";
      return rstorm::cli::kExitUsage;
    }
    if (!options.strategy.empty()) request.value().strategy = *parse_strategy(options.strategy);
    requests.push_back(std::move(request).value());
  }
  // What nimbus refuses at submit is refused here too, and not placed: the
  // resource-aware scheduler finds no node for it anyway, round-robin
  // would place it overcommitted.
  int code = rstorm::cli::kExitOk;
  std::erase_if(requests, [&](const TopologyRequest& r) {
    if (r.strategy != Strategy::kRoundRobin) return false;
    const std::string problem = fit_problem(r, cluster.value());
    if (problem.empty()) return false;
    std::cerr << "rstorm schedule: topology '" << r.id.value()
              << "' is unschedulable (nimbus refuses it at submit): " << problem << "\n";
    code = rstorm::cli::kExitFailure;
    return true;
  });
  Result<ScheduleResult> result = schedule(cluster.value(), requests);
  if (!result) {
    std::cerr << "rstorm schedule: " << options.cluster << ": " << result.error().message << "\n";
    return rstorm::cli::kExitUsage;
  }
  std::cout << (options.json ? render_json(result.value(), requests)
                             : render_text(result.value(), requests, {options.explain}));
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
  sub->add_option("topologies", options->topologies,
                  "Topology descriptions (YAML) or built topology libraries (.so)")
      ->required();
  sub->add_option("-c", options->config,
                  "Topology config key=value over every topology's own (e.g. topology.workers=12)");
  sub->add_option("--scheduler", options->strategy,
                  "resource-aware or round-robin (default: each topology's "
                  "topology.scheduler.strategy)")
      ->check(CLI::IsMember({"resource-aware", "round-robin"}));
  sub->add_flag("--json", options->json, "Print the placement as JSON");
  sub->add_flag("--explain", options->explain,
                "Also list every resource-aware decision with its distance terms");
  sub->callback([&exit_code, options] { exit_code = run_schedule(*options); });
});
