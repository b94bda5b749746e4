// Builders for scheduler tests: clusters of identical nodes and topologies
// from a few lines.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/cluster.hpp"
#include "scheduler/request.hpp"
#include "scheduler/scheduler.hpp"

namespace rstorm::scheduler::testing {

// Racks named r1, r2, ... with `per_rack[i]` nodes each, named node-1, node-2, ...
// across racks, each with `memory_mb`, `cpu` and `slots` ports from 6700.
inline Cluster make_cluster(const std::vector<int>& per_rack, double memory_mb = 4096,
                            double cpu = 400, int slots = 4) {
  Cluster cluster;
  int next = 1;
  for (std::size_t r = 0; r < per_rack.size(); ++r) {
    for (int k = 0; k < per_rack[r]; ++k) {
      NodeSpec node;
      node.id = NodeId("node-" + std::to_string(next++));
      node.rack = RackId("r" + std::to_string(r + 1));
      node.memory_mb = memory_mb;
      node.cpu = cpu;
      for (int p = 0; p < slots; ++p) node.ports.push_back(kFirstSlotPort + p);
      cluster.nodes.push_back(std::move(node));
    }
  }
  return cluster;
}

inline ComponentSpec spout(std::string name, int parallelism, double cpu = 10,
                           double onheap_mb = 128) {
  ComponentSpec c;
  c.name = std::move(name);
  c.is_spout = true;
  c.parallelism = parallelism;
  c.cpu = cpu;
  c.onheap_mb = onheap_mb;
  return c;
}

inline ComponentSpec bolt(std::string name, int parallelism, double cpu = 10,
                          double onheap_mb = 128) {
  ComponentSpec c = spout(std::move(name), parallelism, cpu, onheap_mb);
  c.is_spout = false;
  return c;
}

inline TopologyRequest make_topology(
    std::string id, const std::vector<ComponentSpec>& components,
    const std::vector<std::pair<std::string, std::string>>& edges) {
  TopologyRequest request;
  request.id = TopologyId(std::move(id));
  for (const ComponentSpec& c : components) add_component(request, c);
  for (const auto& [from, to] : edges) request.edges.push_back(Edge{from, to});
  return request;
}

inline ScheduleResult schedule_ok(const Cluster& cluster,
                                  const std::vector<TopologyRequest>& requests) {
  Result<ScheduleResult> result = schedule(cluster, requests);
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
  return result.ok() ? std::move(result).value() : ScheduleResult{};
}

// Node id of each executor of a scheduled topology.
inline std::vector<std::string> nodes_of(const TopologyPlacement& p) {
  std::vector<std::string> out;
  for (const WorkerSlot& s : p.executor_slots) out.push_back(s.node.value());
  return out;
}

inline const NodeUsage& usage_of(const ScheduleResult& r, const std::string& node) {
  for (const NodeUsage& n : r.nodes) {
    if (n.node.value() == node) return n;
  }
  ADD_FAILURE() << "no node " << node;
  static NodeUsage none;
  return none;
}

}  // namespace rstorm::scheduler::testing
