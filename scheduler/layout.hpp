// The compact model the placement searches (local search, packing starts, the
// exact solver) work on: one topology's executors, the candidate nodes with
// what was free before the topology, and every worker the topology could open
// there (one per free port). A Layout is one assignment executor -> worker with
// everything it charges and its network cost, updated in O(neighbouring
// components) per executor move. Single thread; a Layout borrows its problem.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/cluster_state.hpp"
#include "scheduler/request.hpp"

namespace rstorm::scheduler {

inline constexpr std::uint32_t kUnassigned = UINT32_MAX;

// REQUIRES (for every field): built by SearchProblem::Build; read-only after.
struct SearchProblem {
  // Executors: the request's, then explicit ackers (AssignmentBuilder's order).
  std::vector<double> memory, onheap, cpu;
  std::vector<std::vector<double>> generic;  // [executor][generic name index]
  std::vector<std::uint32_t> component;      // dense component index
  std::vector<char> fixed;                   // kept where it runs (rescheduling)
  std::vector<std::uint32_t> fixed_worker;   // worker of a fixed executor
  // Per component: neighbouring components with the number of distinct edges
  // between them (c->d and d->c count apart; c->c counts 2: both directions).
  std::vector<std::vector<std::pair<std::uint32_t, int>>> adjacent;
  std::vector<std::uint32_t> component_size;
  // Candidate nodes (state index, rack, what was free before this topology).
  std::vector<std::uint32_t> state_node;
  std::vector<std::uint32_t> rack;  // dense rack index
  std::vector<double> free_memory, free_cpu;
  std::vector<std::vector<double>> free_generic;  // [node][generic name index]
  std::vector<std::uint32_t> first_worker;        // node's workers: first_worker[n] ..
  std::vector<std::uint32_t> worker_count;        //   .. + worker_count[n]
  // Workers: one per free port of a candidate node.
  std::vector<std::uint32_t> worker_node;
  std::vector<int> worker_port;
  std::uint32_t racks = 0;
  double max_heap_mb = 0;
  double acker_memory_mb = 0;  // a worker's own acker (0 with explicit ackers)
  double acker_cpu = 0;

  std::uint32_t executors() const { return static_cast<std::uint32_t>(memory.size()); }
  std::uint32_t nodes() const { return static_cast<std::uint32_t>(state_node.size()); }
  std::uint32_t workers() const { return static_cast<std::uint32_t>(worker_node.size()); }

  // `base` is the cluster before the topology (its held ports released);
  // `executors` the builder's list; `fixed_slots[i]` the slot executor i keeps
  // (node index, port) or node kNoNode; `candidates` the state nodes the
  // search may use (must include the fixed executors' nodes), ascending.
  static SearchProblem Build(const ClusterState& base, const TopologyRequest& request,
                             const std::vector<ExecutorRequest>& executors,
                             const std::vector<std::pair<std::uint32_t, int>>& fixed_slots,
                             const std::vector<std::uint32_t>& candidates);
};

class Layout {
 public:
  // Every executor unassigned except the fixed ones.
  explicit Layout(const SearchProblem& problem);

  const SearchProblem& problem() const { return *p_; }
  std::uint32_t worker_of(std::uint32_t e) const { return worker_of_[e]; }
  std::uint32_t node_of_worker(std::uint32_t w) const { return p_->worker_node[w]; }
  std::int64_t cost() const { return cost_; }  // NetworkCost::weighted() of the placed
  std::uint32_t members(std::uint32_t w) const { return members_[w]; }
  double heap(std::uint32_t w) const { return heap_[w]; }
  double memory_used(std::uint32_t n) const { return memory_used_[n]; }
  double cpu_used(std::uint32_t n) const { return cpu_used_[n]; }
  const std::vector<std::uint32_t>& assignment() const { return worker_of_; }

  // Moves (or first places, or with kUnassigned takes out) executor e; returns
  // the change of cost(). Charges without checking: callers check after.
  std::int64_t move(std::uint32_t e, std::uint32_t w);
  // Cost of e's pairs with the placed executors if e were in worker w (e not
  // counted; REQUIRES: e unassigned).
  std::int64_t cost_at(std::uint32_t e, std::uint32_t w) const;

  // Hard limits on one node and its workers: memory, generic resources, heap.
  bool node_fits(std::uint32_t n) const;
  // Whether e could join worker w now (hard limits, and CPU when require_cpu).
  bool can_take(std::uint32_t e, std::uint32_t w, bool require_cpu) const;
  // The first empty worker of node n, kNoWorker-like UINT32_MAX when none.
  std::uint32_t empty_worker(std::uint32_t n) const;
  // CPU used beyond what was free, summed over nodes (the soft overcommit).
  double cpu_overcommit() const;
  double cpu_overcommit(std::uint32_t n) const;

 private:
  const SearchProblem* p_;
  std::vector<std::uint32_t> worker_of_;
  std::vector<std::uint32_t> members_;
  std::vector<double> heap_;
  std::vector<double> memory_used_, cpu_used_;
  std::vector<std::vector<double>> generic_used_;
  // Executors of each component per worker, node, rack: [component * size + x].
  std::vector<std::uint32_t> in_worker_, in_node_, in_rack_;
  std::vector<std::uint32_t> placed_;  // per component
  std::int64_t cost_ = 0;

  void count(std::uint32_t e, std::uint32_t w, int sign);
};

}  // namespace rstorm::scheduler
