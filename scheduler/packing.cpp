#include "scheduler/packing.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace rstorm::scheduler {
namespace {

// The worker of node n that e would join: one of the topology's with room,
// else the first empty one; kUnassigned when neither can take it.
std::uint32_t worker_on(const Layout& l, std::uint32_t n, std::uint32_t e, bool require_cpu) {
  const SearchProblem& p = l.problem();
  for (std::uint32_t w = p.first_worker[n]; w < p.first_worker[n] + p.worker_count[n]; ++w) {
    if (l.members(w) > 0 && l.can_take(e, w, require_cpu)) return w;
  }
  const std::uint32_t w = l.empty_worker(n);
  return w != kUnassigned && l.can_take(e, w, require_cpu) ? w : kUnassigned;
}

std::uint32_t choose(const Layout& l, const std::vector<std::uint32_t>& nodes, std::uint32_t e,
                     PackFit fit, bool require_cpu) {
  const SearchProblem& p = l.problem();
  std::uint32_t best = kUnassigned;
  double best_left = std::numeric_limits<double>::infinity();
  for (std::uint32_t n : nodes) {
    const std::uint32_t w = worker_on(l, n, e, require_cpu);
    if (w == kUnassigned) continue;
    if (fit == PackFit::kFirstFit) return w;
    const double left = p.free_memory[n] - l.memory_used(n) - p.memory[e];
    if (left < best_left) {
      best_left = left;
      best = w;
    }
  }
  return best;
}

}  // namespace

PackResult pack(Layout& layout, const std::vector<std::uint32_t>& order,
                const std::vector<std::uint32_t>& nodes, PackFit fit) {
  const SearchProblem& p = layout.problem();
  PackResult result;
  for (std::uint32_t e : order) {
    if (layout.worker_of(e) != kUnassigned) continue;
    std::uint32_t w = choose(layout, nodes, e, fit, /*require_cpu=*/true);
    if (w == kUnassigned) {
      w = choose(layout, nodes, e, fit, /*require_cpu=*/false);
      if (w == kUnassigned) return result;
      const std::uint32_t n = p.worker_node[w];
      const double asked = p.cpu[e] + (layout.members(w) == 0 ? p.acker_cpu : 0);
      result.overcommits.push_back({e, n, asked, p.free_cpu[n] - layout.cpu_used(n)});
    }
    layout.move(e, w);
  }
  result.placed = true;
  return result;
}

std::vector<std::uint32_t> memory_decreasing(const SearchProblem& p) {
  std::vector<std::uint32_t> order(p.executors());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return p.memory[a] != p.memory[b] ? p.memory[a] > p.memory[b] : p.cpu[a] > p.cpu[b];
  });
  return order;
}

std::vector<std::uint32_t> largest_nodes_first(const SearchProblem& p) {
  std::vector<std::uint32_t> order(p.nodes());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return p.free_memory[a] > p.free_memory[b];
  });
  return order;
}

std::vector<std::uint32_t> largest_rack_then_nodes(const SearchProblem& p) {
  std::vector<double> rack_free(p.racks, 0.0);
  for (std::uint32_t n = 0; n < p.nodes(); ++n) {
    if (p.worker_count[n] > 0) rack_free[p.rack[n]] += std::max(0.0, p.free_memory[n]);
  }
  std::vector<std::uint32_t> order = largest_nodes_first(p);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const std::uint32_t ra = p.rack[a], rb = p.rack[b];
    if (ra == rb) return false;
    return rack_free[ra] != rack_free[rb] ? rack_free[ra] > rack_free[rb] : ra < rb;
  });
  return order;
}

}  // namespace rstorm::scheduler
