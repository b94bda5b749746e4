// R-Storm, the resource-aware strategy (Peng et al., Middleware 2015): executors
// in breadth-first component order, each placed on the node nearest to it in
// normalised (memory, CPU, network) space. Memory, slots and generic resources
// are hard limits; CPU is soft. See README.md for the normalisation. Pure
// functions over the state they are given; single thread.
#pragma once

#include <cstdint>
#include <string>
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

// Places the topology's executors (keeping those of request.current whose slot
// still exists). On failure returns the placement with scheduled == false and
// a reason; `state` is then partly charged and must be discarded (callers work
// on a trial copy).
TopologyPlacement schedule_resource_aware(ClusterState& state, const TopologyRequest& request,
                                          SearchMode mode = SearchMode::kIndexed);

}  // namespace rstorm::scheduler
