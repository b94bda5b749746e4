// `rstorm rebalance N [-n workers] [-e component=executors]... [-w secs]
// [-r '{"component": {"resource": amount}}']`:
// as Storm, nimbus deactivates the spouts for the wait (default: the
// topology's message timeout), then changes the executors: workers whose
// executors stay the same keep running, the others restart with the new ones.
// -n (a new worker count) places every executor afresh; it applies to the
// round-robin scheduler only and is refused, with the reason, otherwise.
// -r (Storm's resource overrides) sets the resources per executor of
// components, which are then placed afresh where the new amounts fit.
#include <iostream>
#include <nlohmann/json.hpp>

#include "client_flags.hpp"
#include "command.hpp"
#include "nimbus/cli_support.hpp"

namespace {

struct RebalanceArgs {
  std::string name;
  std::optional<int> workers;
  std::vector<std::string> executors;
  std::optional<int> wait_secs;
  std::string resources;
  rstorm::nimbus::ClientFlags flags;
};

int run_rebalance(const RebalanceArgs& args) {
  using namespace rstorm::nimbus;
  rstorm::thrift::RebalanceOptions options;
  if (args.workers) options.__set_num_workers(*args.workers);
  if (args.wait_secs) options.__set_wait_secs(*args.wait_secs);
  std::map<std::string, int32_t> executors;
  for (const std::string& e : args.executors) {
    const auto eq = e.find('=');
    int count = 0;
    try {
      if (eq == std::string::npos || eq == 0) throw std::invalid_argument(e);
      count = std::stoi(e.substr(eq + 1));
    } catch (const std::exception&) {
      std::cerr << "rstorm rebalance: -e " << e << ": expected component=executors\n";
      return kCliUsage;
    }
    executors[e.substr(0, eq)] = count;
  }
  if (!executors.empty()) options.__set_num_executors(executors);
  if (!args.resources.empty()) {
    std::map<std::string, std::map<std::string, double>> overrides;
    std::string problem;
    try {
      const auto json = nlohmann::json::parse(args.resources);
      if (!json.is_object()) problem = "expected a JSON object";
      for (const auto& [component, resources] : json.items()) {
        if (!problem.empty()) break;
        if (!resources.is_object()) {
          problem = "component '" + component + "': expected an object of resource: amount";
          break;
        }
        for (const auto& [name, amount] : resources.items()) {
          if (!amount.is_number()) {
            problem = "component '" + component + "': " + name + " is " + amount.dump() +
                      ", not a number";
            break;
          }
          overrides[component][name] = amount.get<double>();
        }
      }
    } catch (const nlohmann::json::parse_error& e) {
      problem = e.what();
    }
    if (!problem.empty()) {
      std::cerr << "rstorm rebalance: -r " << args.resources << ": " << problem
                << " (example: -r '{\"count\": {\"cpu.pcore.percent\": 50, "
                   "\"onheap.memory.mb\": 256}}')\n";
      return kCliUsage;
    }
    options.__set_resource_overrides(overrides);
  }
  auto client = connect_for_cli(args.flags);
  if (!client) return report_error("rebalance", client.status(), true);
  if (auto s = (*client)->rebalance(args.name, options); !s) return report_error("rebalance", s);
  std::cout << "rebalancing topology '" << args.name << "': spouts deactivated for "
            << (args.wait_secs ? std::to_string(*args.wait_secs) + " s"
                               : std::string("the topology's message timeout"))
            << ", then the new executors start; `rstorm describe " << args.name
            << "` shows the new assignment\n";
  return kCliOk;
}

RSTORM_CLI_COMMAND("rebalance", [](CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RebalanceArgs>();
  auto* sub = app.add_subcommand("rebalance", "Re-place a topology, optionally resized");
  sub->add_option("name", args->name, "topology name or id")->required();
  sub->add_option("-n", args->workers, "number of workers (round-robin)")
      ->check(rstorm::cli::at_least(1));
  sub->add_option("-e", args->executors, "component=executors (repeatable)");
  sub->add_option("-r", args->resources,
                  "new resources per executor, as JSON: '{\"component\": {\"onheap.memory.mb\": "
                  "256, \"offheap.memory.mb\": 0, \"cpu.pcore.percent\": 50}}'; the components' "
                  "executors are placed afresh");
  sub->add_option("--wait,-w", args->wait_secs,
                  "seconds the spouts stay deactivated before the change (default: the "
                  "topology's topology.message.timeout.secs)")
      ->check(rstorm::cli::at_least(0));
  rstorm::cli::add_client_flags(sub, args->flags);
  sub->callback([&exit_code, args] { exit_code = run_rebalance(*args); });
});

}  // namespace
