#include "scheduler/exact_search.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

#include "scheduler/packing.hpp"

namespace rstorm::scheduler {
namespace {

class BranchAndBound {
 public:
  BranchAndBound(Layout layout, std::int64_t incumbent, std::uint64_t budget)
      : l_(std::move(layout)), p_(l_.problem()), budget_(budget) {
    result_.cost = incumbent;
    // Largest first: capacity prunes early; the fixed are already placed.
    for (std::uint32_t e : memory_decreasing(p_)) {
      if (!p_.fixed[e]) order_.push_back(e);
    }
    for (std::uint32_t e : order_) l_.move(e, kUnassigned);
  }

  ExactResult run() {
    dfs(0);
    result_.proven = !aborted_;
    return result_;
  }

 private:
  bool node_empty(std::uint32_t n) const {
    for (std::uint32_t w = p_.first_worker[n]; w < p_.first_worker[n] + p_.worker_count[n]; ++w) {
      if (l_.members(w) > 0) return false;
    }
    return true;
  }

  bool alike(std::uint32_t a, std::uint32_t b) const {
    return p_.rack[a] == p_.rack[b] && p_.free_memory[a] == p_.free_memory[b] &&
           p_.free_cpu[a] == p_.free_cpu[b] && p_.free_generic[a] == p_.free_generic[b] &&
           p_.worker_count[a] == p_.worker_count[b];
  }

  // Executors of one component with the same resources are interchangeable.
  bool twins(std::uint32_t a, std::uint32_t b) const {
    return p_.component[a] == p_.component[b] && p_.memory[a] == p_.memory[b] &&
           p_.onheap[a] == p_.onheap[b] && p_.cpu[a] == p_.cpu[b] && p_.generic[a] == p_.generic[b];
  }

  // Every distinct worker e can join now, with the cost it adds, cheapest
  // first; workers below `lowest` are left out (e's twin placed before it is
  // there: twins go to workers in ascending order, which loses no placement
  // since swapping two twins changes no worker's contents).
  std::vector<std::pair<std::int64_t, std::uint32_t>> choices(std::uint32_t e,
                                                              std::uint32_t lowest) const {
    std::vector<std::pair<std::int64_t, std::uint32_t>> out;
    std::vector<std::uint32_t> empty_nodes;
    for (std::uint32_t n = 0; n < p_.nodes(); ++n) {
      if (node_empty(n)) {
        bool twin = false;
        for (std::uint32_t m : empty_nodes) twin |= alike(m, n);
        if (twin) continue;
        empty_nodes.push_back(n);
      }
      for (std::uint32_t w = p_.first_worker[n]; w < p_.first_worker[n] + p_.worker_count[n]; ++w) {
        if (w < lowest || (l_.members(w) == 0 && w != l_.empty_worker(n))) continue;
        if (l_.can_take(e, w, /*require_cpu=*/true)) out.emplace_back(l_.cost_at(e, w), w);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // The cost so far plus, for every executor still to place, its cheapest
  // pairs with the placed ones (pairs among the unplaced count 0): no
  // completion costs less.
  std::int64_t bound(std::size_t k) const {
    std::int64_t total = l_.cost();
    for (std::size_t i = k; i < order_.size(); ++i) {
      std::int64_t cheapest = std::numeric_limits<std::int64_t>::max();
      for (std::uint32_t n = 0; n < p_.nodes() && cheapest > 0; ++n) {
        for (std::uint32_t w = p_.first_worker[n]; w < p_.first_worker[n] + p_.worker_count[n];
             ++w) {
          if (l_.members(w) == 0 && w != l_.empty_worker(n)) continue;
          cheapest = std::min(cheapest, l_.cost_at(order_[i], w));
        }
      }
      if (cheapest != std::numeric_limits<std::int64_t>::max()) total += cheapest;
    }
    return total;
  }

  void dfs(std::size_t k) {
    if (++result_.search_nodes > budget_) {
      aborted_ = true;
      return;
    }
    if (k < order_.size() && k > 0 && bound(k) >= result_.cost) return;
    if (k == order_.size()) {
      if (l_.cost() < result_.cost) {
        result_.cost = l_.cost();
        result_.assignment = l_.assignment();
        result_.improved = true;
      }
      return;
    }
    const std::uint32_t e = order_[k];
    const bool twin = k > 0 && twins(order_[k - 1], e);
    for (const auto& [added, w] : choices(e, twin ? l_.worker_of(order_[k - 1]) : 0)) {
      if (l_.cost() + added >= result_.cost) break;  // the rest cost as much or more
      l_.move(e, w);
      dfs(k + 1);
      l_.move(e, kUnassigned);
      if (aborted_) return;
    }
  }

  Layout l_;
  const SearchProblem& p_;
  const std::uint64_t budget_;
  std::vector<std::uint32_t> order_;
  ExactResult result_;
  bool aborted_ = false;
};

}  // namespace

ExactResult solve_exact(const Layout& start, std::int64_t incumbent_cost,
                        const ExactOptions& options) {
  return BranchAndBound(start, incumbent_cost, options.max_search_nodes).run();
}

}  // namespace rstorm::scheduler
