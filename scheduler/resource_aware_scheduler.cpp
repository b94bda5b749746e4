#include "scheduler/resource_aware_scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "scheduler/placement_order.hpp"
#include "scheduler/render.hpp"

namespace rstorm::scheduler {
namespace {

// Squared normalised network distances from the previous placement: same node
// 0, same rack 0.5, other rack 2. Memory and CPU terms are each in [0, 1] while
// a node can take the executor, so leaving the rack (2^2 = 4 > 1 + 1 + 0.25)
// only happens when no node of the rack can take it; inside the rack, fit and
// the same-node preference trade off. See README.md.
constexpr double kNetSameNode = 0.0;
constexpr double kNetSameRack = 0.25;
constexpr double kNetOtherRack = 4.0;
constexpr double kEpsilon = 1e-9;

double generic_free(const NodeState& node, const std::string& name) {
  auto it = node.free_generic.find(name);
  return it == node.free_generic.end() ? 0.0 : it->second;
}

std::string node_label(const ClusterState& state, std::uint32_t n) {
  return state.node(n).spec->id.value() + ", rack " + state.rack_id(state.node(n).rack).value();
}

// How an executor would land on a node: into an existing worker of the
// topology, or a new one (which also brings the worker's acker).
struct Fit {
  std::uint32_t worker = kNoWorker;
  double memory_mb = 0;
  double cpu = 0;
};

struct Candidate {
  double d2 = std::numeric_limits<double>::infinity();
  std::uint32_t node = kNoNode;
  Fit fit;
};

// Places one topology's executors in R-Storm order on `state` through
// `builder`, keeping an index of candidate nodes in step with the state.
// Single thread; borrows everything it is given for its lifetime.
class Placer {
 public:
  Placer(ClusterState& state, AssignmentBuilder& builder, const TopologyRequest& request,
         SearchMode mode)
      : mode_(mode),
        state_(state),
        builder_(builder),
        request_(request),
        mem_scale_(state.max_memory_mb()),
        cpu_scale_(state.max_cpu()),
        key_of_(state.node_count()),
        indexed_(state.node_count(), 0),
        cpu_tree_(state.node_count()),
        bucket_of_(state.node_count()),
        bucketed_(state.node_count(), 0),
        stale_(state.node_count(), 0) {
    for (std::uint32_t n = 0; n < state.node_count(); ++n) index(n);
    sync_buckets();
  }

  // Places every unplaced executor, the first one in `start_rack` (default:
  // the rack with the most free); the reason on failure, empty on success.
  struct Outcome {
    std::vector<CpuOvercommit> overcommits;
    std::vector<PlacementDecision> decisions;
    int moved = 0;
  };
  std::string run(std::optional<std::uint32_t> start_rack, Outcome& out);

 private:
  using Key = std::pair<double, double>;  // (free memory, free CPU)
  struct Bucket {
    std::set<std::uint32_t> untouched;  // no worker of this topology: all alike
    std::set<std::uint32_t> touched;    // has a worker: evaluated one by one
  };

  // Brings what the index keeps of node `n` up to date after the node
  // changed (and at the start): key_of_, indexed_ and the CPU tree at once,
  // its bucket when next needed (sync_buckets).
  void index(std::uint32_t n);
  // Moves every node changed since the last call to its current bucket.
  void sync_buckets();
  std::optional<Fit> fit(std::uint32_t n, const ExecutorRequest& e, bool require_cpu) const;
  void consider(std::uint32_t n, double net, const ExecutorRequest& e, bool require_cpu,
                Candidate& best) const;
  Candidate search(const ExecutorRequest& e, std::uint32_t ref_node, std::uint32_t ref_rack,
                   bool require_cpu);
  // The nearest node, first among those with the CPU, then among all.
  Candidate find(const ExecutorRequest& e, std::uint32_t ref_node, std::uint32_t ref_rack);
  // Notes the decision (and any CPU overcommit) before the node is charged.
  void record(std::uint32_t i, const Candidate& c, std::uint32_t ref_node, std::uint32_t ref_rack,
              Outcome& out) const;
  std::uint32_t first_rack() const;
  std::string diagnose(const ExecutorRequest& e) const;

  const SearchMode mode_;
  ClusterState& state_;
  AssignmentBuilder& builder_;
  const TopologyRequest& request_;
  const double mem_scale_;
  const double cpu_scale_;
  // The largest of values kept per node, in a tree of maxima over the
  // nodes: a change and the query cost a walk up the tree, no allocation.
  class MaxTree {
   public:
    explicit MaxTree(std::uint32_t size) {
      while (leaves_ < size) leaves_ *= 2;
      tree_.assign(2 * leaves_, -std::numeric_limits<double>::infinity());
    }
    void set(std::uint32_t i, double value) {
      std::uint32_t at = leaves_ + i;
      tree_[at] = value;
      for (at /= 2; at >= 1; at /= 2) tree_[at] = std::max(tree_[2 * at], tree_[2 * at + 1]);
    }
    double max() const { return tree_[1]; }

   private:
    std::uint32_t leaves_ = 1;
    std::vector<double> tree_;
  };

  // Per node, always current: whether it can take an executor at all (a free
  // slot or a worker of the topology), and its free (memory, CPU). The
  // reference rack's scan reads these.
  std::vector<Key> key_of_;
  std::vector<char> indexed_;
  // The free CPU of every indexed node: when even the largest is short, the
  // search that requires CPU is skipped (a cluster out of CPU costs one
  // pass, not two).
  MaxTree cpu_tree_;
  // Nodes that can take an executor, by free (memory, CPU): the scan over
  // other racks walks memory upwards and stops once the memory term alone is
  // worse than the best node found. Brought up to date only before that
  // scan (sync_buckets), which a search needs only when no node of its rack
  // can take the executor: a node is placed on many times between two.
  std::map<Key, Bucket> index_;
  std::vector<Key> bucket_of_;        // the key a node sits under in index_
  std::vector<char> bucketed_;        // whether it sits in index_
  std::vector<char> stale_;           // changed since it was put there
  std::vector<std::uint32_t> stale_nodes_;
};

void Placer::index(std::uint32_t n) {
  const NodeState& node = state_.node(n);
  indexed_[n] = !builder_.workers_on(n).empty() || !node.free_ports.empty();
  key_of_[n] = Key{node.free_memory_mb, node.free_cpu};
  cpu_tree_.set(n, indexed_[n] ? node.free_cpu : -std::numeric_limits<double>::infinity());
  if (!stale_[n]) {
    stale_[n] = 1;
    stale_nodes_.push_back(n);
  }
}

void Placer::sync_buckets() {
  for (std::uint32_t n : stale_nodes_) {
    stale_[n] = 0;
    if (bucketed_[n]) {
      auto it = index_.find(bucket_of_[n]);
      it->second.touched.erase(n);
      it->second.untouched.erase(n);
      if (it->second.touched.empty() && it->second.untouched.empty()) index_.erase(it);
      bucketed_[n] = 0;
    }
    if (!indexed_[n]) continue;
    Bucket& bucket = index_[key_of_[n]];
    (builder_.workers_on(n).empty() ? bucket.untouched : bucket.touched).insert(n);
    bucket_of_[n] = key_of_[n];
    bucketed_[n] = 1;
  }
  stale_nodes_.clear();
}

std::optional<Fit> Placer::fit(std::uint32_t n, const ExecutorRequest& e, bool require_cpu) const {
  const NodeState& node = state_.node(n);
  // What every way in needs at least, before looking at the workers.
  if (node.free_memory_mb + kEpsilon < e.memory_mb()) return std::nullopt;
  if (require_cpu && node.free_cpu + kEpsilon < e.cpu) return std::nullopt;
  for (const auto& [name, amount] : e.generic) {
    if (generic_free(node, name) + kEpsilon < amount) return std::nullopt;
  }
  Fit f;
  if (builder_.least_worker_heap(n) + e.onheap_mb <= request_.worker_max_heap_mb + kEpsilon) {
    for (std::uint32_t w : builder_.workers_on(n)) {
      if (builder_.worker(w).heap_mb + e.onheap_mb <= request_.worker_max_heap_mb + kEpsilon) {
        f.worker = w;
        break;
      }
    }
  }
  f.memory_mb = e.memory_mb();
  f.cpu = e.cpu;
  if (f.worker == kNoWorker) {
    if (node.free_ports.empty()) return std::nullopt;
    if (e.onheap_mb + builder_.worker_memory_mb() > request_.worker_max_heap_mb + kEpsilon) {
      return std::nullopt;
    }
    f.memory_mb += builder_.worker_memory_mb();
    f.cpu += builder_.worker_cpu();
  }
  if (node.free_memory_mb + kEpsilon < f.memory_mb) return std::nullopt;
  if (require_cpu && node.free_cpu + kEpsilon < f.cpu) return std::nullopt;
  return f;
}

void Placer::consider(std::uint32_t n, double net, const ExecutorRequest& e, bool require_cpu,
                      Candidate& best) const {
  const std::optional<Fit> f = fit(n, e, require_cpu);
  if (!f) return;
  const NodeState& node = state_.node(n);
  const double dm = (node.free_memory_mb - f->memory_mb) / mem_scale_;
  const double dc = (node.free_cpu - f->cpu) / cpu_scale_;
  const double d2 = dm * dm + dc * dc + net;
  if (d2 < best.d2 || (d2 == best.d2 && n < best.node)) best = Candidate{d2, n, *f};
}

Candidate Placer::search(const ExecutorRequest& e, std::uint32_t ref_node, std::uint32_t ref_rack,
                         bool require_cpu) {
  Candidate best;
  if (mode_ == SearchMode::kExhaustive) {
    for (std::uint32_t n = 0; n < state_.node_count(); ++n) {
      const double net = n == ref_node                     ? kNetSameNode
                         : state_.node(n).rack == ref_rack ? kNetSameRack
                                                           : kNetOtherRack;
      consider(n, net, e, require_cpu, best);
    }
    return best;
  }
  // The reference rack, node by node (racks are small), passing over nodes
  // that cannot take it from what the index keeps in one array: those with
  // neither a free slot nor a worker of the topology, or short of memory or
  // CPU (what fit() would find, without reading the node); and those whose
  // distance cannot beat the best so far (below), the reference node first
  // as it is usually the best.
  const double most_memory = e.memory_mb() + builder_.worker_memory_mb();
  const double most_cpu = e.cpu + builder_.worker_cpu();
  auto try_rack_node = [&](std::uint32_t n, double net) {
    const Key& key = key_of_[n];
    if (!indexed_[n] || key.first + kEpsilon < e.memory_mb() ||
        (require_cpu && key.second + kEpsilon < e.cpu)) {
      return;
    }
    // consider()'s d2 from the nearest to zero its terms can be: what is
    // left free once the node gives the most an executor can take (its
    // share and a new worker's), or (CPU, without require_cpu) what it lacks
    // even of the least (its share alone). No larger than the d2 it finds,
    // as the same operations on operands no farther from zero.
    const double dm = std::max(0.0, key.first - most_memory) / mem_scale_;
    const double dc = std::max({0.0, key.second - most_cpu, e.cpu - key.second}) / cpu_scale_;
    if (dm * dm + dc * dc + net > best.d2) return;
    consider(n, net, e, require_cpu, best);
  };
  const bool ref_here = ref_node != kNoNode && state_.node(ref_node).rack == ref_rack;
  if (ref_here) try_rack_node(ref_node, kNetSameNode);
  for (std::uint32_t n : state_.rack_nodes(ref_rack)) {
    if (n != ref_node) try_rack_node(n, kNetSameRack);
  }
  // Every other rack (network term 2), walked by free memory upwards. A node
  // there is at a d2 of at least kNetOtherRack: none can beat (nor tie) a
  // best below it.
  if (best.d2 < kNetOtherRack) return best;
  sync_buckets();
  const double worker_mem = builder_.worker_memory_mb();
  for (auto it = index_.lower_bound(Key{e.memory_mb() - kEpsilon, -1e300}); it != index_.end();
       ++it) {
    const auto& [free_mem, free_cpu] = it->first;
    const double slack = std::max(0.0, free_mem - e.memory_mb() - worker_mem) / mem_scale_;
    if (slack * slack + kNetOtherRack > best.d2) break;
    if (require_cpu && free_cpu + kEpsilon < e.cpu) continue;
    for (std::uint32_t n : it->second.untouched) {
      if (state_.node(n).rack == ref_rack) continue;
      if (!fit(n, e, require_cpu)) {
        // Untouched nodes of one key differ only in their generic
        // resources: without those, where one has no room none has.
        if (e.generic.empty()) break;
        continue;
      }
      consider(n, kNetOtherRack, e, require_cpu, best);  // the lowest id of alike nodes
      break;
    }
    for (std::uint32_t n : it->second.touched) {
      if (state_.node(n).rack != ref_rack) consider(n, kNetOtherRack, e, require_cpu, best);
    }
  }
  return best;
}

std::uint32_t Placer::first_rack() const {
  std::uint32_t best = 0;
  double best_free = -1;
  for (std::uint32_t r = 0; r < state_.rack_count(); ++r) {
    double free = 0;
    for (std::uint32_t n : state_.rack_nodes(r)) {
      const NodeState& node = state_.node(n);
      free += std::max(0.0, node.free_memory_mb) / mem_scale_ +
              std::max(0.0, node.free_cpu) / cpu_scale_;
    }
    if (free > best_free + kEpsilon) {
      best_free = free;
      best = r;
    }
  }
  return best;
}

std::string Placer::diagnose(const ExecutorRequest& e) const {
  std::string shortfall = largest_node_shortfall(state_, e, builder_.worker_memory_mb());
  if (!shortfall.empty()) return shortfall;
  std::string asks = format_amount(e.memory_mb()) + " MB";
  for (const auto& [name, amount] : e.generic) asks += " and " + format_amount(amount) + " " + name;
  return "component '" + e.component + "' asks " + asks +
         " per executor; no node with that much free has a free worker slot or a worker with " +
         "heap room left";
}

Candidate Placer::find(const ExecutorRequest& e, std::uint32_t ref_node,
                       std::uint32_t ref_rack) {
  Candidate c;
  if (state_.rack_count() == 0) return c;
  const bool cpu_somewhere = cpu_tree_.max() + kEpsilon >= e.cpu;
  if (cpu_somewhere) c = search(e, ref_node, ref_rack, /*require_cpu=*/true);
  if (c.node == kNoNode) c = search(e, ref_node, ref_rack, /*require_cpu=*/false);
  return c;
}

void Placer::record(std::uint32_t i, const Candidate& c, std::uint32_t ref_node,
                    std::uint32_t ref_rack, Outcome& out) const {
  const NodeState& node = state_.node(c.node);
  PlacementDecision d;
  d.executor = ExecutorId(i);
  d.slot =
      WorkerSlot{node.spec->id, c.fit.worker == kNoWorker ? node.free_ports.front()
                                                          : builder_.worker(c.fit.worker).port};
  d.memory = (node.free_memory_mb - c.fit.memory_mb) / mem_scale_;
  d.cpu = (node.free_cpu - c.fit.cpu) / cpu_scale_;
  d.network = std::sqrt(c.node == ref_node      ? kNetSameNode
                        : node.rack == ref_rack ? kNetSameRack
                                                : kNetOtherRack);
  d.new_worker = c.fit.worker == kNoWorker;
  out.decisions.push_back(d);
  if (node.free_cpu + kEpsilon >= c.fit.cpu) return;
  const ExecutorRequest& e = builder_.executors()[i];
  out.overcommits.push_back(CpuOvercommit{d.executor, node.spec->id, c.fit.cpu, node.free_cpu, e.cpu,
                                          cpu_tree_.max(), builder_.worker_cpu()});
}

std::string Placer::run(std::optional<std::uint32_t> start_rack, Outcome& out) {
  const std::vector<std::uint32_t> order = executor_order(request_, builder_.executors());
  std::uint32_t ref_node = kNoNode;
  std::uint32_t ref_rack = state_.rack_count() == 0 ? 0 : start_rack.value_or(first_rack());
  for (std::uint32_t i : order) {
    if (builder_.worker_of(i) == kNoWorker) {
      const Candidate c = find(builder_.executors()[i], ref_node, ref_rack);
      if (c.node == kNoNode) return diagnose(builder_.executors()[i]);
      record(i, c, ref_node, ref_rack, out);
      std::uint32_t w = c.fit.worker;
      if (w == kNoWorker) w = builder_.open_worker(c.node, state_.node(c.node).free_ports.front());
      builder_.add(i, w);
      index(c.node);
      if (i < request_.executors.size()) ++out.moved;  // ackers are not counted
    }
    ref_node = builder_.worker(builder_.worker_of(i)).node;  // placed now, or kept
    ref_rack = state_.node(ref_node).rack;
  }
  return {};
}

}  // namespace

std::string largest_node_shortfall(const ClusterState& state, const ExecutorRequest& e,
                                   double worker_memory_mb) {
  std::uint32_t largest = kNoNode;
  for (std::uint32_t n = 0; n < state.node_count(); ++n) {
    const NodeState& node = state.node(n);
    if (node.free_ports.empty()) continue;
    if (largest == kNoNode || node.free_memory_mb > state.node(largest).free_memory_mb) largest = n;
  }
  if (largest == kNoNode) {
    return "component '" + e.component + "' needs a worker slot; every slot of the cluster (" +
           std::to_string(state.node_count()) + " nodes) is taken";
  }
  const double free = state.node(largest).free_memory_mb;
  const std::string where = " (" + node_label(state, largest) + ")";
  if (free + kEpsilon < e.memory_mb()) {
    return "component '" + e.component + "' asks " + format_amount(e.memory_mb()) +
           " MB per executor; the largest free node has " + format_amount(std::max(0.0, free)) +
           " MB" + where;
  }
  if (free + kEpsilon < e.memory_mb() + worker_memory_mb) {
    return "component '" + e.component + "' asks " + format_amount(e.memory_mb()) +
           " MB per executor and a new worker's acker " + format_amount(worker_memory_mb) +
           " MB; the largest free node has " + format_amount(std::max(0.0, free)) + " MB" + where;
  }
  for (const auto& [name, amount] : e.generic) {
    std::uint32_t most = 0;
    for (std::uint32_t n = 1; n < state.node_count(); ++n) {
      if (generic_free(state.node(n), name) > generic_free(state.node(most), name)) most = n;
    }
    const double have = state.node_count() == 0 ? 0 : generic_free(state.node(most), name);
    if (have + kEpsilon < amount) {
      return "component '" + e.component + "' asks " + format_amount(amount) + " " + name +
             " per executor; the most any node has free is " + format_amount(std::max(0.0, have)) +
             (state.node_count() == 0 ? std::string() : " (" + node_label(state, most) + ")");
    }
  }
  return {};
}

std::vector<std::string> overcommit_warnings(const std::vector<CpuOvercommit>& overcommits,
                                             const std::vector<ExecutorRequest>& executors) {
  // Per component, in the order of its first overcommit.
  std::vector<std::pair<const std::string*, std::vector<const CpuOvercommit*>>> groups;
  std::map<std::string_view, std::size_t> group_of;
  for (const CpuOvercommit& o : overcommits) {
    const std::string& component = executors[o.executor.value()].component;
    auto [it, added] = group_of.try_emplace(component, groups.size());
    if (added) groups.push_back({&component, {}});
    groups[it->second].second.push_back(&o);
  }
  // Executors by the label the placement lists them with (split[5-6]).
  auto label = [&](const CpuOvercommit& o) { return executor_label(executors[o.executor.value()]); };
  std::vector<std::string> warnings;
  for (const auto& [component, list] : groups) {
    std::string w;
    if (list.size() == 1) {
      const CpuOvercommit& o = *list.front();
      w.append("executor ").append(label(o)).append(" overcommits CPU on ");
      w.append(o.node.value()).append(": asks ").append(format_amount(o.asked));
      w.append(" points, ").append(format_amount(std::max(0.0, o.free)));
      w.append(" free; no node that can take it has that much CPU free");
    } else {
      w.append(std::to_string(list.size())).append(" executors of '").append(*component);
      w.append("' overcommit CPU, as no node that can take them has that much free: ");
      for (std::size_t k = 0; k < list.size() && k < kOvercommitsListed; ++k) {
        const CpuOvercommit& o = *list[k];
        if (k > 0) w.append("; ");
        w.append(label(o)).append(" on ").append(o.node.value()).append(" asks ");
        w.append(format_amount(o.asked)).append(" points, ");
        w.append(format_amount(std::max(0.0, o.free))).append(" free");
      }
      if (list.size() > kOvercommitsListed) {
        w.append("; and ").append(std::to_string(list.size() - kOvercommitsListed)).append(" more");
      }
    }
    // Nodes with more CPU free than the executor asks, which could not take
    // it all the same: why, or the warning reads as a scheduler's mistake.
    const CpuOvercommit& first = *list.front();
    if (first.most_free + kEpsilon >= first.executor_cpu) {
      if (first.most_free + kEpsilon < first.executor_cpu + first.new_worker_cpu) {
        w.append(" (a node has ").append(format_amount(first.most_free));
        w.append(" points free, but a new worker there takes ");
        w.append(format_amount(first.executor_cpu + first.new_worker_cpu));
        w.append(" with its acker's ").append(format_amount(first.new_worker_cpu)).append(")");
      } else {
        w.append(" (the nodes with more CPU free lack the memory or a worker with heap room)");
      }
    }
    warnings.push_back(std::move(w));
  }
  return warnings;
}

TopologyPlacement schedule_greedy(ClusterState& state, const TopologyRequest& request,
                                  const GreedyOptions& options,
                                  std::vector<std::pair<std::uint32_t, int>>* slots) {
  AssignmentBuilder builder(state, request);
  builder.keep_current();
  Placer placer(state, builder, request, options.mode);
  Placer::Outcome out;
  std::string reason = placer.run(options.start_rack, out);
  if (!reason.empty()) {
    TopologyPlacement failed;
    failed.topology = request.id;
    failed.strategy = request.strategy;
    failed.reason = std::move(reason);
    return failed;
  }
  if (slots != nullptr) {
    slots->clear();
    for (std::uint32_t i = 0; i < builder.executors().size(); ++i) {
      const auto& w = builder.worker(builder.worker_of(i));
      slots->emplace_back(w.node, w.port);
    }
  }
  TopologyPlacement placed =
      builder.finish(overcommit_warnings(out.overcommits, builder.executors()), out.moved);
  placed.cpu_overcommits = std::move(out.overcommits);
  placed.decisions = std::move(out.decisions);
  return placed;
}

}  // namespace rstorm::scheduler
