// Improvement after a start placement: a bounded, deterministic local search
// over a Layout that moves one executor, swaps two, moves a whole worker, or
// moves every executor of the topology on one node to another node. A move is
// taken only when it lowers the network cost, keeps every hard limit (node
// memory, worker heap, slots, generic resources) and does not raise any node's
// CPU overcommit. Fixed (kept) executors never move. Single thread.
#pragma once

#include <cstdint>

#include "scheduler/layout.hpp"

namespace rstorm::scheduler {

struct LocalSearchStats {
  std::uint64_t evaluations = 0;  // candidate moves evaluated
  std::uint32_t moves = 0;        // moves taken
};

// Improves `layout` (REQUIRES: every executor assigned, every node within its
// hard limits) until no move lowers the cost or `max_evaluations` candidate
// moves were evaluated. The same layout and budget give the same result.
LocalSearchStats improve_layout(Layout& layout, std::uint64_t max_evaluations);

}  // namespace rstorm::scheduler
