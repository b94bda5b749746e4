#include "scheduler/request.hpp"

namespace rstorm::scheduler {

std::optional<Strategy> parse_strategy(std::string_view name) {
  if (name == "resource-aware") return Strategy::kResourceAware;
  if (name == "round-robin") return Strategy::kRoundRobin;
  return std::nullopt;
}

std::string_view strategy_name(Strategy strategy) {
  return strategy == Strategy::kRoundRobin ? "round-robin" : "resource-aware";
}

void add_component(TopologyRequest& request, const ComponentSpec& spec) {
  request.components.push_back(spec);
  const int executors = spec.parallelism;
  const int tasks = spec.tasks > 0 ? spec.tasks : executors;
  int next_task = 1;  // task ids start at 1, as the topology API numbers them
  for (const ExecutorRequest& e : request.executors)
    next_task = std::max(next_task, e.last_task + 1);
  for (int i = 0; i < executors; ++i) {
    // Storm's split: the first (tasks % executors) executors get one task more.
    const int count = tasks / executors + (i < tasks % executors ? 1 : 0);
    ExecutorRequest e;
    e.component = spec.name;
    e.first_task = next_task;
    e.last_task = next_task + std::max(count, 1) - 1;
    next_task = e.last_task + 1;
    e.onheap_mb = spec.onheap_mb;
    e.offheap_mb = spec.offheap_mb;
    e.cpu = spec.cpu;
    e.generic = spec.generic;
    request.executors.push_back(std::move(e));
  }
}

}  // namespace rstorm::scheduler
