#include "scheduler/network_cost.hpp"

#include <gtest/gtest.h>

#include "test_util.hpp"

namespace rstorm::scheduler {
namespace {

using testing::bolt;
using testing::make_topology;
using testing::spout;

TEST(NetworkCostTest, CountsEveryProducerConsumerPairByDistance) {
  // a0 a1 -> b0 b1; a0 and b0 share worker 0; a1 is alone in worker 1 on the
  // same node; b1 runs on node 1 of the same rack.
  TopologyRequest t = make_topology("t", {spout("a", 2), bolt("b", 2)}, {{"a", "b"}});
  std::vector<ExecutorLocation> loc = {{0, 0, 0}, {1, 0, 0}, {0, 0, 0}, {2, 1, 0}};
  const NetworkCost c = network_cost(t, loc);
  EXPECT_EQ(c.same_worker, 1u);  // a0-b0
  EXPECT_EQ(c.same_node, 1u);    // a1-b0
  EXPECT_EQ(c.same_rack, 2u);    // a0-b1, a1-b1
  EXPECT_EQ(c.cross_rack, 0u);
  EXPECT_EQ(c.pairs(), 4u);
  EXPECT_EQ(c.weighted(), 1u + 2u * 2u);
}

TEST(NetworkCostTest, DuplicateEdgesCountOnceAndSelfEdgesSkipTheExecutorItself) {
  TopologyRequest t =
      make_topology("t", {spout("a", 1), bolt("b", 3)}, {{"a", "b"}, {"a", "b"}, {"b", "b"}});
  // a0 in rack 0; b0 with it; b1, b2 in rack 1 on two nodes.
  std::vector<ExecutorLocation> loc = {{0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {2, 2, 1}};
  const NetworkCost c = network_cost(t, loc);
  // a->b: a0-b0 same worker, a0-b1 and a0-b2 cross rack.
  // b->b: 6 ordered pairs; b1<->b2 same rack (2), b0<->b1, b0<->b2 cross rack (4).
  EXPECT_EQ(c.same_worker, 1u);
  EXPECT_EQ(c.same_node, 0u);
  EXPECT_EQ(c.same_rack, 2u);
  EXPECT_EQ(c.cross_rack, 6u);
}

}  // namespace
}  // namespace rstorm::scheduler
