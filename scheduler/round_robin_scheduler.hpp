// Storm's default even scheduler, the baseline of every comparison: takes
// topology.workers free slots interleaved across nodes (the nodes with most
// free slots first) and deals executors to them in turn. Blind to memory and
// CPU: it charges them and reports overcommit as warnings. Single thread.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/cluster_state.hpp"
#include "scheduler/placement.hpp"
#include "scheduler/request.hpp"

namespace rstorm::scheduler {

// Every free slot, interleaved: the first free port of each node, then the
// second, ...; nodes with more free slots first, then by id.
std::vector<WorkerSlot> interleaved_free_slots(const ClusterState& state);

TopologyPlacement schedule_round_robin(ClusterState& state, const TopologyRequest& request);

}  // namespace rstorm::scheduler
