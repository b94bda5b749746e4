// The order in which the resource-aware scheduler places executors: a
// breadth-first walk of the component graph from the spouts, then executors
// interleaved across the ordered components so that neighbours are placed one
// after the other. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/request.hpp"

namespace rstorm::scheduler {

// Components in breadth-first order from the spouts (by name), edges taken both
// ways; components no spout reaches follow, walked the same way from the first
// unvisited by name.
std::vector<std::string> component_order(const TopologyRequest& request);

// Indices into `executors` in placement order: one executor per ordered
// component per pass, so neighbours are placed next to each other; executors
// of components outside the graph (explicit ackers) last.
std::vector<std::uint32_t> executor_order(const TopologyRequest& request,
                                          const std::vector<ExecutorRequest>& executors);

}  // namespace rstorm::scheduler
