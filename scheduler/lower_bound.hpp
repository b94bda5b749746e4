// A cheap lower bound on the network cost of any placement of one topology
// (NetworkCost::weighted(): each communicating pair costs 1 for leaving its
// worker, 1 more for leaving its node, 1 more for leaving its rack).
//
// For each level (worker, node, rack) the pairs split across units of that
// level are at least half the sum, over executors x, of x's pairs minus the
// most pairs x can have inside one unit: the partners that fit in the unit's
// capacity (a worker's heap; the largest node's, or rack's, free memory,
// heap in its free slots and, optionally, free CPU), chosen by a fractional
// knapsack per dimension (pairs per MB or point, best first), which can only
// overestimate what fits. Exact when every executor's partners fit
// beside it or none do; loose when capacity, not graph shape, decides.
// O(groups² log groups) per level, groups being the distinct (component,
// memory) of the topology's executors.
#pragma once

#include <cstdint>
#include <optional>

#include "scheduler/layout.hpp"

namespace rstorm::scheduler {

// The bound over every placement on `p`'s candidate nodes (`within_cpu`:
// every placement that asks no node for more CPU than it has free, as the
// exact solver's optimum); nullopt when some executor is kept where it runs
// (the bound assumes every one may move).
std::optional<std::uint64_t> network_cost_lower_bound(const SearchProblem& p, bool within_cpu);

}  // namespace rstorm::scheduler
