// Fused chains as the scheduler sees them. With topology.fuse.executors a
// worker runs a bolt B on its producer A's threads when B's only input is A by
// local-or-shuffle, B has as many executors as A and no tick tuples, no input
// of A is global or direct (Edge::uneven), and the worker holds as many
// executors of A as of B (worker/src/topology_runtime.cpp
// decides, per worker). The scheduler makes that happen: executor i of B is
// placed in the worker of executor i of A, the two (or a whole chain, or a
// producer with several such bolts) placed as one unit with the summed
// resources. Plain functions on values; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/placement.hpp"
#include "scheduler/request.hpp"

namespace rstorm::scheduler {

// Every fused component of `request` -> the component it runs on the threads
// of (its producer). Empty when request.fuse_executors is off.
std::map<std::string, std::string> fused_components(const TopologyRequest& request);

// A request with one executor per unit: executor i of a chain's head with
// executor i of every component fused into it (directly or down a chain). A
// unit's component is named after its components joined by '+' ("spout+split"),
// so a refusal names all of them.
struct FusedRequest {
  TopologyRequest merged;
  std::vector<std::uint32_t> unit_of;               // executor of the request -> unit
  std::vector<std::vector<std::uint32_t>> members;  // unit -> executors of the request, ascending
  std::vector<std::uint32_t> head;                  // unit -> its head's executor in the request
};

// nullopt when nothing in `request` is fused.
std::optional<FusedRequest> fuse(const TopologyRequest& request);

// A placement of `fused.merged` as one of `request`: each executor in its
// unit's slot; decisions and overcommits name the unit's head. The network
// cost stays the merged request's: pairs inside a unit are function calls on
// one thread, not messages.
TopologyPlacement unfuse(TopologyPlacement placement, const FusedRequest& fused,
                         const TopologyRequest& request);

}  // namespace rstorm::scheduler
