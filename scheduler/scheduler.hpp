// The scheduler's entry point: a cluster and topology requests in, one
// placement per topology out. Topologies are scheduled by priority (lower
// topology.priority first, then id); each either fits whole or is left
// unplaced with a reason in numbers, and never disturbs the others. Pure and
// deterministic: the same input gives the same placement. Thread-safe (no
// shared state); callers: nimbus's scheduling loop, `rstorm schedule`, benches.
#pragma once

#include <vector>

#include "scheduler/cluster.hpp"
#include "scheduler/placement.hpp"
#include "scheduler/request.hpp"
#include "scheduler/result.hpp"

namespace rstorm::scheduler {

// An error only when the cluster itself is invalid (duplicate node ids, unknown
// slots in cluster.used); an unschedulable topology is a placement with
// scheduled == false.
Result<ScheduleResult> schedule(const Cluster& cluster,
                                const std::vector<TopologyRequest>& requests);

// The request's own faults (unknown component in an edge, negative resources,
// ...); empty when valid.
std::string validate(const TopologyRequest& request);

// Why an executor of the request can go on no node of `cluster` whatever
// else runs there: a component asking more memory per executor (with its
// worker's acker) than any node has, more on-heap than a worker's heap, or
// more of a generic resource than any node has. Empty when every executor
// fits some node. What nimbus refuses a submit for, and the dry run too.
// The message names the node with the most memory free (memory in
// cluster.used counted as taken).
std::string fit_problem(const TopologyRequest& request, const Cluster& cluster);

}  // namespace rstorm::scheduler
