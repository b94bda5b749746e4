// ClusterState: the cluster as the schedulers work on it: nodes by dense index
// in natural id order, racks, and what is free on each node. Schedulers charge
// and release resources here; a trial copy is committed only when a whole
// topology fits. Thread-compatible (one scheduling call owns it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/cluster.hpp"
#include "scheduler/placement.hpp"
#include "scheduler/result.hpp"

namespace rstorm::scheduler {

inline constexpr std::uint32_t kNoNode = UINT32_MAX;

struct NodeState {
  const NodeSpec* spec = nullptr;  // borrowed from the Cluster given to Create
  std::uint32_t rack = 0;
  double free_memory_mb = 0;  // negative only after a blind (round-robin) placement
  double free_cpu = 0;        // negative when overcommitted
  GenericResources free_generic;
  std::vector<int> free_ports;  // ascending
};

class ClusterState {
 public:
  // Validates the cluster (unique node ids, ports, known slots in `used`) and
  // charges what `used` takes. The cluster must outlive the state.
  static Result<ClusterState> Create(const Cluster& cluster);

  std::uint32_t node_count() const { return static_cast<std::uint32_t>(nodes_.size()); }
  const NodeState& node(std::uint32_t n) const { return nodes_[n]; }
  std::uint32_t rack_count() const { return static_cast<std::uint32_t>(racks_.size()); }
  const RackId& rack_id(std::uint32_t r) const { return racks_[r].id; }
  const std::vector<std::uint32_t>& rack_nodes(std::uint32_t r) const { return racks_[r].nodes; }
  // Dense index of a node id; kNoNode when unknown.
  std::uint32_t find(const NodeId& id) const;
  // The largest node memory and CPU capacities (the normalisation scales).
  double max_memory_mb() const { return max_memory_mb_; }
  double max_cpu() const { return max_cpu_; }

  // REQUIRES: `port` is free on node n.
  void take_port(std::uint32_t n, int port);
  // Makes `port` (a slot of node n) free again. REQUIRES: it was taken.
  void release_port(std::uint32_t n, int port);
  // Adds (sign +1) or returns (sign -1) resources on node n.
  void charge(std::uint32_t n, double memory_mb, double cpu, const GenericResources& generic,
              int sign = 1);
  bool has_port(std::uint32_t n, int port) const;

  // Used against capacity for every node, in index order.
  std::vector<NodeUsage> usage() const;

 private:
  struct Rack {
    RackId id;
    std::vector<std::uint32_t> nodes;  // ascending index
  };
  std::vector<NodeState> nodes_;
  std::vector<Rack> racks_;
  std::vector<std::pair<std::string, std::uint32_t>> by_id_;  // sorted by id
  double max_memory_mb_ = 1;
  double max_cpu_ = 1;
};

// "4096", or "12.5" when not whole.
std::string format_amount(double value);

}  // namespace rstorm::scheduler
