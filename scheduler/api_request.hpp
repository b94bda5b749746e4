// Converts the topology API's structure (rstorm::TopologySpec and the
// topology's rstorm::Config) into the scheduler's TopologyRequest, and applies
// topology config keys to a request. Header-only on purpose: the
// rstorm::scheduler library does not link the topology API; callers that have
// both (the `rstorm` CLI, nimbus) include this and link rstorm::api
// themselves. Stateless, thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <rstorm/config.hpp>
#include <rstorm/topology.hpp>
#include <string>

#include "scheduler/request.hpp"
#include "scheduler/result.hpp"

namespace rstorm::scheduler {

// Reads the scheduling keys present in `config` into `request`:
// topology.workers, topology.worker.max.heap.size.mb, topology.priority,
// topology.acker.executors (null: one per worker),
// topology.acker.resources.onheap.memory.mb, topology.acker.cpu.pcore.percent,
// topology.scheduler.strategy, topology.scheduler.improve.max.evaluations,
// topology.scheduler.exact.max.executors, topology.fuse.executors (off with
// topology.state.checkpointing). A wrong type or value is an
// Error naming the key and where it came from.
inline Result<TopologyRequest> apply_topology_config(TopologyRequest request,
                                                     const rstorm::Config& config) {
  try {
    if (config.contains("topology.workers")) {
      request.workers = static_cast<int>(config.get_int("topology.workers"));
    }
    if (config.contains("topology.worker.max.heap.size.mb")) {
      request.worker_max_heap_mb = config.get_double("topology.worker.max.heap.size.mb");
    }
    if (config.contains("topology.priority")) {
      request.priority = static_cast<int>(config.get_int("topology.priority"));
    }
    if (const auto* acker = config.find("topology.acker.executors")) {
      if (acker->value.is_null()) {
        request.acker_executors.reset();
      } else {
        request.acker_executors = static_cast<int>(config.get_int("topology.acker.executors"));
      }
    }
    if (config.contains("topology.acker.resources.onheap.memory.mb")) {
      request.acker_onheap_mb = config.get_double("topology.acker.resources.onheap.memory.mb");
    }
    if (config.contains("topology.acker.cpu.pcore.percent")) {
      request.acker_cpu = config.get_double("topology.acker.cpu.pcore.percent");
    }
    if (config.contains("topology.scheduler.improve.max.evaluations")) {
      request.improve_max_evaluations = static_cast<std::uint64_t>(
          std::max<std::int64_t>(0, config.get_int("topology.scheduler.improve.max.evaluations")));
    }
    if (config.contains("topology.scheduler.exact.max.executors")) {
      request.exact_max_executors = static_cast<int>(
          std::max<std::int64_t>(0, config.get_int("topology.scheduler.exact.max.executors")));
    }
    if (config.contains("topology.fuse.executors")) {
      request.fuse_executors = config.get_bool("topology.fuse.executors");
    }
    // Workers do not fuse a checkpointing topology (a fused member has no
    // queue to hold input in while a barrier is aligned).
    if (const auto* cp = config.find("topology.state.checkpointing");
        cp != nullptr && !cp->value.is_null() && config.get_bool("topology.state.checkpointing")) {
      request.fuse_executors = false;
    }
    if (config.contains("topology.scheduler.strategy")) {
      const std::string name = config.get_string("topology.scheduler.strategy");
      const auto strategy = parse_strategy(name);
      if (!strategy) {
        return Error{"topology.scheduler.strategy (" +
                     config.find("topology.scheduler.strategy")->origin + "): unknown strategy '" +
                     name + "' (resource-aware, round-robin)"};
      }
      request.strategy = *strategy;
    }
  } catch (const rstorm::ConfigError& e) {
    return Error{e.what()};
  }
  return request;
}

// Whether a component's executors get tick tuples: topology.tick.tuple.freq.secs
// over 0 in its own config, else in the topology's. Throws rstorm::ConfigError.
inline bool gets_ticks(const rstorm::Config& component, const rstorm::Config& topology) {
  constexpr std::string_view key = rstorm::keys::kTopologyTickTupleFreqSecs;
  const rstorm::Config& c = component.contains(key) ? component : topology;
  const auto* entry = c.find(key);
  return entry != nullptr && !entry->value.is_null() && c.get_int(key) > 0;
}

// The request for topology `name` built by the API: one executor per unit of
// parallelism with the component's resources, one edge per input.
inline Result<TopologyRequest> request_from_topology(const std::string& name,
                                                     const rstorm::TopologySpec& spec,
                                                     const rstorm::Config& config) {
  TopologyRequest request;
  request.id = TopologyId(name);
  for (const rstorm::ComponentSpec& c : spec.components) {
    ComponentSpec component;
    component.name = c.id;
    component.is_spout = c.kind == rstorm::ComponentKind::kSpout;
    component.parallelism = c.parallelism;
    component.tasks = c.num_tasks;
    component.onheap_mb = c.resources.onheap_mb;
    component.offheap_mb = c.resources.offheap_mb;
    component.cpu = c.resources.cpu_points;
    component.generic = GenericResources(c.resources.generic.begin(), c.resources.generic.end());
    try {
      component.ticks = gets_ticks(c.config, config);
    } catch (const rstorm::ConfigError& e) {
      return Error{"component '" + c.id + "': " + e.what()};
    }
    add_component(request, component);
    for (const rstorm::InputSpec& input : c.inputs) {
      const rstorm::GroupingType g = input.grouping.type;
      request.edges.push_back(Edge{input.component, c.id, g == rstorm::GroupingType::kLocalOrShuffle,
                                   rstorm::spreads_unevenly(g)});
    }
  }
  return apply_topology_config(std::move(request), config);
}

}  // namespace rstorm::scheduler
