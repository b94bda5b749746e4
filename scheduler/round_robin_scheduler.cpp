#include "scheduler/round_robin_scheduler.hpp"

#include <algorithm>
#include <set>

#include "scheduler/assignment_builder.hpp"

namespace rstorm::scheduler {
namespace {

std::vector<std::pair<std::uint32_t, int>> interleaved(const ClusterState& state) {
  std::vector<std::uint32_t> nodes;
  for (std::uint32_t n = 0; n < state.node_count(); ++n) {
    if (!state.node(n).free_ports.empty()) nodes.push_back(n);
  }
  std::stable_sort(nodes.begin(), nodes.end(), [&](std::uint32_t a, std::uint32_t b) {
    return state.node(a).free_ports.size() > state.node(b).free_ports.size();
  });
  std::vector<std::pair<std::uint32_t, int>> slots;
  for (std::size_t round = 0;; ++round) {
    bool any = false;
    for (std::uint32_t n : nodes) {
      const auto& ports = state.node(n).free_ports;
      if (round < ports.size()) {
        slots.emplace_back(n, ports[round]);
        any = true;
      }
    }
    if (!any) break;
  }
  return slots;
}

std::vector<std::string> overcommit_warnings(const ClusterState& state,
                                             const AssignmentBuilder& builder) {
  std::set<std::uint32_t> nodes;
  for (std::uint32_t w = 0; w < builder.worker_count(); ++w) nodes.insert(builder.worker(w).node);
  std::vector<std::string> warnings;
  for (std::uint32_t n : nodes) {
    const NodeState& node = state.node(n);
    const NodeSpec& spec = *node.spec;
    if (node.free_memory_mb < 0) {
      warnings.push_back("node " + spec.id.value() + " memory overcommitted: " +
                         format_amount(spec.memory_mb - node.free_memory_mb) + " of " +
                         format_amount(spec.memory_mb) + " MB used");
    }
    for (const auto& [name, free] : node.free_generic) {
      if (free >= 0) continue;
      const auto cap = spec.generic.find(name);
      const double capacity = cap == spec.generic.end() ? 0 : cap->second;
      warnings.push_back("node " + spec.id.value() + " " + name +
                         " overcommitted: " + format_amount(capacity - free) + " of " +
                         format_amount(capacity) + " used");
    }
    if (node.free_cpu < 0) {
      warnings.push_back("node " + spec.id.value() +
                         " CPU overcommitted: " + format_amount(spec.cpu - node.free_cpu) + " of " +
                         format_amount(spec.cpu) + " points used");
    }
  }
  return warnings;
}

}  // namespace

std::vector<WorkerSlot> interleaved_free_slots(const ClusterState& state) {
  std::vector<WorkerSlot> out;
  for (const auto& [n, port] : interleaved(state)) {
    out.push_back(WorkerSlot{state.node(n).spec->id, port});
  }
  return out;
}

TopologyPlacement schedule_round_robin(ClusterState& state, const TopologyRequest& request) {
  AssignmentBuilder builder(state, request);
  builder.keep_current();
  std::vector<std::uint32_t> lost;
  for (std::uint32_t i = 0; i < builder.executors().size(); ++i) {
    if (builder.worker_of(i) == kNoWorker) lost.push_back(i);
  }
  int moved = 0;
  if (!lost.empty()) {
    const std::uint32_t kept_workers = builder.worker_count();
    const auto free_slots = interleaved(state);
    const std::size_t wanted =
        std::max<std::int64_t>(0, static_cast<std::int64_t>(request.workers) - kept_workers);
    const std::size_t opened = std::min(wanted, free_slots.size());
    std::vector<std::uint32_t> targets;
    for (std::size_t s = 0; s < opened; ++s) {
      targets.push_back(builder.open_worker(free_slots[s].first, free_slots[s].second));
    }
    if (targets.empty()) {  // no new worker: deal to the ones the topology keeps
      for (std::uint32_t w = 0; w < kept_workers; ++w) targets.push_back(w);
    }
    if (targets.empty()) {
      TopologyPlacement failed;
      failed.topology = request.id;
      failed.strategy = request.strategy;
      failed.reason = "topology '" + request.id.value() + "' needs " +
                      std::to_string(request.workers) +
                      " worker slots; every slot of the cluster is taken";
      return failed;
    }
    for (std::size_t k = 0; k < lost.size(); ++k) {
      builder.add(lost[k], targets[k % targets.size()]);
      if (lost[k] < request.executors.size()) ++moved;  // ackers are not counted
    }
  }
  return builder.finish(overcommit_warnings(state, builder), moved);
}

}  // namespace rstorm::scheduler
