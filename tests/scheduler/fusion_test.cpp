// Fused chains (topology.fuse.executors) are placed as units: executor i of a
// fused bolt in the worker of executor i of its producer, with either
// strategy, and a refusal names the whole unit.
#include "scheduler/fusion.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "scheduler/network_cost.hpp"
#include "test_util.hpp"

namespace rstorm::scheduler {
namespace {

using testing::bolt;
using testing::make_cluster;
using testing::schedule_ok;
using testing::spout;

// spout(4) -> a(4) -> b(4) by local-or-shuffle, b -> sink(2) by shuffle.
TopologyRequest chain(bool fuse) {
  TopologyRequest t;
  t.id = TopologyId("chain");
  for (const ComponentSpec& c :
       {bolt("a", 4, 20, 100), bolt("b", 4, 30, 50), bolt("sink", 2), spout("spout", 4, 10, 60)}) {
    add_component(t, c);
  }
  t.edges = {Edge{"spout", "a", true}, Edge{"a", "b", true}, Edge{"b", "sink", false}};
  t.fuse_executors = fuse;
  return t;
}

// Slot of executor k of each component.
std::map<std::string, std::vector<WorkerSlot>> slots_by_component(const TopologyRequest& t,
                                                                  const TopologyPlacement& p) {
  std::map<std::string, std::vector<WorkerSlot>> out;
  for (std::size_t i = 0; i < t.executors.size(); ++i) {
    out[t.executors[i].component].push_back(p.executor_slots[i]);
  }
  return out;
}

TEST(FusionTest, FindsBoltsFedByLocalOrShuffleWithEqualParallelism) {
  EXPECT_EQ(fused_components(chain(true)),
            (std::map<std::string, std::string>{{"a", "spout"}, {"b", "a"}}));
  EXPECT_TRUE(fused_components(chain(false)).empty());

  TopologyRequest ticks = chain(true);
  ticks.components[1].ticks = true;  // b
  EXPECT_EQ(fused_components(ticks), (std::map<std::string, std::string>{{"a", "spout"}}));

  TopologyRequest two_inputs = chain(true);
  two_inputs.edges.push_back(Edge{"spout", "b", true});
  EXPECT_EQ(fused_components(two_inputs), (std::map<std::string, std::string>{{"a", "spout"}}));

  TopologyRequest shuffled = chain(true);
  shuffled.edges[0].local_or_shuffle = false;
  EXPECT_EQ(fused_components(shuffled), (std::map<std::string, std::string>{{"b", "a"}}));

  TopologyRequest uneven = chain(true);  // sink has 2 executors
  uneven.edges[2].local_or_shuffle = true;
  EXPECT_EQ(fused_components(uneven).count("sink"), 0u);
}

// A producer fed by a global or direct grouping has executors with unequal
// shares (global: all in one): fused, each of its bolt's executors would get
// one producer executor's share. Its bolt keeps its own executors, spread by
// local-or-shuffle; further down, fed evenly, a chain forms again.
TEST(FusionTest, NoBoltIsFusedIntoAProducerFedUnevenly) {
  TopologyRequest shuffled = chain(true);
  shuffled.edges[0].local_or_shuffle = false;
  EXPECT_EQ(fused_components(shuffled), (std::map<std::string, std::string>{{"b", "a"}}));

  TopologyRequest uneven = shuffled;
  uneven.edges[0].uneven = true;  // spout -> a by global or direct
  EXPECT_TRUE(fused_components(uneven).empty());
  EXPECT_FALSE(fuse(uneven).has_value());

  add_component(uneven, bolt("c", 4));
  uneven.edges.push_back(Edge{"b", "c", true});
  EXPECT_EQ(fused_components(uneven), (std::map<std::string, std::string>{{"c", "b"}}));
}

TEST(FusionTest, ResourceAwarePlacesEachChainExecutorWithItsHead) {
  // Nodes of one worker each, each holding at most two units (2 x 210 MB):
  // the 4 units and the sinks spread over several nodes.
  const Cluster cluster = make_cluster({2, 2}, 600, 400, 1);
  const TopologyRequest t = chain(true);
  const ScheduleResult r = schedule_ok(cluster, {t});
  const TopologyPlacement& p = r.topologies.at(0);
  ASSERT_TRUE(p.scheduled) << p.reason;
  auto by = slots_by_component(t, p);
  std::set<WorkerSlot> workers;
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(by["a"][k], by["spout"][k]) << k;
    EXPECT_EQ(by["b"][k], by["spout"][k]) << k;
    workers.insert(by["spout"][k]);
  }
  EXPECT_GT(workers.size(), 1u);  // the units did spread
  std::size_t listed = 0;
  for (const WorkerAssignment& w : p.workers) {
    listed += w.executors.size();
    EXPECT_TRUE(std::is_sorted(w.executors.begin(), w.executors.end()));
    for (ExecutorId e : w.executors) EXPECT_EQ(p.executor_slots[e.value()], w.slot);
  }
  EXPECT_EQ(listed, t.executors.size());
  for (const PlacementDecision& d : p.decisions) {
    const std::string& c = d.executor.value() < t.executors.size()
                               ? t.executors[d.executor.value()].component
                               : std::string(kAckerComponent);
    EXPECT_TRUE(c == "spout" || c == "sink" || c == kAckerComponent) << c;
  }
  // Pairs inside a unit are calls on one thread, not messages: only b -> sink
  // counts, in the placement and in the cost of the request as submitted.
  EXPECT_EQ(p.network.pairs(), 4u * 2u);
  std::map<WorkerSlot, std::uint32_t> worker;
  std::vector<ExecutorLocation> locations;
  for (const WorkerSlot& s : p.executor_slots) {
    const auto w = worker.emplace(s, static_cast<std::uint32_t>(worker.size())).first->second;
    const int node = std::stoi(s.node.value().substr(5));  // "node-N": r1 holds 1-2, r2 3-4
    locations.push_back(ExecutorLocation{w, w, node > 2 ? 1u : 0u});
  }
  EXPECT_EQ(network_cost(t, locations), p.network);
}

TEST(FusionTest, RoundRobinKeepsUnitsTogether) {
  const Cluster cluster = make_cluster({3}, 8192, 800, 4);
  TopologyRequest t = chain(true);
  t.strategy = Strategy::kRoundRobin;
  t.workers = 3;
  const TopologyPlacement p = schedule_ok(cluster, {t}).topologies.at(0);
  ASSERT_TRUE(p.scheduled) << p.reason;
  auto by = slots_by_component(t, p);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(by["a"][k], by["spout"][k]) << k;
    EXPECT_EQ(by["b"][k], by["spout"][k]) << k;
  }
  // Without fusion, executor i goes to worker i mod 3 and the chain is split.
  TopologyRequest apart = chain(false);
  apart.strategy = Strategy::kRoundRobin;
  apart.workers = 3;
  const TopologyPlacement q = schedule_ok(cluster, {apart}).topologies.at(0);
  auto by_q = slots_by_component(apart, q);
  int together = 0;
  for (int k = 0; k < 4; ++k) together += by_q["a"][k] == by_q["spout"][k] ? 1 : 0;
  EXPECT_LT(together, 4);
}

TEST(FusionTest, ARefusalNamesTheWholeUnit) {
  // A unit asks 210 MB (60 + 100 + 50); no node has more than 200, though
  // each of its executors alone would fit.
  const Cluster cluster = make_cluster({8}, 200, 400, 2);
  TopologyRequest t = chain(true);
  t.acker_executors = 0;
  t.worker_max_heap_mb = 2048;
  const TopologyPlacement p = schedule_ok(cluster, {t}).topologies.at(0);
  EXPECT_FALSE(p.scheduled);
  EXPECT_NE(p.reason.find("spout+a+b"), std::string::npos) << p.reason;
  EXPECT_NE(p.reason.find("210"), std::string::npos) << p.reason;
}

TEST(FusionTest, AUnitThatStaysIsNotMoved) {
  const Cluster cluster = make_cluster({2, 2}, 600, 400, 1);
  TopologyRequest t = chain(true);
  const TopologyPlacement first = schedule_ok(cluster, {t}).topologies.at(0);
  ASSERT_TRUE(first.scheduled) << first.reason;
  t.current.assign(first.executor_slots.begin(), first.executor_slots.end());
  const TopologyPlacement again = schedule_ok(cluster, {t}).topologies.at(0);
  ASSERT_TRUE(again.scheduled) << again.reason;
  EXPECT_EQ(again.moved_executors, 0);
  EXPECT_EQ(again.executor_slots, first.executor_slots);

  // One unit split (its a elsewhere): the whole unit is placed anew, together.
  // Executors: a 0-3, b 4-7, sink 8-9, spout 10-13.
  auto other = std::find_if(first.executor_slots.begin(), first.executor_slots.end(),
                            [&](const WorkerSlot& s) { return s != first.executor_slots[10]; });
  ASSERT_NE(other, first.executor_slots.end());
  t.current[0] = *other;  // a's executor 0, away from spout's executor 0
  const TopologyPlacement mended = schedule_ok(cluster, {t}).topologies.at(0);
  ASSERT_TRUE(mended.scheduled) << mended.reason;
  auto by = slots_by_component(t, mended);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(by["a"][k], by["spout"][k]) << k;
  EXPECT_GE(mended.moved_executors, 3);
}

}  // namespace
}  // namespace rstorm::scheduler
