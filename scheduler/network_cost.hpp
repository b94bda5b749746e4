// Network cost of a placement: communicating executor pairs counted by how far
// apart they run (see NetworkCost in placement.hpp for the exact definition).
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/placement.hpp"
#include "scheduler/request.hpp"

namespace rstorm::scheduler {

// Where one executor runs, as dense indices (any numbering unique per level).
struct ExecutorLocation {
  std::uint32_t worker = 0;
  std::uint32_t node = 0;
  std::uint32_t rack = 0;
};

// REQUIRES: locations.size() >= request.executors.size(). Linear in executors
// per edge: pairs are counted per location, never enumerated. The edges into
// fused bolts (fusion.hpp) are not counted: their tuples are calls on one thread.
NetworkCost network_cost(const TopologyRequest& request,
                         const std::vector<ExecutorLocation>& locations);

}  // namespace rstorm::scheduler
