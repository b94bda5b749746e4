// The exact placement of a small topology: a depth-first branch and bound over
// executor -> worker that tries the cheapest placements first and prunes any
// partial placement already as costly as the best known. Symmetric choices are
// tried once: of a node's empty workers only the first, of empty nodes alike
// (rack, free resources, slots) only the first. It minimises the network cost
// among placements that meet every hard limit and use no CPU beyond what is
// free. Bounded by a count of search nodes, so deterministic. Single thread.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/layout.hpp"

namespace rstorm::scheduler {

// At most this many candidate nodes for the exact solver (see
// topology.scheduler.exact.max.executors).
inline constexpr std::uint32_t kExactMaxNodes = 8;

struct ExactOptions {
  // Search nodes visited at most; past it the best found is returned unproven.
  // Default 2,000,000 (about a second on the bench machine, worst case).
  std::uint64_t max_search_nodes = 2'000'000;
};

struct ExactResult {
  bool improved = false;                  // found a placement cheaper than the incumbent
  bool proven = false;                    // the search finished: `cost` is the optimum
  std::int64_t cost = 0;                  // the best cost known (the incumbent's when !improved)
  std::vector<std::uint32_t> assignment;  // executor -> worker, when improved
  std::uint64_t search_nodes = 0;
};

// `start` holds the fixed executors (and nothing else, or a full placement
// whose cost is the incumbent); `incumbent_cost` is the cost to beat (pass a
// full placement's cost, or INT64_MAX when none is known).
ExactResult solve_exact(const Layout& start, std::int64_t incumbent_cost,
                        const ExactOptions& options = {});

}  // namespace rstorm::scheduler
