#include "scheduler/round_robin_scheduler.hpp"

#include <gtest/gtest.h>

#include <map>

#include "test_util.hpp"

namespace rstorm::scheduler {
namespace {

using testing::make_cluster;
using testing::make_topology;
using testing::schedule_ok;
using testing::spout;
using testing::usage_of;

TopologyRequest round_robin(TopologyRequest t, int workers) {
  t.strategy = Strategy::kRoundRobin;
  t.workers = workers;
  return t;
}

TEST(RoundRobinSchedulerTest, FreeSlotsInterleaveAcrossNodesMostFreeFirst) {
  Cluster cluster = make_cluster({3}, 4096, 400, 2);
  cluster.nodes[1].ports.push_back(6702);  // node-2 has three slots
  Result<ClusterState> state = ClusterState::Create(cluster);
  ASSERT_TRUE(state.ok());
  const std::vector<WorkerSlot> slots = interleaved_free_slots(state.value());
  const std::vector<WorkerSlot> expected = {{NodeId("node-2"), 6700}, {NodeId("node-1"), 6700},
                                            {NodeId("node-3"), 6700}, {NodeId("node-2"), 6701},
                                            {NodeId("node-1"), 6701}, {NodeId("node-3"), 6701},
                                            {NodeId("node-2"), 6702}};
  EXPECT_EQ(slots, expected);
}

TEST(RoundRobinSchedulerTest, SpreadsExecutorsEvenlyOverTopologyWorkers) {
  Cluster cluster = make_cluster({6, 6});
  TopologyRequest t = round_robin(make_topology("t", {spout("s", 30)}, {}), 12);
  ScheduleResult r = schedule_ok(cluster, {t});
  const TopologyPlacement& p = r.topologies[0];
  ASSERT_TRUE(p.scheduled);
  ASSERT_EQ(p.workers.size(), 12u);
  std::map<std::string, int> per_node;
  for (const WorkerAssignment& w : p.workers) {
    // 30 over 12 workers: six get 3, six get 2.
    EXPECT_GE(w.executors.size(), 2u);
    EXPECT_LE(w.executors.size(), 3u);
    EXPECT_EQ(w.ackers, 1);
    ++per_node[w.slot.node.value()];
  }
  EXPECT_EQ(per_node.size(), 12u);  // one worker on every node
  // Executor i goes to worker i % 12: executors 0 and 12 share a worker.
  EXPECT_EQ(p.executor_slots[0], p.executor_slots[12]);
  EXPECT_NE(p.executor_slots[0], p.executor_slots[1]);
}

TEST(RoundRobinSchedulerTest, IsBlindToMemoryAndReportsTheOvercommit) {
  Cluster cluster = make_cluster({1}, 1024);
  TopologyRequest t = round_robin(make_topology("t", {spout("s", 3, 10, 512)}, {}), 1);
  t.acker_executors = 0;
  ScheduleResult r = schedule_ok(cluster, {t});
  const TopologyPlacement& p = r.topologies[0];
  ASSERT_TRUE(p.scheduled);
  EXPECT_EQ(p.warnings,
            (std::vector<std::string>{"node node-1 memory overcommitted: 1536 of 1024 MB used"}));
  EXPECT_EQ(usage_of(r, "node-1").memory_used_mb, 1536);
}

TEST(RoundRobinSchedulerTest, IsBlindToGenericResourcesAndReportsTheOvercommit) {
  Cluster cluster = make_cluster({1});
  ComponentSpec train = spout("train", 2);
  train.generic["gpu.count"] = 1;
  TopologyRequest t = round_robin(make_topology("t", {train}, {}), 1);
  ScheduleResult r = schedule_ok(cluster, {t});
  ASSERT_TRUE(r.topologies[0].scheduled);
  EXPECT_EQ(r.topologies[0].warnings,
            (std::vector<std::string>{"node node-1 gpu.count overcommitted: 2 of 0 used"}));
}

TEST(RoundRobinSchedulerTest, NoFreeSlotIsUnschedulable) {
  Cluster cluster = make_cluster({2}, 4096, 400, 0);
  TopologyRequest t = round_robin(make_topology("t", {spout("s", 2)}, {}), 2);
  ScheduleResult r = schedule_ok(cluster, {t});
  EXPECT_FALSE(r.topologies[0].scheduled);
  EXPECT_EQ(r.topologies[0].reason,
            "topology 't' needs 2 worker slots; every slot of the cluster is taken");
}

TEST(RoundRobinSchedulerTest, ReschedulingAfterNodeLossMovesOnlyItsExecutors) {
  Cluster cluster = make_cluster({4});
  TopologyRequest t = round_robin(make_topology("t", {spout("s", 8)}, {}), 4);
  ScheduleResult before = schedule_ok(cluster, {t});
  ASSERT_TRUE(before.topologies[0].scheduled);
  const std::vector<WorkerSlot> old = before.topologies[0].executor_slots;
  Cluster after_loss = cluster;
  std::erase_if(after_loss.nodes, [](const NodeSpec& n) { return n.id.value() == "node-2"; });
  t.current.assign(old.begin(), old.end());
  ScheduleResult after = schedule_ok(after_loss, {t});
  const TopologyPlacement& p = after.topologies[0];
  ASSERT_TRUE(p.scheduled);
  EXPECT_EQ(p.moved_executors, 2);  // 8 executors over 4 nodes: two were on node-2
  EXPECT_EQ(p.workers.size(), 4u);  // the lost worker is replaced by one new worker
  for (std::size_t i = 0; i < old.size(); ++i) {
    if (old[i].node.value() == "node-2") {
      EXPECT_NE(p.executor_slots[i].node.value(), "node-2");
    } else {
      EXPECT_EQ(p.executor_slots[i], old[i]);
    }
  }
}

}  // namespace
}  // namespace rstorm::scheduler
