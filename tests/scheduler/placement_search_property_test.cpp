// Seeded random instances: the placement search never costs more than the
// greedy, never refuses where first-fit decreasing packs the topology, and
// its exact solver finds what brute force finds on instances small enough to
// enumerate. (Hard limits on random instances: property_test.cpp, which runs
// the whole search too.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>

#include "scheduler/network_cost.hpp"
#include "test_util.hpp"

namespace rstorm::scheduler {
namespace {

using testing::schedule_ok;

int uniform(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// Up to `max_nodes` nodes in up to 2 racks, 1 to `max_ports` slots each.
Cluster small_cluster(std::mt19937_64& rng, int max_nodes, int max_ports) {
  Cluster cluster;
  const int nodes = uniform(rng, 1, max_nodes);
  for (int i = 0; i < nodes; ++i) {
    NodeSpec node;
    node.id = NodeId("node-" + std::to_string(i + 1));
    node.rack = RackId(uniform(rng, 0, 1) ? "r1" : "r2");
    node.memory_mb = 256.0 * uniform(rng, 2, 8);
    node.cpu = 100.0 * uniform(rng, 1, 4);
    for (int p = uniform(rng, 1, max_ports); p > 0; --p) node.ports.push_back(6699 + p);
    std::sort(node.ports.begin(), node.ports.end());
    if (uniform(rng, 0, 3) == 0) node.generic["gpu.count"] = uniform(rng, 1, 2);
    cluster.nodes.push_back(std::move(node));
  }
  return cluster;
}

TopologyRequest small_topology(std::mt19937_64& rng, int max_executors) {
  TopologyRequest t;
  t.id = TopologyId("t");
  int left = uniform(rng, 1, max_executors);
  for (int c = 0; left > 0; ++c) {
    ComponentSpec spec;
    spec.name = "c" + std::to_string(c);
    spec.is_spout = c == 0;
    spec.parallelism = uniform(rng, 1, left);
    left -= spec.parallelism;
    spec.onheap_mb = 64.0 * uniform(rng, 1, 8);
    spec.cpu = 10.0 * uniform(rng, 1, 8);
    if (uniform(rng, 0, 5) == 0) spec.generic["gpu.count"] = 1;
    add_component(t, spec);
    if (c > 0) t.edges.push_back(Edge{"c" + std::to_string(uniform(rng, 0, c - 1)), spec.name});
    if (uniform(rng, 0, 4) == 0) t.edges.push_back(Edge{spec.name, spec.name});
  }
  if (uniform(rng, 0, 1)) t.acker_executors = 0;
  t.acker_onheap_mb = 64;
  t.worker_max_heap_mb = 64.0 * uniform(rng, 4, 12);
  return t;
}

// First-fit decreasing, written apart from the library: executors by memory,
// nodes by memory, each executor into a worker with heap room or a new one.
bool ffd_packs(const Cluster& cluster, const TopologyRequest& t) {
  const double acker = t.acker_executors ? 0 : t.acker_onheap_mb;
  std::vector<const ExecutorRequest*> order;
  for (const ExecutorRequest& e : t.executors) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(),
                   [](auto* a, auto* b) { return a->memory_mb() > b->memory_mb(); });
  struct Node {
    double memory;
    GenericResources generic;
    std::size_t slots;
    std::vector<double> heaps;
  };
  std::vector<Node> nodes;
  for (const NodeSpec& n : cluster.nodes)
    nodes.push_back({n.memory_mb, n.generic, n.ports.size(), {}});
  std::stable_sort(nodes.begin(), nodes.end(),
                   [](auto& a, auto& b) { return a.memory > b.memory; });
  for (const ExecutorRequest* e : order) {
    bool placed = false;
    for (Node& n : nodes) {
      bool generic = true;
      for (const auto& [name, amount] : e->generic) generic &= n.generic[name] + 1e-9 >= amount;
      if (!generic) continue;
      auto heap = std::find_if(n.heaps.begin(), n.heaps.end(), [&](double h) {
        return h + e->onheap_mb <= t.worker_max_heap_mb + 1e-9;
      });
      double need = e->memory_mb();
      if (heap == n.heaps.end()) {
        if (n.heaps.size() == n.slots || e->onheap_mb + acker > t.worker_max_heap_mb + 1e-9)
          continue;
        need += acker;
      }
      if (n.memory + 1e-9 < need) continue;
      if (heap == n.heaps.end()) {
        n.heaps.push_back(acker + e->onheap_mb);
      } else {
        *heap += e->onheap_mb;
      }
      n.memory -= need;
      for (const auto& [name, amount] : e->generic) n.generic[name] -= amount;
      placed = true;
      break;
    }
    if (!placed) return false;
  }
  return true;
}

TEST(PlacementSearchPropertyTest, NeverCostlierThanTheGreedyNorRefusedWhereFfdPacks) {
  int improved = 0, ffd = 0;
  for (std::uint64_t seed = 1; seed <= 1500; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const Cluster cluster = small_cluster(rng, 6, 3);
    const TopologyRequest t = small_topology(rng, 12);
    const TopologyPlacement p = schedule_ok(cluster, {t}).topologies[0];
    if (ffd_packs(cluster, t)) {
      ++ffd;
      EXPECT_TRUE(p.scheduled) << p.reason;
    }
    if (!p.scheduled) continue;
    EXPECT_EQ(p.quality.final_cost, p.network.weighted());
    if (p.quality.greedy_placed) {
      EXPECT_LE(p.quality.final_cost, p.quality.greedy_cost);
      improved += p.quality.final_cost < p.quality.greedy_cost;
    }
  }
  EXPECT_GT(ffd, 500);
  EXPECT_GT(improved, 50);  // the search does something
}

// Hard limits and CPU as the exact solver sees them, and the cost.
struct Brute {
  const Cluster& cluster;
  const TopologyRequest& t;
  std::vector<std::uint32_t> slot_of;  // executor -> slot index over all nodes' ports
  std::vector<std::pair<std::uint32_t, int>> slots;
  std::uint64_t best = std::numeric_limits<std::uint64_t>::max();

  bool feasible() const {
    const double acker = t.acker_executors ? 0 : t.acker_onheap_mb;
    const double acker_cpu = t.acker_executors ? 0 : t.acker_cpu;
    std::vector<double> memory(cluster.nodes.size()), cpu(cluster.nodes.size());
    std::vector<GenericResources> generic(cluster.nodes.size());
    std::map<std::uint32_t, double> heap;
    for (std::size_t e = 0; e < t.executors.size(); ++e) {
      heap[slot_of[e]] += t.executors[e].onheap_mb;
      const std::uint32_t n = slots[slot_of[e]].first;
      memory[n] += t.executors[e].memory_mb();
      cpu[n] += t.executors[e].cpu;
      for (const auto& [name, amount] : t.executors[e].generic) generic[n][name] += amount;
    }
    for (auto& [s, h] : heap) {
      if (h + acker > t.worker_max_heap_mb + 1e-9) return false;
      memory[slots[s].first] += acker;
      cpu[slots[s].first] += acker_cpu;
    }
    for (std::size_t n = 0; n < cluster.nodes.size(); ++n) {
      const NodeSpec& spec = cluster.nodes[n];
      if (memory[n] > spec.memory_mb + 1e-9 || cpu[n] > spec.cpu + 1e-9) return false;
      for (const auto& [name, amount] : generic[n]) {
        auto cap = spec.generic.find(name);
        if (amount > (cap == spec.generic.end() ? 0 : cap->second) + 1e-9) return false;
      }
    }
    return true;
  }

  void enumerate(std::size_t e) {
    if (e == t.executors.size()) {
      if (!feasible()) return;
      std::vector<ExecutorLocation> locations;
      for (std::uint32_t s : slot_of) {
        const std::uint32_t n = slots[s].first;
        locations.push_back({s, n, cluster.nodes[n].rack.value() == "r1" ? 0u : 1u});
      }
      best = std::min(best, network_cost(t, locations).weighted());
      return;
    }
    for (std::uint32_t s = 0; s < slots.size(); ++s) {
      slot_of[e] = s;
      enumerate(e + 1);
    }
  }
};

// The least cost of any placement that meets every limit (CPU included), by
// trying every executor -> slot; max() when none does.
std::uint64_t brute_force_optimum(const Cluster& cluster, const TopologyRequest& t) {
  Brute brute{cluster, t, std::vector<std::uint32_t>(t.executors.size()), {}};
  for (std::uint32_t n = 0; n < cluster.nodes.size(); ++n) {
    for (int port : cluster.nodes[n].ports) brute.slots.emplace_back(n, port);
  }
  brute.enumerate(0);
  return brute.best;
}

TEST(PlacementSearchPropertyTest, ExactSolverEqualsBruteForce) {
  int compared = 0;
  for (std::uint64_t seed = 1; seed <= 500; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const Cluster cluster = small_cluster(rng, 3, 2);
    TopologyRequest t = small_topology(rng, 5);
    t.exact_max_executors = 16;
    const std::uint64_t best = brute_force_optimum(cluster, t);
    const TopologyPlacement p = schedule_ok(cluster, {t}).topologies[0];
    if (best == std::numeric_limits<std::uint64_t>::max()) continue;  // CPU or nothing fits
    ASSERT_TRUE(p.scheduled) << p.reason;
    ASSERT_TRUE(p.quality.optimal);
    EXPECT_EQ(*p.quality.lower_bound, best);
    EXPECT_EQ(p.network.weighted(), best);
    ++compared;
  }
  EXPECT_GT(compared, 150);
}

// The cheap lower bound (no exact solver) never exceeds the optimum brute
// force finds, and says "optimal" only of a placement at the optimum.
TEST(PlacementSearchPropertyTest, LowerBoundNeverExceedsTheOptimum) {
  int compared = 0, proven = 0;
  for (std::uint64_t seed = 1; seed <= 500; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const Cluster cluster = small_cluster(rng, 3, 2);
    const TopologyRequest t = small_topology(rng, 5);
    const std::uint64_t best = brute_force_optimum(cluster, t);
    const TopologyPlacement p = schedule_ok(cluster, {t}).topologies[0];
    if (best == std::numeric_limits<std::uint64_t>::max() || !p.scheduled) continue;
    ASSERT_TRUE(p.quality.lower_bound);
    EXPECT_LE(*p.quality.lower_bound, best);
    if (p.quality.optimal) {
      EXPECT_EQ(p.network.weighted(), best);
      ++proven;
    }
    ++compared;
  }
  EXPECT_GT(compared, 150);
  EXPECT_GT(proven, 0);
}

}  // namespace
}  // namespace rstorm::scheduler
