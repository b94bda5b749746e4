// The R-Storm paper's five topologies (both variants) on the paper's cluster,
// loaded from the shipped YAML files: the resource-aware placement costs less
// network than Storm's round-robin on every one.
#include <gtest/gtest.h>

#include <string>

#include "scheduler/yaml_loader.hpp"
#include "test_util.hpp"

namespace rstorm::scheduler {
namespace {

const std::string kSource = RSTORM_SOURCE_DIR;

class PaperTopologyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PaperTopologyTest, ResourceAwareCostsLessNetworkThanRoundRobin) {
  Result<Cluster> cluster = load_cluster_file(kSource + "/conf/clusters/rstorm-paper.yaml");
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  ASSERT_EQ(cluster.value().nodes.size(), 12u);
  Result<TopologyRequest> request =
      load_topology_file(kSource + "/examples/paper/" + GetParam() + ".yaml");
  ASSERT_TRUE(request.ok()) << request.error().message;

  TopologyRequest ra = request.value();
  ra.strategy = Strategy::kResourceAware;
  TopologyRequest rr = request.value();
  rr.strategy = Strategy::kRoundRobin;
  const ScheduleResult a = testing::schedule_ok(cluster.value(), {ra});
  const ScheduleResult b = testing::schedule_ok(cluster.value(), {rr});
  ASSERT_TRUE(a.topologies[0].scheduled) << a.topologies[0].reason;
  ASSERT_TRUE(b.topologies[0].scheduled) << b.topologies[0].reason;
  const NetworkCost& ca = a.topologies[0].network;
  const NetworkCost& cb = b.topologies[0].network;
  EXPECT_EQ(ca.pairs(), cb.pairs());
  EXPECT_LT(ca.weighted(), cb.weighted());
  EXPECT_LE(ca.cross_rack, cb.cross_rack);
  EXPECT_GT(ca.same_worker, cb.same_worker);
  // The paper's topologies fit in one rack of the paper's cluster.
  EXPECT_EQ(ca.cross_rack, 0u);
  EXPECT_TRUE(a.topologies[0].warnings.empty());
  // Storm's default scheduler spreads over topology.workers = 12, one per node.
  EXPECT_EQ(b.topologies[0].workers.size(), 12u);
}

INSTANTIATE_TEST_SUITE_P(Paper, PaperTopologyTest,
                         ::testing::Values("linear-network", "linear-cpu", "diamond-network",
                                           "diamond-cpu", "star-network", "star-cpu",
                                           "page-load-network", "page-load-cpu",
                                           "processing-network", "processing-cpu"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(PaperTopologyFilesTest, LinearNetworkBoundHasThePapersParallelismAndCpu) {
  Result<TopologyRequest> r = load_topology_file(kSource + "/examples/paper/linear-network.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const TopologyRequest& t = r.value();
  ASSERT_EQ(t.components.size(), 4u);
  EXPECT_EQ(t.components[0].name, "spout");
  EXPECT_TRUE(t.components[0].is_spout);
  EXPECT_EQ(t.components[0].parallelism, 8);
  EXPECT_EQ(t.components[0].cpu, 40);
  EXPECT_EQ(t.components[1].parallelism, 4);
  EXPECT_EQ(t.components[1].cpu, 20);
  EXPECT_EQ(t.executors.size(), 20u);
  EXPECT_EQ(t.edges.size(), 3u);
  EXPECT_EQ(t.workers, 12);
}

TEST(PaperTopologyFilesTest, LargeClusterHas25RacksOf40) {
  Result<Cluster> c = load_cluster_file(kSource + "/conf/clusters/large.yaml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c.value().nodes.size(), 1000u);
  std::set<std::string> racks;
  for (const NodeSpec& n : c.value().nodes) racks.insert(n.rack.value());
  EXPECT_EQ(racks.size(), 25u);
  EXPECT_EQ(c.value().nodes[0].id.value(), "r01-n1");
  EXPECT_EQ(c.value().nodes[0].ports.size(), 4u);
}

}  // namespace
}  // namespace rstorm::scheduler
