#include "scheduler/scheduler.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "scheduler/assignment_builder.hpp"
#include "scheduler/cluster_state.hpp"
#include "scheduler/fusion.hpp"
#include "scheduler/resource_aware_scheduler.hpp"
#include "scheduler/round_robin_scheduler.hpp"

namespace rstorm::scheduler {
namespace {

TopologyPlacement unscheduled(const TopologyRequest& request, std::string reason) {
  TopologyPlacement p;
  p.topology = request.id;
  p.strategy = request.strategy;
  p.reason = std::move(reason);
  return p;
}

bool kept(const TopologyRequest& request, const ClusterState& state, std::size_t i) {
  if (i >= request.current.size() || !request.current[i]) return false;
  return state.find(request.current[i]->node) != kNoNode;
}

double worker_memory_mb(const TopologyRequest& request) {
  return request.acker_executors ? 0 : request.acker_onheap_mb;
}

// An executor whose on-heap cannot fit in any worker.
std::string heap_shortfall(const TopologyRequest& request) {
  const double acker = worker_memory_mb(request);
  for (const ExecutorRequest& e : request.executors) {
    if (e.onheap_mb + acker <= request.worker_max_heap_mb) continue;
    return "component '" + e.component + "' asks " + format_amount(e.onheap_mb) +
           " MB on-heap per executor; topology.worker.max.heap.size.mb is " +
           format_amount(request.worker_max_heap_mb) +
           (acker > 0 ? " and the worker's acker takes " + format_amount(acker) + " MB of it"
                      : std::string());
  }
  return {};
}

// The executors still to place ask more memory or generic resources than the
// whole cluster has free.
std::string total_shortfall(const ClusterState& state, const TopologyRequest& request) {
  double memory = request.acker_executors.value_or(0) * request.acker_onheap_mb;
  std::map<std::string, double> generic;
  for (std::size_t i = 0; i < request.executors.size(); ++i) {
    if (kept(request, state, i)) continue;
    memory += request.executors[i].memory_mb();
    for (const auto& [name, amount] : request.executors[i].generic) generic[name] += amount;
  }
  double free_memory = 0;
  std::map<std::string, double> free_generic;
  for (std::uint32_t n = 0; n < state.node_count(); ++n) {
    free_memory += std::max(0.0, state.node(n).free_memory_mb);
    for (const auto& [name, amount] : state.node(n).free_generic) {
      free_generic[name] += std::max(0.0, amount);
    }
  }
  const std::string& id = request.id.value();
  if (memory > free_memory + 1e-9) {
    return "topology '" + id + "' asks " + format_amount(memory) +
           " MB in total; the whole cluster has " + format_amount(free_memory) + " MB free";
  }
  for (const auto& [name, amount] : generic) {
    if (amount > free_generic[name] + 1e-9) {
      return "topology '" + id + "' asks " + format_amount(amount) + " " + name +
             " in total; the whole cluster has " + format_amount(free_generic[name]) + " free";
    }
  }
  return {};
}

// Refusals that need no search: one executor larger than any worker heap, the
// topology larger than everything free, one executor larger than any node.
std::string precheck(const ClusterState& state, const TopologyRequest& request) {
  std::string fault = heap_shortfall(request);
  if (fault.empty()) fault = total_shortfall(state, request);
  std::set<std::string> checked;
  const std::string* last = nullptr;  // checked last (executors come grouped by component)
  for (std::size_t i = 0; fault.empty() && i < request.executors.size(); ++i) {
    const ExecutorRequest& e = request.executors[i];
    if (kept(request, state, i) || (last != nullptr && *last == e.component)) continue;
    last = &e.component;
    if (!checked.insert(e.component).second) continue;
    fault = largest_node_shortfall(state, e, worker_memory_mb(request));
  }
  return fault;
}

// A worker a topology runs in now, with what its kept executors and ackers
// hold there.
struct Held {
  std::uint32_t node = kNoNode;
  int port = 0;
  double memory_mb = 0;
  double cpu = 0;
  GenericResources generic;
};

// Takes the workers `request` runs in now and charges what they hold: what
// AssignmentBuilder::keep_current charges when the topology is placed, read
// back from the builder's workers so that the two cannot differ.
std::vector<Held> hold_current(ClusterState& state, const TopologyRequest& request) {
  AssignmentBuilder builder(state, request);
  builder.keep_current();
  std::vector<Held> held;
  for (std::uint32_t w = 0; w < builder.worker_count(); ++w) {
    const AssignmentBuilder::Worker& worker = builder.worker(w);
    Held h;
    h.node = worker.node;
    h.port = worker.port;
    h.memory_mb = worker.heap_mb + worker.offheap_mb;
    h.cpu = worker.cpu;
    for (std::uint32_t e : worker.executors) {
      for (const auto& [name, amount] : builder.executors()[e].generic) h.generic[name] += amount;
    }
    held.push_back(std::move(h));
  }
  return held;
}

}  // namespace

std::string fit_problem(const TopologyRequest& request, const Cluster& cluster) {
  if (cluster.nodes.empty()) return {};  // nothing to compare with yet
  std::map<std::string, double> used;
  for (const SlotUsage& u : cluster.used) used[u.slot.node.value()] += u.memory_mb;
  const NodeSpec* largest = &cluster.nodes.front();
  double largest_free = -1;
  double max_capacity = 0;
  for (const NodeSpec& n : cluster.nodes) {
    max_capacity = std::max(max_capacity, n.memory_mb);
    const double free = n.memory_mb - used[n.id.value()];
    if (free > largest_free) largest_free = free, largest = &n;
  }
  const double acker = request.acker_executors ? 0 : request.acker_onheap_mb;
  for (const ComponentSpec& c : request.components) {
    const double need = c.onheap_mb + c.offheap_mb;
    if (need + acker > max_capacity) {
      return "component '" + c.name + "' asks " + format_amount(need) +
             " MB per executor (plus " + format_amount(acker) +
             " MB for its worker's acker); the largest free node has " +
             format_amount(largest_free) + " MB (" + largest->id.value() + ", rack " +
             largest->rack.value() + "), and no node has more than " +
             format_amount(max_capacity) + " MB";
    }
    if (c.onheap_mb + acker > request.worker_max_heap_mb) {
      return "component '" + c.name + "' asks " + format_amount(c.onheap_mb) +
             " MB on-heap per executor; a worker's heap is limited to " +
             format_amount(request.worker_max_heap_mb) +
             " MB (topology.worker.max.heap.size.mb) with its acker";
    }
    for (const auto& [resource, amount] : c.generic) {
      double best = 0;
      for (const NodeSpec& n : cluster.nodes) {
        auto it = n.generic.find(resource);
        if (it != n.generic.end()) best = std::max(best, it->second);
      }
      if (amount > best) {
        return "component '" + c.name + "' asks " + format_amount(amount) + " " + resource +
               " per executor; no node has more than " + format_amount(best);
      }
    }
  }
  return {};
}

std::string validate(const TopologyRequest& request) {
  const std::string& id = request.id.value();
  if (id.empty()) return "a topology has an empty name";
  std::set<std::string> components;
  for (const ComponentSpec& c : request.components) {
    if (c.name.empty()) return "topology '" + id + "' has a component with an empty name";
    if (!components.insert(c.name).second) {
      return "topology '" + id + "' declares component '" + c.name + "' twice";
    }
  }
  const std::string* known = nullptr;  // the component of the executor before, when known
  for (const ExecutorRequest& e : request.executors) {
    if ((known == nullptr || *known != e.component) && !components.count(e.component)) {
      return "topology '" + id + "' has an executor of unknown component '" + e.component + "'";
    }
    known = &e.component;
    if (e.onheap_mb < 0 || e.offheap_mb < 0 || e.cpu < 0) {
      return "component '" + e.component + "' asks a negative amount of memory or CPU";
    }
    for (const auto& [name, amount] : e.generic) {
      if (amount < 0) return "component '" + e.component + "' asks a negative " + name;
    }
  }
  for (const Edge& edge : request.edges) {
    for (const std::string* end : {&edge.from, &edge.to}) {
      if (!components.count(*end)) {
        return "topology '" + id + "' has an edge from '" + edge.from + "' to '" + edge.to +
               "' but no component '" + *end + "'";
      }
    }
  }
  if (request.workers < 1) return "topology '" + id + "': topology.workers must be at least 1";
  if (request.worker_max_heap_mb <= 0) {
    return "topology '" + id + "': topology.worker.max.heap.size.mb must be positive";
  }
  if (request.acker_executors && *request.acker_executors < 0) {
    return "topology '" + id + "': topology.acker.executors must not be negative";
  }
  const std::size_t with_ackers =
      request.executors.size() + static_cast<std::size_t>(request.acker_executors.value_or(0));
  if (!request.current.empty() && request.current.size() != request.executors.size() &&
      request.current.size() != with_ackers) {
    return "topology '" + id + "': the current assignment has " +
           std::to_string(request.current.size()) + " executors, the request " +
           std::to_string(request.executors.size()) +
           (with_ackers != request.executors.size()
                ? " (" + std::to_string(with_ackers) + " with its ackers)"
                : std::string());
  }
  return {};
}

Result<ScheduleResult> schedule(const Cluster& cluster,
                                const std::vector<TopologyRequest>& requests) {
  Result<ClusterState> created = ClusterState::Create(cluster);
  if (!created) return created.error();
  ClusterState state = std::move(created).value();
  std::vector<std::size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (requests[a].priority != requests[b].priority) {
      return requests[a].priority < requests[b].priority;
    }
    return natural_less(requests[a].id.value(), requests[b].id.value());
  });
  // The slots a topology runs in now, and the memory, CPU and generic
  // resources its executors and ackers there hold, stay its own while the
  // others are placed: one placed before it must neither take them (its
  // workers there would be stopped and its executors moved only because
  // another topology came) nor count on what they hold (the node would end
  // over its capacity once the kept executors are charged).
  std::vector<std::vector<Held>> held(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) held[i] = hold_current(state, requests[i]);
  ScheduleResult result;
  result.topologies.resize(requests.size());
  std::set<std::string> seen;
  for (std::size_t index : order) {
    const TopologyRequest& request = requests[index];
    std::string fault = validate(request);
    if (fault.empty() && !seen.insert(request.id.value()).second) {
      fault = "topology '" + request.id.value() + "' is submitted twice";
    }
    ClusterState trial = state;  // committed only if the whole topology fits
    for (const Held& h : held[index]) {
      trial.release_port(h.node, h.port);
      trial.charge(h.node, h.memory_mb, h.cpu, h.generic, -1);
    }
    // Fused chains are placed as units (fusion.hpp).
    const std::optional<FusedRequest> fused = fault.empty() ? fuse(request) : std::nullopt;
    const TopologyRequest& placed = fused ? fused->merged : request;
    if (fault.empty() && request.strategy == Strategy::kResourceAware) {
      fault = precheck(trial, placed);
    }
    if (!fault.empty()) {
      result.topologies[index] = unscheduled(request, std::move(fault));
      continue;
    }
    TopologyPlacement placement = request.strategy == Strategy::kRoundRobin
                                      ? schedule_round_robin(trial, placed)
                                      : schedule_resource_aware(trial, placed);
    if (fused) placement = unfuse(std::move(placement), *fused, request);
    if (placement.scheduled) state = std::move(trial);
    result.topologies[index] = std::move(placement);
  }
  result.nodes = state.usage();
  return result;
}

}  // namespace rstorm::scheduler
