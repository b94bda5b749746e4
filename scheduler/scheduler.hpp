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

}  // namespace rstorm::scheduler
