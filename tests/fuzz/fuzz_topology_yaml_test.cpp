// Topology and cluster descriptions that fuzz_topology_yaml found faults with:
// a count that would expand a short file into more than memory holds is an
// error naming the file, the line and the field, not hours of allocation.
#include <gtest/gtest.h>

#include "scheduler/yaml_loader.hpp"
#include "tests/fuzz/regression_input.hpp"

namespace rstorm::fuzz {
namespace {

using testing::regression_input;

TEST(FuzzTopologyYaml, ClusterWithANodeCountTypoIsRefused) {
  auto cluster =
      scheduler::parse_cluster(regression_input("fuzz_topology_yaml", "nodes-count"), "c.yaml");
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.error().message,
            "c.yaml:2: field 'racks[0].nodes': a cluster has at most 100000 nodes and 1000000 "
            "worker slots");
}

TEST(FuzzTopologyYaml, SlotCountPastTheLastPortIsRefused) {
  auto cluster =
      scheduler::parse_cluster(regression_input("fuzz_topology_yaml", "slots-count"), "c.yaml");
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.error().message,
            "c.yaml:1: field 'defaults.slots': ports from 6700 end at 65535: at most 58836 slots");
}

TEST(FuzzTopologyYaml, TopologyWithTwoBillionExecutorsIsRefused) {
  auto topology =
      scheduler::parse_topology(regression_input("fuzz_topology_yaml", "parallelism"), "t.yaml");
  ASSERT_FALSE(topology.ok());
  EXPECT_EQ(topology.error().message,
            "t.yaml:3: field 'components[0]': a topology has at most 1000000 tasks");
}

}  // namespace
}  // namespace rstorm::fuzz
