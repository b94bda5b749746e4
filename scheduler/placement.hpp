// What the scheduler decides: executor -> worker slot per topology, what every
// worker and node then uses, and the network cost of the placement. Plain
// values, thread-compatible.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/cluster.hpp"
#include "scheduler/ids.hpp"
#include "scheduler/request.hpp"

namespace rstorm::scheduler {

// Communicating executor pairs by how far apart they are. For every edge
// between two components (duplicates counted once) every ordered pair
// (producer executor, consumer executor) is one pair; for an edge from a
// component to itself, pairs of two distinct executors. Ackers are not counted.
struct NetworkCost {
  std::uint64_t same_worker = 0;
  std::uint64_t same_node = 0;  // same node, different workers
  std::uint64_t same_rack = 0;  // same rack, different nodes
  std::uint64_t cross_rack = 0;

  std::uint64_t pairs() const { return same_worker + same_node + same_rack + cross_rack; }
  // The distances of the algorithm: 0 in-process, 1 same node, 2 same rack, 3 across racks.
  std::uint64_t weighted() const { return same_node + 2 * same_rack + 3 * cross_rack; }
  friend bool operator==(const NetworkCost&, const NetworkCost&) = default;
};

struct WorkerAssignment {
  WorkerSlot slot;
  RackId rack;
  std::vector<ExecutorId> executors;  // ascending
  int ackers = 0;                     // acker executors in this worker
  double heap_mb = 0;                 // on-heap, ackers included
  double offheap_mb = 0;
  double cpu = 0;
};

// An executor placed on a node without the CPU it asks: done only when no
// node that can take it (memory, slots, generic resources) has the CPU free.
struct CpuOvercommit {
  ExecutorId executor;  // past the request's executors: an explicit acker
  NodeId node;
  double asked = 0;  // CPU points, with a new worker's acker when one was opened
  double free = 0;   // CPU points free on the node before (may be negative)
  // Known for the greedy's overcommits (otherwise most_free is -infinity):
  // the executor's own CPU points, the most any node that has a worker slot
  // or a worker of the topology had free then, and what a new worker's
  // acker adds. A node with the executor's CPU free can still not take it
  // (the acker's CPU, memory, heap): the warning says which.
  double executor_cpu = 0;
  double most_free = -std::numeric_limits<double>::infinity();
  double new_worker_cpu = 0;
};

// One resource-aware decision: where an executor went and the normalised
// terms of its distance there, taken before the node was charged. distance =
// sqrt(memory^2 + cpu^2 + network^2); the node chosen had the smallest.
struct PlacementDecision {
  ExecutorId executor;  // past the request's executors: an explicit acker
  WorkerSlot slot;
  double memory = 0;   // (free memory - needed) / largest node memory
  double cpu = 0;      // (free CPU - needed) / largest node CPU; negative: overcommitted
  double network = 0;  // from the previous executor's node: 0 same node, 0.5 same rack, 2 other
  bool new_worker = false;  // the executor opened a worker (and its acker)
};

// How good a resource-aware placement is, in NetworkCost::weighted() units.
struct PlacementQuality {
  bool greedy_placed = false;     // R-Storm's greedy found a placement
  std::uint64_t greedy_cost = 0;  // its cost, when it did
  std::uint64_t final_cost = 0;   // the cost of the placement returned
  // The lowest cost any placement can have (the exact solver's proven optimum
  // when `optimal`, else a cheap bound); nullopt when not computed.
  std::optional<std::uint64_t> lower_bound;
  bool optimal = false;   // lower_bound is the proven optimum
  std::string start;      // where the returned placement started ("greedy", ...)
  bool is_greedy = true;  // the placement is the greedy's unchanged (its decisions led to it)
  std::uint64_t evaluations = 0;  // local search: candidate moves evaluated
  std::uint32_t moves = 0;        // local search: moves taken
};

struct TopologyPlacement {
  TopologyId topology;
  Strategy strategy = Strategy::kResourceAware;
  bool scheduled = false;
  std::string reason;                      // why not, in numbers, when !scheduled
  std::vector<WorkerSlot> executor_slots;  // index = ExecutorId, when scheduled
  // With topology.acker.executors set: where acker i (task -1-i) runs. Empty
  // with one acker per worker (each worker of `workers` has its own).
  std::vector<WorkerSlot> acker_slots;
  std::vector<WorkerAssignment> workers;   // sorted by slot
  NetworkCost network;
  std::vector<std::string> warnings;           // CPU overcommit, round-robin memory overcommit
  std::vector<CpuOvercommit> cpu_overcommits;  // resource-aware only
  // Resource-aware only: the greedy's, in placement order, also when the
  // search then changed the placement (quality.is_greedy says which).
  std::vector<PlacementDecision> decisions;
  int moved_executors = 0;   // executors (not ackers) given a new slot by this call
  PlacementQuality quality;  // resource-aware only
};

struct NodeUsage {
  NodeId node;
  std::string host;
  RackId rack;
  double memory_used_mb = 0;
  double memory_capacity_mb = 0;
  double cpu_used = 0;
  double cpu_capacity = 0;
  GenericResources generic_used;
  GenericResources generic_capacity;
  int slots_used = 0;
  int slots_total = 0;
};

struct ScheduleResult {
  std::vector<TopologyPlacement> topologies;  // in the order of the requests
  std::vector<NodeUsage> nodes;               // every node, racks and ids in natural order
};

}  // namespace rstorm::scheduler
