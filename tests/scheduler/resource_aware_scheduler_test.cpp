#include "scheduler/resource_aware_scheduler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "scheduler/cluster_state.hpp"
#include "scheduler/placement_order.hpp"
#include "test_util.hpp"

namespace rstorm::scheduler {
namespace {

using testing::bolt;
using testing::make_cluster;
using testing::make_topology;
using testing::nodes_of;
using testing::schedule_ok;
using testing::spout;
using testing::usage_of;

TEST(ResourceAwareOrderTest, ComponentsBreadthFirstFromSpoutsWithEdgesBothWays) {
  // spout -> a -> b <- c (c reached backwards from b); d is disconnected.
  TopologyRequest t = make_topology(
      "t", {bolt("d", 1), bolt("c", 1), bolt("b", 1), bolt("a", 1), spout("spout", 1)},
      {{"spout", "a"}, {"a", "b"}, {"c", "b"}});
  EXPECT_EQ(component_order(t), (std::vector<std::string>{"spout", "a", "b", "c", "d"}));
}

TEST(ResourceAwareOrderTest, ExecutorsInterleaveAcrossOrderedComponents) {
  TopologyRequest t = make_topology("t", {spout("s", 2), bolt("a", 3)}, {{"s", "a"}});
  // executors: s0=0 s1=1 a0=2 a1=3 a2=4; one per component per pass.
  EXPECT_EQ(executor_order(t, t.executors), (std::vector<std::uint32_t>{0, 2, 1, 3, 4}));
}

TEST(ResourceAwareSchedulerTest, FirstExecutorGoesToTheRackWithMostFree) {
  Cluster cluster = make_cluster({2, 3});  // r1: node-1..2, r2: node-3..5
  TopologyRequest t = make_topology("t", {spout("s", 1)}, {});
  ScheduleResult r = schedule_ok(cluster, {t});
  ASSERT_TRUE(r.topologies[0].scheduled);
  EXPECT_EQ(nodes_of(r.topologies[0]), (std::vector<std::string>{"node-3"}));
}

TEST(ResourceAwareSchedulerTest, NeighboursShareANodeUntilItsCpuRunsOut) {
  // Each executor 100 points, each new worker's acker 10: node-1 takes
  // 110 + 100 + 100 = 310, the fourth (100) no longer fits in the 90 left.
  Cluster cluster = make_cluster({3});
  TopologyRequest t = make_topology("t", {spout("s", 4, 100)}, {});
  ScheduleResult r = schedule_ok(cluster, {t});
  ASSERT_TRUE(r.topologies[0].scheduled);
  EXPECT_EQ(nodes_of(r.topologies[0]),
            (std::vector<std::string>{"node-1", "node-1", "node-1", "node-2"}));
  EXPECT_TRUE(r.topologies[0].warnings.empty());
  EXPECT_EQ(usage_of(r, "node-1").cpu_used, 310);
  EXPECT_EQ(usage_of(r, "node-2").cpu_used, 110);
}

TEST(ResourceAwareSchedulerTest, DecisionsRecordTheDistanceTermsOfEveryPlacement) {
  Cluster cluster = make_cluster({3});
  TopologyRequest t = make_topology("t", {spout("s", 4, 100)}, {});
  ScheduleResult r = schedule_ok(cluster, {t});
  const std::vector<PlacementDecision>& d = r.topologies[0].decisions;
  ASSERT_EQ(d.size(), 4u);
  // The first: a new worker (128 MB + its 128 MB acker, 100 + 10 points) on an
  // empty node of the rack with most free.
  EXPECT_EQ(d[0].slot, (WorkerSlot{NodeId("node-1"), 6700}));
  EXPECT_TRUE(d[0].new_worker);
  EXPECT_DOUBLE_EQ(d[0].memory, (4096.0 - 256) / 4096);
  EXPECT_DOUBLE_EQ(d[0].cpu, (400.0 - 110) / 400);
  EXPECT_DOUBLE_EQ(d[0].network, 0.5);
  // The second joins that worker on the same node.
  EXPECT_FALSE(d[1].new_worker);
  EXPECT_DOUBLE_EQ(d[1].memory, (4096.0 - 256 - 128) / 4096);
  EXPECT_DOUBLE_EQ(d[1].cpu, (290.0 - 100) / 400);
  EXPECT_DOUBLE_EQ(d[1].network, 0);
  // The fourth moves to node-2 of the same rack.
  EXPECT_EQ(d[3].slot, (WorkerSlot{NodeId("node-2"), 6700}));
  EXPECT_DOUBLE_EQ(d[3].network, 0.5);
}

TEST(ResourceAwareSchedulerTest, ExecutorsOnANodePackIntoAsFewWorkersAsTheHeapAllows) {
  // 768 MB heap, 128 of it the acker: five 128 MB executors per worker.
  Cluster cluster = make_cluster({1});
  TopologyRequest t = make_topology("t", {spout("s", 10, 1)}, {});
  ScheduleResult r = schedule_ok(cluster, {t});
  const TopologyPlacement& p = r.topologies[0];
  ASSERT_TRUE(p.scheduled);
  ASSERT_EQ(p.workers.size(), 2u);
  EXPECT_EQ(p.workers[0].executors.size(), 5u);
  EXPECT_EQ(p.workers[1].executors.size(), 5u);
  EXPECT_EQ(p.workers[0].heap_mb, 768);
  EXPECT_EQ(p.workers[0].ackers, 1);
  EXPECT_EQ(usage_of(r, "node-1").memory_used_mb, 10 * 128 + 2 * 128);
}

TEST(ResourceAwareSchedulerTest, ExplicitAckerExecutorsArePlacedLikeExecutors) {
  Cluster cluster = make_cluster({1});
  TopologyRequest t = make_topology("t", {spout("s", 3)}, {});
  t.acker_executors = 2;
  ScheduleResult r = schedule_ok(cluster, {t});
  const TopologyPlacement& p = r.topologies[0];
  ASSERT_TRUE(p.scheduled);
  int ackers = 0;
  for (const WorkerAssignment& w : p.workers) ackers += w.ackers;
  EXPECT_EQ(ackers, 2);
  EXPECT_EQ(usage_of(r, "node-1").memory_used_mb, 5 * 128);
}

TEST(ResourceAwareSchedulerTest, MemoryIsAHardLimit) {
  // 1024 MB nodes, 512 MB executors, no ackers: two per node.
  Cluster cluster = make_cluster({3}, 1024);
  TopologyRequest t = make_topology("t", {spout("s", 5, 1, 512)}, {});
  t.acker_executors = 0;
  ScheduleResult r = schedule_ok(cluster, {t});
  ASSERT_TRUE(r.topologies[0].scheduled);
  EXPECT_EQ(nodes_of(r.topologies[0]),
            (std::vector<std::string>{"node-1", "node-1", "node-2", "node-2", "node-3"}));
  for (const NodeUsage& n : r.nodes) EXPECT_LE(n.memory_used_mb, n.memory_capacity_mb);
}

TEST(ResourceAwareSchedulerTest, CpuOvercommitOnlyWhenNoNodeHasTheCpuAndIsReported) {
  // Two 100-point nodes, two 80-point executors: one on each, no overcommit.
  Cluster spread = make_cluster({2}, 4096, 100);
  TopologyRequest t = make_topology("t", {spout("s", 2, 80)}, {});
  t.acker_executors = 0;
  ScheduleResult r = schedule_ok(spread, {t});
  ASSERT_TRUE(r.topologies[0].scheduled);
  EXPECT_EQ(nodes_of(r.topologies[0]), (std::vector<std::string>{"node-1", "node-2"}));
  EXPECT_TRUE(r.topologies[0].cpu_overcommits.empty());

  // One node: the second has nowhere else to go; it is placed and reported.
  Cluster one = make_cluster({1}, 4096, 100);
  r = schedule_ok(one, {t});
  const TopologyPlacement& p = r.topologies[0];
  ASSERT_TRUE(p.scheduled);
  ASSERT_EQ(p.cpu_overcommits.size(), 1u);
  EXPECT_EQ(p.cpu_overcommits[0].executor, ExecutorId(1));
  EXPECT_EQ(p.warnings, (std::vector<std::string>{
                            "executor s[2] overcommits CPU on node-1: asks 80 points, 20 "
                            "free; no node that can take it has that much CPU free"}));
  EXPECT_EQ(usage_of(r, "node-1").cpu_used, 160);
}

// The overcommit's warning says why a node with more CPU free than the
// executor asks did not take it: a new worker there brings its acker's CPU.
TEST(ResourceAwareSchedulerTest, AnOvercommitSaysWhyANodeWithTheExecutorsCpuFreeCouldNotTakeIt) {
  // node-1 (rack r1) 100 points; node-2 (rack r2) 65. s (60) opens a worker
  // on node-1 (60 + its acker's 10); b (60) fits in neither: node-1 has 30
  // left, node-2 would need 70 for a new worker. It joins s's worker.
  Cluster cluster = make_cluster({1, 1}, 4096, 100);
  cluster.nodes[1].cpu = 65;
  TopologyRequest t = make_topology("t", {spout("s", 1, 60), bolt("b", 1, 60)}, {{"s", "b"}});
  ScheduleResult r = schedule_ok(cluster, {t});
  const TopologyPlacement& p = r.topologies[0];
  ASSERT_TRUE(p.scheduled);
  EXPECT_EQ(nodes_of(p), (std::vector<std::string>{"node-1", "node-1"}));
  EXPECT_EQ(p.warnings,
            (std::vector<std::string>{
                "executor b[2] overcommits CPU on node-1: asks 60 points, 30 free; no node that "
                "can take it has that much CPU free (a node has 65 points free, but a new worker "
                "there takes 70 with its acker's 10)"}));
}

TEST(ResourceAwareSchedulerTest, GenericResourcesAreHardLimits) {
  Cluster cluster = make_cluster({2});
  cluster.nodes[1].generic["gpu.count"] = 2;  // node-2
  ComponentSpec train = bolt("train", 2);
  train.generic["gpu.count"] = 1;
  TopologyRequest t = make_topology("t", {spout("s", 1), train}, {{"s", "train"}});
  ScheduleResult r = schedule_ok(cluster, {t});
  ASSERT_TRUE(r.topologies[0].scheduled);
  EXPECT_EQ(r.topologies[0].executor_slots[1].node.value(), "node-2");
  EXPECT_EQ(r.topologies[0].executor_slots[2].node.value(), "node-2");
  EXPECT_EQ(usage_of(r, "node-2").generic_used.at("gpu.count"), 2);
}

TEST(ResourceAwareSchedulerTest, TopologyFittingInOneRackHasNoCrossRackPair) {
  Cluster cluster = make_cluster({6, 6});
  TopologyRequest t = make_topology("t", {spout("s", 8, 40), bolt("a", 8, 40), bolt("b", 8, 40)},
                                    {{"s", "a"}, {"a", "b"}});
  ScheduleResult r = schedule_ok(cluster, {t});
  ASSERT_TRUE(r.topologies[0].scheduled);
  EXPECT_EQ(r.topologies[0].network.cross_rack, 0u);
  EXPECT_EQ(r.topologies[0].network.pairs(), 128u);
}

TEST(ResourceAwareSchedulerTest, UnschedulableComponentNamesWhatItAsksAndTheLargestFreeNode) {
  Cluster cluster = make_cluster({3}, 1536);
  cluster.nodes[2].memory_mb = 2048;  // node-3
  ComponentSpec count = bolt("count", 1, 10, 512);
  count.offheap_mb = 3584;
  TopologyRequest t = make_topology("wc", {spout("s", 1), count}, {{"s", "count"}});
  ScheduleResult r = schedule_ok(cluster, {t});
  EXPECT_FALSE(r.topologies[0].scheduled);
  EXPECT_EQ(r.topologies[0].reason,
            "component 'count' asks 4096 MB per executor; the largest free node has 2048 MB "
            "(node-3, rack r1)");
  for (const NodeUsage& n : r.nodes) EXPECT_EQ(n.memory_used_mb, 0);
}

TEST(ResourceAwareSchedulerTest, RequestLargerThanTheClusterIsRefusedBeforeAnySearch) {
  Cluster cluster = make_cluster({2}, 4096);
  TopologyRequest t = make_topology("big", {spout("s", 80, 1, 256)}, {});
  ScheduleResult r = schedule_ok(cluster, {t});
  EXPECT_FALSE(r.topologies[0].scheduled);
  EXPECT_EQ(r.topologies[0].reason,
            "topology 'big' asks 20480 MB in total; the whole cluster has 8192 MB free");
}

TEST(ResourceAwareSchedulerTest, OnHeapLargerThanTheWorkerHeapIsRefused) {
  Cluster cluster = make_cluster({1});
  TopologyRequest t = make_topology("t", {spout("s", 1, 10, 700)}, {});
  ScheduleResult r = schedule_ok(cluster, {t});
  EXPECT_FALSE(r.topologies[0].scheduled);
  EXPECT_EQ(r.topologies[0].reason,
            "component 's' asks 700 MB on-heap per executor; topology.worker.max.heap.size.mb "
            "is 768 and the worker's acker takes 128 MB of it");
}

TEST(ResourceAwareSchedulerTest, GenericResourceShortfallNamesTheMostAnyNodeHas) {
  Cluster cluster = make_cluster({1, 1});
  cluster.nodes[1].generic["gpu.count"] = 1;  // node-2, rack r2
  cluster.nodes[0].generic["gpu.count"] = 1;
  ComponentSpec train = spout("train", 1);
  train.generic["gpu.count"] = 2;
  TopologyRequest t = make_topology("t", {train}, {});
  ScheduleResult r = schedule_ok(cluster, {t});
  EXPECT_FALSE(r.topologies[0].scheduled);
  EXPECT_EQ(r.topologies[0].reason,
            "component 'train' asks 2 gpu.count per executor; the most any node has free is 1 "
            "(node-1, rack r1)");
}

TEST(ResourceAwareSchedulerTest, NoFreeSlotIsReported) {
  Cluster cluster = make_cluster({2}, 4096, 400, 0);
  TopologyRequest t = make_topology("t", {spout("s", 1)}, {});
  ScheduleResult r = schedule_ok(cluster, {t});
  EXPECT_FALSE(r.topologies[0].scheduled);
  EXPECT_EQ(r.topologies[0].reason,
            "component 's' needs a worker slot; every slot of the cluster (2 nodes) is taken");
}

TEST(ResourceAwareSchedulerTest, UnschedulableTopologyIsNotHalfPlacedAndLeavesOthersAlone) {
  // a takes 300 of node-1's 1000 MB. b's three 550 MB executors pass every
  // up-front check (1650 <= 1700 free, 550 <= 1000) but only two fit.
  Cluster cluster = make_cluster({2}, 1000);
  TopologyRequest a = make_topology("a", {spout("s", 1, 1, 300)}, {});
  a.acker_executors = 0;
  TopologyRequest b = make_topology("b", {spout("x", 3, 1, 550)}, {});
  b.acker_executors = 0;
  b.priority = 1;
  ScheduleResult r = schedule_ok(cluster, {b, a});
  EXPECT_TRUE(r.topologies[1].scheduled);
  EXPECT_FALSE(r.topologies[0].scheduled);
  // About the cluster as it is, not where a search stopped.
  EXPECT_EQ(r.topologies[0].reason,
            "topology 'b': its 3 executors ask 1650 MB (the largest 550 MB), in workers of at "
            "most 768 MB heap; no placement found (R-Storm's order, first-fit and best-fit "
            "decreasing) in what the cluster has free: node-2 1000 MB, 400 CPU, 4 of 4 slots; "
            "node-1 700 MB, 399 CPU, 3 of 4 slots");
  EXPECT_TRUE(r.topologies[0].executor_slots.empty());
  EXPECT_EQ(usage_of(r, "node-1").memory_used_mb, 300);
  EXPECT_EQ(usage_of(r, "node-2").memory_used_mb, 0);
  EXPECT_EQ(usage_of(r, "node-1").slots_used, 1);
  EXPECT_EQ(usage_of(r, "node-2").slots_used, 0);
}

TEST(ResourceAwareSchedulerTest, LowerPriorityNumberIsScheduledFirst) {
  // Each topology needs 3 of the 4 GB: only the first scheduled fits.
  Cluster cluster = make_cluster({1}, 4096, 400, 8);
  TopologyRequest low = make_topology("low", {spout("s", 6, 1, 512)}, {});
  low.acker_executors = 0;
  low.priority = 5;
  TopologyRequest high = make_topology("high", {spout("s", 6, 1, 512)}, {});
  high.acker_executors = 0;
  high.priority = 0;
  ScheduleResult r = schedule_ok(cluster, {low, high});
  EXPECT_FALSE(r.topologies[0].scheduled);
  EXPECT_TRUE(r.topologies[1].scheduled);
  EXPECT_EQ(r.topologies[0].reason,
            "topology 'low' asks 3072 MB in total; the whole cluster has 1024 MB free");
}

TEST(ResourceAwareSchedulerTest, SameInputGivesTheSamePlacementWhateverTheNodeOrder) {
  Cluster cluster = make_cluster({5, 5, 5}, 2048, 200);
  TopologyRequest t =
      make_topology("t", {spout("s", 7, 35), bolt("a", 9, 25, 256), bolt("b", 5, 60)},
                    {{"s", "a"}, {"a", "b"}, {"s", "b"}});
  ScheduleResult first = schedule_ok(cluster, {t});
  ASSERT_TRUE(first.topologies[0].scheduled);
  std::mt19937 rng(7);
  for (int i = 0; i < 5; ++i) {
    Cluster shuffled = cluster;
    std::shuffle(shuffled.nodes.begin(), shuffled.nodes.end(), rng);
    ScheduleResult again = schedule_ok(shuffled, {t});
    EXPECT_EQ(again.topologies[0].executor_slots, first.topologies[0].executor_slots);
    EXPECT_EQ(again.topologies[0].network, first.topologies[0].network);
  }
}

TEST(ResourceAwareSchedulerTest, ReschedulingAfterNodeLossMovesOnlyItsExecutors) {
  Cluster cluster = make_cluster({6, 6});
  TopologyRequest t = make_topology("t", {spout("s", 8, 40), bolt("a", 12, 20), bolt("b", 12, 20)},
                                    {{"s", "a"}, {"a", "b"}});
  ScheduleResult before = schedule_ok(cluster, {t});
  ASSERT_TRUE(before.topologies[0].scheduled);
  const std::vector<WorkerSlot> old = before.topologies[0].executor_slots;
  const NodeId lost = old[0].node;
  int on_lost = 0;
  for (const WorkerSlot& s : old) on_lost += s.node == lost ? 1 : 0;
  ASSERT_GT(on_lost, 0);
  ASSERT_LT(on_lost, static_cast<int>(old.size()));

  Cluster after_loss = cluster;
  std::erase_if(after_loss.nodes, [&](const NodeSpec& n) { return n.id == lost; });
  t.current.assign(old.begin(), old.end());
  ScheduleResult after = schedule_ok(after_loss, {t});
  const TopologyPlacement& p = after.topologies[0];
  ASSERT_TRUE(p.scheduled);
  EXPECT_EQ(p.moved_executors, on_lost);
  for (std::size_t i = 0; i < old.size(); ++i) {
    if (old[i].node == lost) {
      EXPECT_NE(p.executor_slots[i].node, lost);
    } else {
      EXPECT_EQ(p.executor_slots[i], old[i]) << "executor " << i << " moved";
    }
  }
  for (const NodeUsage& n : after.nodes) EXPECT_LE(n.memory_used_mb, n.memory_capacity_mb);
}

TEST(ResourceAwareSchedulerTest, ANewTopologyPlacedFirstLeavesTheSlotsOthersRunInAlone) {
  Cluster cluster = make_cluster({1});
  // "b" runs alone now; "a" comes and is placed first (its id sorts first).
  TopologyRequest b = make_topology("b", {spout("s", 2), bolt("x", 2)}, {{"s", "x"}});
  ScheduleResult before = schedule_ok(cluster, {b});
  ASSERT_TRUE(before.topologies[0].scheduled);
  b.current.assign(before.topologies[0].executor_slots.begin(),
                   before.topologies[0].executor_slots.end());
  TopologyRequest a = make_topology("a", {spout("s", 1)}, {});
  ScheduleResult after = schedule_ok(cluster, {a, b});
  ASSERT_TRUE(after.topologies[0].scheduled);
  ASSERT_TRUE(after.topologies[1].scheduled);
  EXPECT_EQ(after.topologies[1].moved_executors, 0);
  EXPECT_EQ(after.topologies[1].executor_slots, before.topologies[0].executor_slots);
  for (const WorkerSlot& slot : after.topologies[0].executor_slots) {
    for (const WorkerSlot& taken : before.topologies[0].executor_slots) {
      EXPECT_NE(slot, taken) << "'a' took a slot 'b' runs in";
    }
  }
}

// A topology placed before one that runs (its id sorts first, or its priority
// is higher) sees the memory and CPU the running one's kept executors hold:
// it is not put where they are, to then find the node over its capacity.
TEST(ResourceAwareSchedulerTest, ANewTopologyPlacedFirstSeesTheResourcesOthersHold) {
  Cluster cluster = make_cluster({2}, /*memory_mb=*/1000, /*cpu=*/100);
  TopologyRequest b = make_topology("b", {spout("s", 1, /*cpu=*/70, /*onheap_mb=*/500)}, {});
  ScheduleResult before = schedule_ok(cluster, {b});
  ASSERT_TRUE(before.topologies[0].scheduled);
  b.current.assign(before.topologies[0].executor_slots.begin(),
                   before.topologies[0].executor_slots.end());
  const NodeId held = before.topologies[0].executor_slots[0].node;

  TopologyRequest a = make_topology("a", {spout("s", 1, /*cpu=*/20, /*onheap_mb=*/500)}, {});
  ScheduleResult after = schedule_ok(cluster, {a, b});
  ASSERT_TRUE(after.topologies[0].scheduled) << after.topologies[0].reason;
  ASSERT_TRUE(after.topologies[1].scheduled) << after.topologies[1].reason;
  EXPECT_EQ(after.topologies[1].executor_slots, before.topologies[0].executor_slots);
  EXPECT_NE(after.topologies[0].executor_slots[0].node, held);
  EXPECT_TRUE(after.topologies[0].warnings.empty());
  EXPECT_TRUE(after.topologies[1].warnings.empty());
  for (const NodeUsage& n : after.nodes) {
    EXPECT_LE(n.memory_used_mb, n.memory_capacity_mb) << n.node.value();
    EXPECT_LE(n.cpu_used, n.cpu_capacity) << n.node.value();
  }

  // With no room left beside b, a is refused and b keeps running as it was.
  Cluster one = make_cluster({1}, 1000, 100);
  ScheduleResult alone = schedule_ok(one, {b});
  ASSERT_TRUE(alone.topologies[0].scheduled);
  b.current.assign(alone.topologies[0].executor_slots.begin(),
                   alone.topologies[0].executor_slots.end());
  ScheduleResult full = schedule_ok(one, {a, b});
  EXPECT_FALSE(full.topologies[0].scheduled);
  ASSERT_TRUE(full.topologies[1].scheduled) << full.topologies[1].reason;
  EXPECT_EQ(full.topologies[1].moved_executors, 0);
  EXPECT_LE(full.nodes[0].memory_used_mb, full.nodes[0].memory_capacity_mb);
}

TEST(ResourceAwareSchedulerTest, InvalidRequestIsReportedNotScheduled) {
  Cluster cluster = make_cluster({1});
  TopologyRequest t = make_topology("t", {spout("s", 1)}, {{"s", "missing"}});
  ScheduleResult r = schedule_ok(cluster, {t});
  EXPECT_FALSE(r.topologies[0].scheduled);
  EXPECT_EQ(r.topologies[0].reason,
            "topology 't' has an edge from 's' to 'missing' but no component 'missing'");
}

TEST(ResourceAwareSchedulerTest, TopologySubmittedTwiceIsReportedOnce) {
  Cluster cluster = make_cluster({1});
  TopologyRequest t = make_topology("t", {spout("s", 1)}, {});
  ScheduleResult r = schedule_ok(cluster, {t, t});
  EXPECT_TRUE(r.topologies[0].scheduled);
  EXPECT_FALSE(r.topologies[1].scheduled);
  EXPECT_EQ(r.topologies[1].reason, "topology 't' is submitted twice");
}

TEST(ResourceAwareSchedulerTest, CurrentAssignmentOfTheWrongSizeIsReported) {
  Cluster cluster = make_cluster({1});
  TopologyRequest t = make_topology("t", {spout("s", 2)}, {});
  t.current.push_back(WorkerSlot{NodeId("node-1"), 6700});
  ScheduleResult r = schedule_ok(cluster, {t});
  EXPECT_FALSE(r.topologies[0].scheduled);
  EXPECT_EQ(r.topologies[0].reason,
            "topology 't': the current assignment has 1 executors, the request 2");
}

TEST(ResourceAwareSchedulerTest, SlotUsedOnAnUnknownNodeIsAnError) {
  Cluster cluster = make_cluster({1});
  cluster.used.push_back(SlotUsage{WorkerSlot{NodeId("ghost"), 6700}, TopologyId("old"), 1, 1, {}});
  Result<ScheduleResult> r = schedule(cluster, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "topology 'old' uses unknown node 'ghost'");
}

TEST(ResourceAwareSchedulerTest, OtherTopologiesSlotsAndResourcesAreRespected) {
  // node-1 already runs a worker using 3968 of its 4096 MB: the new topology
  // goes to node-2 even though node-1 sorts first.
  Cluster cluster = make_cluster({2});
  cluster.used.push_back(
      SlotUsage{WorkerSlot{NodeId("node-1"), 6700}, TopologyId("old"), 3968, 100, {}});
  TopologyRequest t = make_topology("t", {spout("s", 2)}, {});
  ScheduleResult r = schedule_ok(cluster, {t});
  ASSERT_TRUE(r.topologies[0].scheduled);
  EXPECT_EQ(nodes_of(r.topologies[0]), (std::vector<std::string>{"node-2", "node-2"}));
  EXPECT_EQ(usage_of(r, "node-1").slots_used, 1);
  EXPECT_EQ(usage_of(r, "node-1").memory_used_mb, 3968);
}

TEST(ResourceAwareSchedulerTest, NodesAndRacksAreInNaturalOrderWhateverTheOrderGiven) {
  // 12 nodes in three racks, given in reverse: node-10 sorts after node-9,
  // r10 after r9, and each rack lists its nodes in that order.
  Cluster cluster;
  for (int i = 12; i >= 1; --i) {
    NodeSpec node;
    node.id = NodeId("node-" + std::to_string(i));
    node.rack = RackId(i <= 4 ? "r9" : i <= 8 ? "r10" : "r1");
    node.memory_mb = 4096;
    node.cpu = 400;
    node.ports = {6701, 6700};
    cluster.nodes.push_back(std::move(node));
  }
  Result<ClusterState> state = ClusterState::Create(cluster);
  ASSERT_TRUE(state.ok()) << state.error().message;
  for (std::uint32_t n = 0; n < 12; ++n) {
    EXPECT_EQ(state.value().node(n).spec->id.value(), "node-" + std::to_string(n + 1));
    EXPECT_EQ(state.value().node(n).free_ports, (std::vector<int>{6700, 6701}));
    EXPECT_EQ(state.value().find(NodeId("node-" + std::to_string(n + 1))), n);
  }
  ASSERT_EQ(state.value().rack_count(), 3u);
  EXPECT_EQ(state.value().rack_id(0).value(), "r1");
  EXPECT_EQ(state.value().rack_id(1).value(), "r9");
  EXPECT_EQ(state.value().rack_id(2).value(), "r10");
  EXPECT_EQ(state.value().rack_nodes(0), (std::vector<std::uint32_t>{8, 9, 10, 11}));
  EXPECT_EQ(state.value().rack_nodes(1), (std::vector<std::uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(state.value().rack_nodes(2), (std::vector<std::uint32_t>{4, 5, 6, 7}));
  EXPECT_EQ(state.value().find(NodeId("node-13")), kNoNode);
}

TEST(ResourceAwareSchedulerTest, OvercommitWarningsAreOnePerComponent) {
  // One 100-point node: after s's first executor (30 points), b's (90) and
  // s's seven others overcommit. One warning per component, in the order of
  // their first overcommit, the first five of 's' listed.
  Cluster one = make_cluster({1}, 8192, 100, 4);
  TopologyRequest t = make_topology("t", {spout("s", 8, 30), bolt("b", 1, 90)}, {{"s", "b"}});
  t.acker_executors = 0;
  ScheduleResult r = schedule_ok(one, {t});
  const TopologyPlacement& p = r.topologies[0];
  ASSERT_TRUE(p.scheduled) << p.reason;
  ASSERT_EQ(p.cpu_overcommits.size(), 8u);
  // Named as the placement lists them: component[task].
  EXPECT_EQ(p.warnings,
            (std::vector<std::string>{
                "executor b[9] overcommits CPU on node-1: asks 90 points, 70 free; no node that "
                "can take it has that much CPU free",
                "7 executors of 's' overcommit CPU, as no node that can take them has that much "
                "free: s[2] on node-1 asks 30 points, 0 free; s[3] on node-1 asks 30 points, 0 "
                "free; s[4] on node-1 asks 30 points, 0 free; s[5] on node-1 asks 30 points, 0 "
                "free; s[6] on node-1 asks 30 points, 0 free; and 2 more"}));
}

TEST(ResourceAwareSchedulerTest, AmountsReadAsPrintfWritesThem) {
  // Whole amounts (within 1e-9) with no decimals, others with one, as %.0f
  // and %.1f: messages and warnings keep their text.
  std::mt19937_64 rng(7);
  std::vector<double> values = {0,    -0.0, 1,     0.05,   0.15,  0.25, 2.5,
                                -2.5, 128,  1e-10, 1e300, -1e300, 3.95, 99.99999999999};
  for (int i = 0; i < 2000; ++i) {
    values.push_back(std::uniform_real_distribution<double>(-1e6, 1e6)(rng));
    values.push_back(static_cast<double>(rng() % 100000) / 20);
  }
  for (double v : values) {
    char expected[400];
    if (std::abs(v - std::round(v)) < 1e-9) {
      std::snprintf(expected, sizeof expected, "%.0f", std::round(v));
    } else {
      std::snprintf(expected, sizeof expected, "%.1f", v);
    }
    EXPECT_EQ(format_amount(v), expected) << v;
  }
}

TEST(ResourceAwareSchedulerTest, APortListedTwiceIsAnError) {
  Cluster cluster = make_cluster({2});
  cluster.nodes[1].ports = {6700, 6701, 6700};
  Result<ScheduleResult> r = schedule(cluster, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "node 'node-2' lists a port twice");
}

TEST(ResourceAwareSchedulerTest, DuplicateNodeIdIsAnError) {
  Cluster cluster = make_cluster({2});
  cluster.nodes[1].id = cluster.nodes[0].id;
  Result<ScheduleResult> r = schedule(cluster, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "node 'node-1' is listed twice");
}

}  // namespace
}  // namespace rstorm::scheduler
