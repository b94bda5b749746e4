// Seeded random clusters and topologies: the resource-aware scheduler's
// guarantees hold on every one of thousands of cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "scheduler/cluster_state.hpp"
#include "scheduler/resource_aware_scheduler.hpp"
#include "test_util.hpp"

namespace rstorm::scheduler {
namespace {

using testing::schedule_ok;

constexpr double kEps = 1e-6;

template <typename T>
T pick(std::mt19937_64& rng, std::initializer_list<T> values) {
  std::uniform_int_distribution<std::size_t> d(0, values.size() - 1);
  return *(values.begin() + d(rng));
}

int uniform(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

Cluster random_cluster(std::mt19937_64& rng) {
  Cluster cluster;
  const int racks = uniform(rng, 1, 4);
  int next = 1;
  for (int r = 1; r <= racks; ++r) {
    for (int k = uniform(rng, 1, 6); k > 0; --k) {
      NodeSpec node;
      node.id = NodeId("node-" + std::to_string(next++));
      node.rack = RackId("r" + std::to_string(r));
      node.memory_mb = pick(rng, {1024.0, 2048.0, 4096.0, 8192.0});
      node.cpu = pick(rng, {100.0, 200.0, 400.0, 800.0});
      for (int p = uniform(rng, 1, 4) - 1; p >= 0; --p) node.ports.push_back(6700 + p);
      if (uniform(rng, 0, 4) == 0) node.generic["gpu.count"] = uniform(rng, 1, 4);
      if (uniform(rng, 0, 3) == 0) {  // another topology already runs here
        cluster.used.push_back(SlotUsage{WorkerSlot{node.id, node.ports.back()},
                                         TopologyId("existing"),
                                         node.memory_mb / 2,
                                         node.cpu / 4,
                                         {}});
      }
      cluster.nodes.push_back(std::move(node));
    }
  }
  return cluster;
}

TopologyRequest random_topology(std::mt19937_64& rng, int index) {
  TopologyRequest t;
  t.id = TopologyId("t" + std::to_string(index));
  const int components = uniform(rng, 1, 5);
  for (int c = 0; c < components; ++c) {
    ComponentSpec spec;
    spec.name = "c" + std::to_string(c);
    spec.is_spout = c == 0 || uniform(rng, 0, 5) == 0;
    spec.parallelism = uniform(rng, 1, 6);
    spec.onheap_mb = pick(rng, {64.0, 128.0, 256.0, 512.0});
    spec.offheap_mb = pick(rng, {0.0, 0.0, 128.0, 512.0});
    spec.cpu = pick(rng, {5.0, 10.0, 20.0, 50.0, 100.0});
    if (uniform(rng, 0, 9) == 0) spec.generic["gpu.count"] = 1;
    add_component(t, spec);
    for (int in = c == 0 ? 0 : uniform(rng, 1, 2); in > 0; --in) {
      t.edges.push_back(Edge{"c" + std::to_string(uniform(rng, 0, c - 1)), spec.name});
    }
  }
  switch (uniform(rng, 0, 3)) {
    case 0:
      t.acker_executors = 0;
      break;
    case 1:
      t.acker_executors = uniform(rng, 1, 3);
      break;
    default:
      break;  // one acker per worker
  }
  t.worker_max_heap_mb = pick(rng, {768.0, 1024.0});
  t.priority = uniform(rng, 0, 2);
  return t;
}

// What every node uses, recomputed from the requests and placements alone.
struct Recount {
  std::map<std::string, double> memory, cpu;
  std::map<std::string, GenericResources> generic;
  std::map<WorkerSlot, std::string> slot_owner;
};

// The limits hold in `result`, the placement of `requests` on `cluster`, and
// the scheduler's accounting equals a recount from the placements alone.
// `reported_before`: nodes whose CPU overcommit an earlier round reported
// (the executors there kept their slots, so this round does not again).
void check_result(const Cluster& cluster, const std::vector<TopologyRequest>& requests,
                  const ScheduleResult& result, const std::set<std::string>& reported_before = {}) {
  ASSERT_EQ(result.topologies.size(), requests.size());

  std::map<std::string, const NodeSpec*> nodes;
  for (const NodeSpec& n : cluster.nodes) nodes[n.id.value()] = &n;
  Recount count;
  for (const SlotUsage& u : cluster.used) {
    count.memory[u.slot.node.value()] += u.memory_mb;
    count.cpu[u.slot.node.value()] += u.cpu;
    count.slot_owner[u.slot] = u.topology.value();
  }
  std::set<std::string> overcommitted_nodes = reported_before;
  for (std::size_t t = 0; t < requests.size(); ++t) {
    const TopologyRequest& req = requests[t];
    const TopologyPlacement& p = result.topologies[t];
    if (!p.scheduled) {
      EXPECT_FALSE(p.reason.empty());
      EXPECT_TRUE(p.executor_slots.empty());
      continue;
    }
    ASSERT_EQ(p.executor_slots.size(), req.executors.size());
    std::map<WorkerSlot, double> heap;
    for (std::size_t e = 0; e < req.executors.size(); ++e) {
      const WorkerSlot& s = p.executor_slots[e];
      ASSERT_TRUE(nodes.count(s.node.value()));
      const auto& ports = nodes[s.node.value()]->ports;
      ASSERT_NE(std::find(ports.begin(), ports.end(), s.port), ports.end());
      const ExecutorRequest& x = req.executors[e];
      count.memory[s.node.value()] += x.memory_mb();
      count.cpu[s.node.value()] += x.cpu;
      for (const auto& [name, amount] : x.generic) count.generic[s.node.value()][name] += amount;
      heap[s] += x.onheap_mb;
    }
    int ackers = 0;
    for (const WorkerAssignment& w : p.workers) {
      auto [it, fresh] = count.slot_owner.emplace(w.slot, req.id.value());
      EXPECT_TRUE(fresh) << "slot " << w.slot.node.value() << ":" << w.slot.port << " of "
                         << it->second << " given to " << req.id.value();
      count.memory[w.slot.node.value()] += w.ackers * req.acker_onheap_mb;
      count.cpu[w.slot.node.value()] += w.ackers * req.acker_cpu;
      heap[w.slot] += w.ackers * req.acker_onheap_mb;
      ackers += w.ackers;
      if (!req.acker_executors) {
        EXPECT_EQ(w.ackers, 1);
      }
    }
    if (req.acker_executors) {
      EXPECT_EQ(ackers, *req.acker_executors);
      // acker_slots says where each runs: as many in each worker as it counts.
      ASSERT_EQ(p.acker_slots.size(), static_cast<std::size_t>(*req.acker_executors));
      for (const WorkerAssignment& w : p.workers) {
        EXPECT_EQ(std::count(p.acker_slots.begin(), p.acker_slots.end(), w.slot), w.ackers);
      }
    } else {
      EXPECT_TRUE(p.acker_slots.empty());
    }
    for (const auto& [slot, mb] : heap) EXPECT_LE(mb, req.worker_max_heap_mb + kEps);
    for (const CpuOvercommit& o : p.cpu_overcommits) overcommitted_nodes.insert(o.node.value());
  }
  for (const NodeUsage& n : result.nodes) {
    const std::string& id = n.node.value();
    const NodeSpec& spec = *nodes[id];
    // Nothing half placed: the scheduler's own accounting equals the recount.
    EXPECT_NEAR(n.memory_used_mb, count.memory[id], kEps) << id;
    EXPECT_NEAR(n.cpu_used, count.cpu[id], kEps) << id;
    EXPECT_LE(count.memory[id], spec.memory_mb + kEps) << id << " memory exceeded";
    for (const auto& [name, used] : count.generic[id]) {
      auto cap = spec.generic.find(name);
      EXPECT_LE(used, (cap == spec.generic.end() ? 0 : cap->second) + kEps) << id << " " << name;
    }
    if (count.cpu[id] > spec.cpu + kEps) {
      EXPECT_TRUE(overcommitted_nodes.count(id)) << id << " CPU overcommitted, not reported";
    }
  }
  // Overcommit only when unavoidable: free resources only shrink, so a node
  // that could take the executor with its CPU at the time still could now.
  for (std::size_t t = 0; t < requests.size(); ++t) {
    const TopologyRequest& req = requests[t];
    const bool per_worker = !req.acker_executors.has_value();
    for (const CpuOvercommit& o : result.topologies[t].cpu_overcommits) {
      const ExecutorRequest& x =
          req.executors.size() > o.executor.value()
              ? req.executors[o.executor.value()]
              : ExecutorRequest{kAckerComponent, 0, 0, req.acker_onheap_mb, 0, req.acker_cpu, {}};
      const double mem = x.memory_mb() + (per_worker ? req.acker_onheap_mb : 0);
      const double cpu = x.cpu + (per_worker ? req.acker_cpu : 0);
      for (const NodeUsage& n : result.nodes) {
        bool generic_ok = true;
        for (const auto& [name, amount] : x.generic) {
          auto cap = n.generic_capacity.find(name);
          auto used = n.generic_used.find(name);
          const double free = (cap == n.generic_capacity.end() ? 0 : cap->second) -
                              (used == n.generic_used.end() ? 0 : used->second);
          generic_ok = generic_ok && free + kEps >= amount;
        }
        const bool could = generic_ok && n.slots_used < n.slots_total &&
                           n.memory_capacity_mb - n.memory_used_mb + kEps >= mem &&
                           n.cpu_capacity - n.cpu_used + kEps >= cpu;
        EXPECT_FALSE(could) << "executor " << o.executor.value() << " overcommitted "
                            << o.node.value() << " while " << n.node.value() << " had room";
      }
    }
  }
}

void check_case(std::uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Cluster cluster = random_cluster(rng);
  std::vector<TopologyRequest> requests;
  for (int i = uniform(rng, 1, 3); i > 0; --i) requests.push_back(random_topology(rng, i));
  check_result(cluster, requests, schedule_ok(cluster, requests));
}

TEST(SchedulerPropertyTest, LimitsHoldAndEveryTopologyIsPlacedWholeOrReported) {
  int scheduled = 0, refused = 0, overcommits = 0;
  for (std::uint64_t seed = 1; seed <= 3000; ++seed) {
    check_case(seed);
    if (::testing::Test::HasFailure()) return;
    // Tally outcomes so the test shows it covers both sides.
    std::mt19937_64 rng(seed);
    const Cluster cluster = random_cluster(rng);
    std::vector<TopologyRequest> requests;
    for (int i = uniform(rng, 1, 3); i > 0; --i) requests.push_back(random_topology(rng, i));
    const ScheduleResult r = schedule_ok(cluster, requests);
    for (const TopologyPlacement& p : r.topologies) {
      (p.scheduled ? scheduled : refused) += 1;
      overcommits += p.cpu_overcommits.empty() ? 0 : 1;
    }
  }
  // The generator must exercise placements, refusals and CPU overcommit.
  EXPECT_GT(scheduled, 1000);
  EXPECT_GT(refused, 100);
  EXPECT_GT(overcommits, 10);
}

// A second round, as nimbus runs one whenever a topology comes: those placed
// in the first keep their executors where they run (`current`) while new ones,
// of any priority and id (so placed before or after them), join. The limits
// hold on the whole, and a running topology is not moved because another came.
TEST(SchedulerPropertyTest, TopologiesThatComeLaterNeverPushANodeOverItsLimits) {
  int joined = 0, kept = 0;
  for (std::uint64_t seed = 1; seed <= 1500; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const Cluster cluster = random_cluster(rng);
    std::vector<TopologyRequest> running;
    for (int i = uniform(rng, 1, 3); i > 0; --i) running.push_back(random_topology(rng, i + 3));
    const ScheduleResult first = schedule_ok(cluster, running);
    std::vector<TopologyRequest> requests;
    std::vector<const TopologyPlacement*> before;  // of requests[t], t < kept_count
    for (std::size_t t = 0; t < running.size(); ++t) {
      if (!first.topologies[t].scheduled) continue;
      before.push_back(&first.topologies[t]);
      requests.push_back(running[t]);
      requests.back().current.assign(first.topologies[t].executor_slots.begin(),
                                     first.topologies[t].executor_slots.end());
      // Its ackers (topology.acker.executors) where they run, as nimbus lists them.
      for (const WorkerSlot& a : first.topologies[t].acker_slots) {
        requests.back().current.push_back(a);
      }
    }
    const std::size_t kept_count = requests.size();
    std::set<std::string> reported;
    for (const TopologyPlacement* p : before) {
      for (const CpuOvercommit& o : p->cpu_overcommits) reported.insert(o.node.value());
    }
    // Ids t1..t3 sort before the running t4..t6; priorities are random.
    for (int i = uniform(rng, 1, 3); i > 0; --i) requests.push_back(random_topology(rng, i));
    const ScheduleResult second = schedule_ok(cluster, requests);
    check_result(cluster, requests, second, reported);
    if (::testing::Test::HasFailure()) return;
    for (std::size_t t = 0; t < kept_count; ++t) {
      const TopologyPlacement& p = second.topologies[t];
      ASSERT_TRUE(p.scheduled) << requests[t].id.value() << ": " << p.reason;
      EXPECT_EQ(p.moved_executors, 0) << requests[t].id.value();
      EXPECT_EQ(p.executor_slots, before[t]->executor_slots) << requests[t].id.value();
      EXPECT_EQ(p.acker_slots, before[t]->acker_slots) << requests[t].id.value();
      ++kept;
    }
    for (std::size_t t = kept_count; t < requests.size(); ++t) {
      joined += second.topologies[t].scheduled ? 1 : 0;
    }
  }
  EXPECT_GT(kept, 1000);
  EXPECT_GT(joined, 500);
}

// The indexed search (reference rack with a bound, then other racks by free
// memory with a bound) picks exactly the node the exhaustive definition picks,
// on seeds 1..`seeds` with every executor's CPU ask times `cpu_scale`.
// Returns the indexed placements.
std::vector<TopologyPlacement> compare_with_exhaustive(std::uint64_t seeds, double cpu_scale) {
  std::vector<TopologyPlacement> placements;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const Cluster cluster = random_cluster(rng);
    TopologyRequest t = random_topology(rng, 1);
    for (ExecutorRequest& e : t.executors) e.cpu *= cpu_scale;
    Result<ClusterState> base = ClusterState::Create(cluster);
    EXPECT_TRUE(base.ok());
    if (!base.ok()) break;
    ClusterState a = base.value(), b = base.value();
    TopologyPlacement fast = schedule_greedy(a, t, {SearchMode::kIndexed, std::nullopt});
    const TopologyPlacement slow = schedule_greedy(b, t, {SearchMode::kExhaustive, std::nullopt});
    EXPECT_EQ(fast.scheduled, slow.scheduled);
    EXPECT_EQ(fast.reason, slow.reason);
    EXPECT_EQ(fast.executor_slots, slow.executor_slots);
    EXPECT_EQ(fast.warnings, slow.warnings);
    placements.push_back(std::move(fast));
  }
  return placements;
}

TEST(SchedulerPropertyTest, IndexedSearchPlacesExactlyLikeTheExhaustiveScan) {
  const auto placements = compare_with_exhaustive(2000, 1);
  EXPECT_GT(std::count_if(placements.begin(), placements.end(),
                          [](const TopologyPlacement& p) { return p.scheduled; }),
            1000);
}

// The same where executors ask eight times their CPU: most are placed by the
// search that does not require CPU, with overcommits.
TEST(SchedulerPropertyTest, IndexedSearchPlacesExactlyLikeTheExhaustiveScanOutOfCpu) {
  const auto placements = compare_with_exhaustive(1000, 8);
  EXPECT_GT(std::count_if(placements.begin(), placements.end(),
                          [](const TopologyPlacement& p) { return !p.cpu_overcommits.empty(); }),
            300);
}

TEST(SchedulerPropertyTest, SameInputSamePlacement) {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 a(seed), b(seed);
    const Cluster ca = random_cluster(a), cb = random_cluster(b);
    std::vector<TopologyRequest> ra, rb;
    for (int i = uniform(a, 1, 3); i > 0; --i) ra.push_back(random_topology(a, i));
    for (int i = uniform(b, 1, 3); i > 0; --i) rb.push_back(random_topology(b, i));
    const ScheduleResult x = schedule_ok(ca, ra), y = schedule_ok(cb, rb);
    for (std::size_t t = 0; t < x.topologies.size(); ++t) {
      EXPECT_EQ(x.topologies[t].executor_slots, y.topologies[t].executor_slots) << seed;
      EXPECT_EQ(x.topologies[t].reason, y.topologies[t].reason) << seed;
    }
  }
}

// Racks of identical nodes; a topology using at most a fifth of the smallest
// rack's memory and CPU never leaves the rack it starts in (a rack where no
// node can take a small executor is at least half used).
TEST(SchedulerPropertyTest, TopologyThatFitsInOneRackHasNoCrossRackPair) {
  for (std::uint64_t seed = 1; seed <= 1000; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    Cluster cluster;
    double min_memory = 1e18, min_cpu = 1e18;
    int next = 1;
    const int racks = uniform(rng, 2, 4);
    for (int r = 1; r <= racks; ++r) {
      const double memory = pick(rng, {2048.0, 4096.0, 8192.0});
      const double cpu = pick(rng, {200.0, 400.0, 800.0});
      const int count = uniform(rng, 2, 8);
      min_memory = std::min(min_memory, memory * count);
      min_cpu = std::min(min_cpu, cpu * count);
      for (int k = 0; k < count; ++k) {
        NodeSpec node;
        node.id = NodeId("node-" + std::to_string(next++));
        node.rack = RackId("r" + std::to_string(r));
        node.memory_mb = memory;
        node.cpu = cpu;
        for (int p = 0; p < 10; ++p) node.ports.push_back(6700 + p);
        cluster.nodes.push_back(std::move(node));
      }
    }
    TopologyRequest t;
    t.id = TopologyId("t");
    double memory = 0, cpu = 0;
    for (int c = 0;; ++c) {
      ComponentSpec spec;
      spec.name = "c" + std::to_string(c);
      spec.is_spout = c == 0;
      spec.parallelism = uniform(rng, 1, 6);
      spec.onheap_mb = pick(rng, {64.0, 128.0, 256.0});
      spec.cpu = pick(rng, {5.0, 10.0, 20.0});
      // With an acker per executor as the worst case.
      const double m = spec.parallelism * (spec.onheap_mb + t.acker_onheap_mb);
      const double u = spec.parallelism * (spec.cpu + t.acker_cpu);
      if (memory + m > min_memory / 5 || cpu + u > min_cpu / 5) break;
      memory += m;
      cpu += u;
      add_component(t, spec);
      if (c > 0) t.edges.push_back(Edge{"c" + std::to_string(uniform(rng, 0, c - 1)), spec.name});
    }
    if (t.executors.empty()) continue;
    const ScheduleResult r = schedule_ok(cluster, {t});
    ASSERT_TRUE(r.topologies[0].scheduled) << r.topologies[0].reason;
    EXPECT_EQ(r.topologies[0].network.cross_rack, 0u);
    std::set<std::string> racks_used;
    for (const WorkerAssignment& w : r.topologies[0].workers) racks_used.insert(w.rack.value());
    EXPECT_EQ(racks_used.size(), 1u);
  }
}

}  // namespace
}  // namespace rstorm::scheduler
