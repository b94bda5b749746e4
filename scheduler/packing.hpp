// Start placements other than R-Storm's greedy: executors packed onto nodes in
// a given order, first fit or best fit, each executor into a worker of the
// topology on the node with heap room or else a new one. They find a
// placement where the greedy's order traps it (2 nodes of 1000 MB, executors
// of 500, 300, 400, 500, 300 MB) and consolidate onto the largest nodes. CPU
// stays soft as in the greedy: an executor goes without its CPU only when no
// node can take it with. Pure functions over a Layout; single thread.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/layout.hpp"

namespace rstorm::scheduler {

enum class PackFit {
  kFirstFit,  // the first node in the given order that can take it
  kBestFit,   // the node with the least memory left after it
};

// An executor placed without the CPU it asked (nodes are problem indices).
struct PackOvercommit {
  std::uint32_t executor = 0;
  std::uint32_t node = 0;
  double asked = 0;  // with a new worker's acker
  double free = 0;   // free CPU on the node before
};

struct PackResult {
  bool placed = false;  // every executor found a node
  std::vector<PackOvercommit> overcommits;
};

// Places every unassigned executor of `layout` in `order` over `nodes`.
PackResult pack(Layout& layout, const std::vector<std::uint32_t>& order,
                const std::vector<std::uint32_t>& nodes, PackFit fit);

// Executor orders and node orders for the starts.
std::vector<std::uint32_t> memory_decreasing(const SearchProblem& p);
// Nodes by free memory, largest first (ties by index).
std::vector<std::uint32_t> largest_nodes_first(const SearchProblem& p);
// Racks by free memory, largest first, and inside each rack its nodes largest
// first: the topology fills the biggest node, then its rack's next.
std::vector<std::uint32_t> largest_rack_then_nodes(const SearchProblem& p);

}  // namespace rstorm::scheduler
