// TopologyRuntime: settings from a config with nulls, and the entry point for
// tuples that arrive from another worker.
#include <gtest/gtest.h>

#include "rstorm/worker/topology_runtime.hpp"
#include "test_helpers.hpp"

namespace rstorm::worker {
namespace {

using rstorm::testing::counting_spout;
using rstorm::testing::eventually;
using rstorm::testing::Ledger;
using rstorm::testing::recording_bolt;

api::Result<Topology> spout_and_sink(std::shared_ptr<Ledger> spout, std::shared_ptr<Ledger> sink,
                                     std::int64_t limit) {
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(spout, limit, false));
  b.set_bolt("sink", recording_bolt(sink), 2).shuffle_grouping("numbers");
  return b.build();
}

TEST(TopologyRuntime, NullSettingsMeanDefaultsAsInDefaultsYaml) {
  auto t = spout_and_sink(std::make_shared<Ledger>(), std::make_shared<Ledger>(), 1);
  ASSERT_TRUE(t.ok());
  Config conf;
  conf.set("topology.acker.executors", nullptr, "conf/defaults.yaml");
  conf.set("topology.max.spout.pending", nullptr, "conf/defaults.yaml");
  conf.set("topology.tick.tuple.freq.secs", nullptr, "conf/defaults.yaml");
  auto plan = make_plan("t", conf, *t);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ((*plan)->settings.acker_executors, 1);
  EXPECT_EQ((*plan)->settings.max_spout_pending, 0);
  EXPECT_EQ((*plan)->acker_tasks.size(), 1u);
}

TEST(TopologyRuntime, TasksAreNumberedByComponentIdWithAckersLast) {
  auto t = spout_and_sink(std::make_shared<Ledger>(), std::make_shared<Ledger>(), 1);
  ASSERT_TRUE(t.ok());
  auto plan = make_plan("t", Config(), *t);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ((*plan)->layout->component_tasks.at("numbers"), std::vector<TaskId>{TaskId(1)});
  EXPECT_EQ((*plan)->layout->component_tasks.at("sink"),
            (std::vector<TaskId>{TaskId(2), TaskId(3)}));
  EXPECT_EQ((*plan)->acker_tasks, std::vector<TaskId>{TaskId(4)});
}

TEST(TopologyRuntime, DeliverHandsBatchesFromAnotherWorkerToLocalTasks) {
  auto sink = std::make_shared<Ledger>();
  auto t = spout_and_sink(std::make_shared<Ledger>(), sink, 0);  // the spout emits nothing
  ASSERT_TRUE(t.ok());
  auto rt = TopologyRuntime::create("t", Config(), *t, nullptr, 1);
  ASSERT_TRUE(rt.ok()) << rt.status().message();
  (*rt)->start();
  const StreamInfo* stream = &(*rt)->plan().find_component("numbers")->streams[0]->info;
  Batch incoming;
  for (std::int64_t n = 0; n < 100; ++n) {
    Envelope e;
    e.dest = TaskId(n % 2 == 0 ? 2 : 3);
    e.tuple = Tuple(stream, TaskId(1), Values{n});
    incoming.push_back(std::move(e));
  }
  Batch foreign;
  EXPECT_TRUE((*rt)->deliver_remote(incoming, &foreign));
  EXPECT_TRUE(incoming.empty());
  EXPECT_TRUE(foreign.empty());
  ASSERT_TRUE(eventually([&] { return sink->received_total() == 100; }));
  (*rt)->stop();
  std::lock_guard lock(sink->mutex);
  ASSERT_EQ(sink->received[2].size(), 50u);
  for (const auto& tuple : sink->received[2]) EXPECT_EQ(tuple.get_int(0) % 2, 0);
}

}  // namespace
}  // namespace rstorm::worker
