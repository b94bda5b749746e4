// The conversions and structural checks of nimbus/topology_structure.hpp.
#include "nimbus/topology_structure.hpp"

#include <gtest/gtest.h>

#include "tests/nimbus/nimbus_fixture.hpp"

namespace rstorm::nimbus::testing {
namespace {

TEST(TopologyStructureTest, DuplicateComponentIdIsNamed) {
  auto s = word_count_structure();
  s.components.push_back(component("split", false, 1, {"x"}));
  Status status = validate_structure(s);
  ASSERT_FALSE(status);
  EXPECT_NE(status.message().find("duplicate component id 'split'"), std::string::npos);
}

TEST(TopologyStructureTest, UnknownStreamIsNamed) {
  auto s = word_count_structure();
  s.components[0].inputs[0].stream = "words2";
  Status status = validate_structure(s);
  ASSERT_FALSE(status);
  EXPECT_NE(
      status.message().find("reads stream 'words2' of 'split', which declares no such stream"),
      std::string::npos)
      << status.message();
}

TEST(TopologyStructureTest, ZeroParallelismIsNamed) {
  auto s = word_count_structure();
  s.components[1].parallelism = 0;
  Status status = validate_structure(s);
  ASSERT_FALSE(status);
  EXPECT_NE(status.message().find("component 'split' has parallelism 0"), std::string::npos);
}

TEST(TopologyStructureTest, ParallelismNoClusterCouldRunIsRefusedBeforeAnythingIsBuilt) {
  auto s = word_count_structure();
  s.components[1].parallelism = 2147483647;  // as a crafted submit could send it
  Status status = validate_structure(s);
  ASSERT_FALSE(status);
  EXPECT_NE(status.message().find("component 'split' has parallelism 2147483647 and"),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("at most 100000 of each"), std::string::npos) << status.message();
}

TEST(TopologyStructureTest, RequestHasExecutorsTasksEdgesAndConfig) {
  auto s = word_count_structure();
  s.components[1].num_tasks = 6;
  Config config;
  config.set("topology.priority", 3);
  config.set("topology.scheduler.strategy", "round-robin");
  auto request = request_from_structure("wc-1", s, config);
  ASSERT_TRUE(request) << request.status().to_string();
  EXPECT_EQ(request->executors.size(), 7u);
  EXPECT_EQ(request->edges.size(), 2u);
  EXPECT_EQ(request->priority, 3);
  EXPECT_EQ(request->strategy, scheduler::Strategy::kRoundRobin);
  // count [1,2], split 3 executors over 6 tasks [3-4,5-6,7-8], words [9,10].
  EXPECT_EQ(request->executors[2].component, "split");
  EXPECT_EQ(request->executors[2].first_task, 3);
  EXPECT_EQ(request->executors[2].last_task, 4);
  EXPECT_EQ(task_count(s), 10);
  EXPECT_EQ(executor_count(s), 7);
}

TEST(TopologyStructureTest, BadStrategyNamesTheKey) {
  Config config;
  config.set("topology.scheduler.strategy", "fastest", "rstorm.yaml:3");
  auto request = request_from_structure("wc-1", word_count_structure(), config);
  ASSERT_FALSE(request);
  EXPECT_NE(request.status().message().find("topology.scheduler.strategy (rstorm.yaml:3)"),
            std::string::npos)
      << request.status().message();
}

}  // namespace
}  // namespace rstorm::nimbus::testing
