// R-Storm, the resource-aware strategy (Peng et al., Middleware 2015): executors
// in breadth-first component order, each placed on the node nearest to it in
// normalised (memory, CPU, network) space. Memory, slots and generic resources
// are hard limits; CPU is soft. See README.md for the normalisation. Pure
// functions over the state they are given; single thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/assignment_builder.hpp"
#include "scheduler/cluster_state.hpp"
#include "scheduler/placement.hpp"
#include "scheduler/request.hpp"

namespace rstorm::scheduler {

// Why `e` cannot go on any node of `state` even when empty-handed (memory or a
// generic resource larger than the largest free node); empty when it could.
std::string largest_node_shortfall(const ClusterState& state, const ExecutorRequest& e,
                                   double worker_memory_mb);

// kIndexed walks the reference rack, then other racks by free memory with a
// bound; kExhaustive evaluates every node for every executor (the definition,
// kept to check that the index changes nothing).
enum class SearchMode { kIndexed, kExhaustive };

struct GreedyOptions {
  // How nodes are searched; the placement is the same either way. Default indexed.
  SearchMode mode = SearchMode::kIndexed;
  // The rack of the first executor; default (nullopt) the rack with the most
  // free memory and CPU, as in R-Storm.
  std::optional<std::uint32_t> start_rack;
};

// R-Storm's greedy alone: places the topology's executors (keeping those of
// request.current whose slot still exists). On failure returns the placement
// with scheduled == false and a reason about the state it stopped in; `state`
// is then partly charged and must be discarded (callers work on a trial copy).
// When placed and `slots` is given, it receives (node, port) of every executor
// of the builder (the request's, then explicit ackers).
TopologyPlacement schedule_greedy(ClusterState& state, const TopologyRequest& request,
                                  const GreedyOptions& options = {},
                                  std::vector<std::pair<std::uint32_t, int>>* slots = nullptr);

// R-Storm's greedy, then the placement search (placement_search.cpp): several
// starts, a bounded local search, the exact solver on small instances, other
// packing orders before refusing. On success `state` is charged with the
// placement; on failure it must be discarded. The reason of a refusal
// describes the cluster as it was before the call.
TopologyPlacement schedule_resource_aware(ClusterState& state, const TopologyRequest& request,
                                          SearchMode mode = SearchMode::kIndexed);

// The warnings of `overcommits`, one per component in the order of their
// first overcommit (`executors`: the request's, ackers after them, as
// AssignmentBuilder::executors), each executor named as the placement lists
// it (executor_label). One executor: "executor split[4] overcommits CPU on
// node-2: asks 50 points, 20 free; no node that can take it has that much
// CPU free". Several: "4 executors of 'split' overcommit CPU, as no node
// that can take them has that much free: split[4] on node-2 asks 50 points,
// 20 free; ...", the first kOvercommitsListed of them and how many more (a
// cluster short of CPU would otherwise get a warning per executor;
// cpu_overcommits keeps every one).
inline constexpr std::size_t kOvercommitsListed = 5;
std::vector<std::string> overcommit_warnings(const std::vector<CpuOvercommit>& overcommits,
                                             const std::vector<ExecutorRequest>& executors);

}  // namespace rstorm::scheduler
