// The resource-aware strategy as a whole: R-Storm's greedy, then several other
// starts (the greedy from every rack, packings that consolidate onto the
// largest nodes, first-fit and best-fit decreasing), each improved by the
// bounded local search, the cheapest kept; the exact solver on small
// instances; a refusal only when no start fits. See README.md.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/assignment_builder.hpp"
#include "scheduler/exact_search.hpp"
#include "scheduler/layout.hpp"
#include "scheduler/local_search.hpp"
#include "scheduler/lower_bound.hpp"
#include "scheduler/packing.hpp"
#include "scheduler/placement_order.hpp"
#include "scheduler/resource_aware_scheduler.hpp"

namespace rstorm::scheduler {
namespace {

// The search runs for topologies with at most this many executors to place;
// bigger ones keep the greedy's placement (its index makes it scale, the
// search's moves do not: 100,000 executors on 10,000 nodes stays under 0.25 s).
constexpr std::uint32_t kSearchMaxExecutors = 2000;
// All nodes are candidates up to this many (or when the greedy found no
// placement); beyond, the nodes the greedy used and the two largest free nodes
// of every rack.
constexpr std::uint32_t kAllNodesUpTo = 64;
// The greedy is restarted from every rack when there are at most this many.
constexpr std::uint32_t kMaxRackStarts = 8;
// Fallback packings (when the greedy fails) only while executors x nodes stay
// below this: each executor scans the nodes.
constexpr std::uint64_t kPackMaxWork = 50'000'000;

// When no start fits a topology of at most this many executors on at most
// kExactMaxNodes nodes, the exact solver decides before a refusal (bounded by
// its search-node budget), whatever topology.scheduler.exact.max.executors.
// Its budget then: about 50 ms at most, as a refusal is also paid by every
// nimbus round that retries the topology.
constexpr std::uint32_t kExactLastResortExecutors = 16;
constexpr std::uint64_t kExactLastResortSearchNodes = 100'000;

using Slots = std::vector<std::pair<std::uint32_t, int>>;

struct Start {
  std::string name;
  Layout layout;
  std::vector<std::uint32_t> initial;       // the assignment before the local search
  std::optional<TopologyPlacement> greedy;  // when it came from the greedy as is
  std::vector<PackOvercommit> overcommits;  // a packing's, when it came from one
};

std::vector<std::uint32_t> candidate_nodes(const ClusterState& base, const Slots& fixed,
                                           const Slots& greedy_slots, bool greedy_placed) {
  // Without a greedy placement every node counts: a refusal must be sure.
  const bool all = base.node_count() <= kAllNodesUpTo || !greedy_placed;
  std::vector<char> pick(base.node_count(), all ? 1 : 0);
  for (const auto& [n, port] : fixed) {
    if (n != kNoNode) pick[n] = 1;
  }
  for (const auto& [n, port] : greedy_slots) pick[n] = 1;
  for (std::uint32_t r = 0; r < base.rack_count(); ++r) {
    std::vector<std::uint32_t> nodes = base.rack_nodes(r);
    std::stable_sort(nodes.begin(), nodes.end(), [&](std::uint32_t a, std::uint32_t b) {
      return base.node(a).free_memory_mb > base.node(b).free_memory_mb;
    });
    for (std::size_t k = 0; k < nodes.size() && k < 2; ++k) pick[nodes[k]] = 1;
  }
  std::vector<std::uint32_t> out;
  for (std::uint32_t n = 0; n < base.node_count(); ++n) {
    if (pick[n]) out.push_back(n);
  }
  return out;
}

// A layout from (state node, port) per executor; nullopt when a slot is not a
// worker of the problem (a node outside the candidates).
std::optional<Layout> layout_of(const SearchProblem& p, const Slots& slots) {
  Layout layout(p);
  for (std::uint32_t e = 0; e < p.executors(); ++e) {
    if (p.fixed[e]) continue;
    std::uint32_t found = kUnassigned;
    for (std::uint32_t w = 0; w < p.workers() && found == kUnassigned; ++w) {
      if (p.state_node[p.worker_node[w]] == slots[e].first && p.worker_port[w] == slots[e].second) {
        found = w;
      }
    }
    if (found == kUnassigned) return std::nullopt;
    layout.move(e, found);
  }
  return layout;
}

void add_greedy_starts(const ClusterState& base, const TopologyRequest& request, SearchMode mode,
                       const SearchProblem& p, const TopologyPlacement& greedy,
                       const Slots& greedy_slots, std::vector<Start>& starts) {
  if (greedy.scheduled) {
    if (auto l = layout_of(p, greedy_slots)) starts.push_back({"greedy", *l, {}, greedy, {}});
  }
  if (base.rack_count() < 2 || base.rack_count() > kMaxRackStarts) return;
  for (std::uint32_t r = 0; r < base.rack_count(); ++r) {
    ClusterState trial = base;
    Slots slots;
    TopologyPlacement placed = schedule_greedy(trial, request, {mode, r}, &slots);
    if (!placed.scheduled || slots == greedy_slots) continue;
    if (auto l = layout_of(p, slots)) {
      starts.push_back({"greedy from rack " + base.rack_id(r).value(), *l, {}, placed, {}});
    }
  }
}

void add_packing_starts(const SearchProblem& p, const TopologyRequest& request,
                        const std::vector<ExecutorRequest>& executors, std::vector<Start>& starts) {
  struct Way {
    const char* name;
    std::vector<std::uint32_t> order, nodes;
    PackFit fit;
  };
  const std::vector<Way> ways = {
      {"largest nodes first in graph order", executor_order(request, executors),
       largest_rack_then_nodes(p), PackFit::kFirstFit},
      {"first-fit decreasing", memory_decreasing(p), largest_nodes_first(p), PackFit::kFirstFit},
      {"best-fit decreasing", memory_decreasing(p), largest_nodes_first(p), PackFit::kBestFit},
  };
  for (const Way& way : ways) {
    Layout layout(p);
    PackResult packed = pack(layout, way.order, way.nodes, way.fit);
    if (packed.placed) starts.push_back({way.name, layout, {}, std::nullopt, packed.overcommits});
  }
}

// Whether `a` beats `b`: with the greedy placed (`cap` its CPU overcommit),
// the cheaper among those that overcommit no more than it (so the result never
// costs more than the greedy, nor overcommits more); without, fewer
// overcommitted points first, then cheaper.
bool better(const Layout& a, const Layout& b, std::optional<double> cap) {
  const double oa = a.cpu_overcommit(), ob = b.cpu_overcommit();
  if (cap) {
    const bool a_ok = oa <= *cap + 1e-9, b_ok = ob <= *cap + 1e-9;
    if (a_ok != b_ok) return a_ok;
    if (a.cost() != b.cost()) return a.cost() < b.cost();
    return oa < ob - 1e-9;
  }
  if (std::abs(oa - ob) > 1e-9) return oa < ob;
  return a.cost() < b.cost();
}

std::string free_description(const ClusterState& base) {
  std::vector<std::uint32_t> nodes(base.node_count());
  for (std::uint32_t n = 0; n < nodes.size(); ++n) nodes[n] = n;
  std::stable_sort(nodes.begin(), nodes.end(), [&](std::uint32_t a, std::uint32_t b) {
    return base.node(a).free_memory_mb > base.node(b).free_memory_mb;
  });
  constexpr std::size_t kShown = 6;
  std::string out;
  double rest_memory = 0;
  std::size_t rest_slots = 0;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const NodeState& node = base.node(nodes[k]);
    if (k >= kShown) {
      rest_memory += std::max(0.0, node.free_memory_mb);
      rest_slots += node.free_ports.size();
      continue;
    }
    out += (k == 0 ? "" : "; ") + node.spec->id.value() + " " +
           format_amount(std::max(0.0, node.free_memory_mb)) + " MB, " +
           format_amount(std::max(0.0, node.free_cpu)) + " CPU, " +
           std::to_string(node.free_ports.size()) + " of " +
           std::to_string(node.spec->ports.size()) + " slots";
    for (const auto& [name, amount] : node.free_generic) {
      out += ", " + format_amount(std::max(0.0, amount)) + " " + name;
    }
  }
  if (nodes.size() > kShown) {
    out += "; " + std::to_string(nodes.size() - kShown) + " more nodes with " +
           format_amount(rest_memory) + " MB and " + std::to_string(rest_slots) + " slots free";
  }
  return out;
}

// Why nothing fits, about the cluster as it was before the call (not about
// where a search stopped).
std::string refusal(const ClusterState& base, const TopologyRequest& request) {
  double memory = request.acker_executors.value_or(0) * request.acker_onheap_mb, largest = 0;
  for (const ExecutorRequest& e : request.executors) {
    memory += e.memory_mb();
    largest = std::max(largest, e.memory_mb());
  }
  std::string asks = std::to_string(request.executors.size()) + " executors ask " +
                     format_amount(memory) + " MB (the largest " + format_amount(largest) + " MB)";
  if (!request.acker_executors) {
    asks += " plus " + format_amount(request.acker_onheap_mb) + " MB for each worker's acker";
  }
  return "topology '" + request.id.value() + "': its " + asks + ", in workers of at most " +
         format_amount(request.worker_max_heap_mb) + " MB heap; no placement found (R-Storm's " +
         "order, first-fit and best-fit decreasing) in what the cluster has free: " +
         free_description(base);
}

// The slot every kept executor keeps, and the builder's executors.
Slots kept_slots(const ClusterState& base, const TopologyRequest& request,
                 std::vector<ExecutorRequest>& executors) {
  ClusterState scratch = base;
  AssignmentBuilder builder(scratch, request);
  builder.keep_current();
  executors = builder.executors();
  Slots out(executors.size(), {kNoNode, 0});
  for (std::uint32_t i = 0; i < executors.size(); ++i) {
    if (builder.worker_of(i) == kNoWorker) continue;
    out[i] = {builder.worker(builder.worker_of(i)).node, builder.worker(builder.worker_of(i)).port};
  }
  return out;
}

// Charges `state` (reset to `base`) with the layout of `start`.
TopologyPlacement rebuild(ClusterState& state, const ClusterState& base,
                          const TopologyRequest& request, const Start& start) {
  const Layout& l = start.layout;
  const SearchProblem& p = l.problem();
  state = base;
  AssignmentBuilder builder(state, request);
  builder.keep_current();
  std::vector<std::uint32_t> opened(p.workers(), kNoWorker);
  int moved = 0;
  for (std::uint32_t e = 0; e < p.executors(); ++e) {
    if (p.fixed[e]) continue;
    const std::uint32_t w = l.worker_of(e);
    if (opened[w] == kNoWorker) {
      const std::uint32_t node = p.state_node[p.worker_node[w]];
      for (std::uint32_t b : builder.workers_on(node)) {
        if (builder.worker(b).port == p.worker_port[w]) opened[w] = b;
      }
      if (opened[w] == kNoWorker) opened[w] = builder.open_worker(node, p.worker_port[w]);
    }
    builder.add(e, opened[w]);
    if (e < request.executors.size()) ++moved;  // ackers are not counted
  }
  std::vector<CpuOvercommit> overcommits;
  for (const PackOvercommit& o : start.overcommits) {
    overcommits.push_back(
        {ExecutorId(o.executor), state.node(p.state_node[o.node]).spec->id, o.asked, o.free});
  }
  TopologyPlacement placed =
      builder.finish(overcommit_warnings(overcommits, builder.executors()), moved);
  placed.cpu_overcommits = std::move(overcommits);
  return placed;
}

// Improves every start with half the budget shared out, then the best of them
// with what is left (a start rarely overtakes once both have converged, and
// the best one usually has moves left); returns the index of the best.
std::size_t search_starts(std::vector<Start>& starts, std::uint64_t budget,
                          PlacementQuality& quality) {
  // The greedy's start comes first when it placed the topology.
  std::optional<double> cap;
  if (starts[0].name == "greedy") cap = starts[0].layout.cpu_overcommit();
  auto improve = [&](Start& start, std::uint64_t share) {
    // A start that overcommits CPU is kept as placed: its reported
    // overcommits stay true (no node had the CPU when it was placed).
    if (start.layout.cpu_overcommit() > 1e-9 || share == 0) return;
    const LocalSearchStats stats = improve_layout(start.layout, share);
    quality.evaluations += stats.evaluations;
    quality.moves += stats.moves;
  };
  std::size_t best = 0;
  for (std::size_t s = 0; s < starts.size(); ++s) {
    starts[s].initial = starts[s].layout.assignment();
    improve(starts[s], budget / 2 / starts.size());
    if (s > 0 && better(starts[s].layout, starts[best].layout, cap)) best = s;
  }
  improve(starts[best], budget - quality.evaluations);
  return best;
}

bool exact_applies(const SearchProblem& p, const TopologyRequest& request, std::uint32_t to_place) {
  return to_place > 0 && static_cast<int>(to_place) <= request.exact_max_executors &&
         p.nodes() <= kExactMaxNodes;
}

void run_exact(const SearchProblem& p, const TopologyRequest& request, std::uint32_t to_place,
               Start& best, PlacementQuality& quality) {
  if (!exact_applies(p, request, to_place)) return;
  const bool overcommits = best.layout.cpu_overcommit() > 1e-9;
  const ExactResult exact = solve_exact(
      Layout(p), overcommits ? std::numeric_limits<std::int64_t>::max() : best.layout.cost());
  if (exact.improved) {
    for (std::uint32_t e = 0; e < p.executors(); ++e) {
      if (!p.fixed[e]) best.layout.move(e, exact.assignment[e]);
    }
    best.name += ", then the exact solver";
    best.overcommits.clear();
  }
  if (exact.proven && (exact.improved || !overcommits)) {
    quality.lower_bound = static_cast<std::uint64_t>(exact.cost);
    quality.optimal = true;
  }
}

// Without a proven optimum, the cheap lower bound (over every node, so only
// when all of them were candidates); a placement that meets it is optimal.
void bound_quality(const SearchProblem& p, const ClusterState& base, const Start& best,
                   PlacementQuality& quality) {
  if (quality.optimal || p.nodes() != base.node_count()) return;
  // Among placements without CPU overcommit when this one has none (as the
  // exact solver's optimum), else among all.
  const auto bound = network_cost_lower_bound(p, best.layout.cpu_overcommit() <= 1e-9);
  if (!bound) return;
  quality.lower_bound = *bound;
  quality.optimal = *bound == static_cast<std::uint64_t>(best.layout.cost());
}

// When no heuristic start fits a small topology, the exact solver settles
// whether anything does (bounded: a refusal is paid again every nimbus round).
void add_exact_start(const SearchProblem& p, std::uint32_t to_place, std::vector<Start>& starts) {
  if (to_place > kExactLastResortExecutors || p.nodes() > kExactMaxNodes) return;
  const ExactResult exact = solve_exact(Layout(p), std::numeric_limits<std::int64_t>::max(),
                                        {kExactLastResortSearchNodes});
  if (!exact.improved) return;
  Layout layout(p);
  for (std::uint32_t e = 0; e < p.executors(); ++e) {
    if (!p.fixed[e]) layout.move(e, exact.assignment[e]);
  }
  starts.push_back({"the exact solver", layout, {}, std::nullopt, {}});
}

// Charges `state` with the chosen start and reports it with its quality.
TopologyPlacement finish(ClusterState& state, const ClusterState& base,
                         const TopologyRequest& request, const TopologyPlacement& greedy,
                         const Start& best, PlacementQuality quality) {
  quality.final_cost = static_cast<std::uint64_t>(best.layout.cost());
  quality.start = best.name;
  const bool unchanged = best.layout.assignment() == best.initial;
  quality.is_greedy = best.name == "greedy" && unchanged;
  TopologyPlacement out = rebuild(state, base, request, best);
  if (best.greedy && unchanged) {
    // A greedy placement as it was: its overcommits hold.
    out.cpu_overcommits = best.greedy->cpu_overcommits;
    out.warnings = best.greedy->warnings;
  }
  out.decisions = greedy.decisions;  // how R-Storm alone would have placed it
  out.quality = std::move(quality);
  return out;
}

}  // namespace

TopologyPlacement schedule_resource_aware(ClusterState& state, const TopologyRequest& request,
                                          SearchMode mode) {
  const ClusterState base = state;
  Slots greedy_slots;
  TopologyPlacement greedy = schedule_greedy(state, request, {mode, std::nullopt}, &greedy_slots);
  PlacementQuality quality;
  quality.greedy_placed = greedy.scheduled;
  quality.greedy_cost = greedy.scheduled ? greedy.network.weighted() : 0;
  quality.final_cost = quality.greedy_cost;
  quality.start = "greedy";
  std::uint32_t to_place = 0;
  std::vector<ExecutorRequest> executors;
  const bool small_enough =
      request.executors.size() <= kSearchMaxExecutors ||
      (!greedy.scheduled &&
       static_cast<std::uint64_t>(request.executors.size()) * base.node_count() <= kPackMaxWork);
  if (!greedy.scheduled && !small_enough) greedy.reason = refusal(base, request);
  if (!small_enough || (greedy.scheduled && request.improve_max_evaluations == 0 &&
                        request.exact_max_executors == 0)) {
    greedy.quality = quality;
    return greedy;
  }
  const Slots fixed = kept_slots(base, request, executors);
  for (const auto& [n, port] : fixed) to_place += n == kNoNode ? 1 : 0;
  const SearchProblem p =
      SearchProblem::Build(base, request, executors, fixed,
                           candidate_nodes(base, fixed, greedy_slots, greedy.scheduled));
  std::vector<Start> starts;
  add_greedy_starts(base, request, mode, p, greedy, greedy_slots, starts);
  add_packing_starts(p, request, executors, starts);
  if (starts.empty()) add_exact_start(p, to_place, starts);
  if (starts.empty()) {
    greedy.reason = refusal(base, request);
    return greedy;
  }
  const std::size_t b = search_starts(starts, request.improve_max_evaluations, quality);
  Start& best = starts[b];
  run_exact(p, request, to_place, best, quality);
  bound_quality(p, base, best, quality);
  return finish(state, base, request, greedy, best, quality);
}

}  // namespace rstorm::scheduler
