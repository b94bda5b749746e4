// TopologyRuntime: settings from a config with nulls, the entry point for
// tuples that arrive from another worker, cycles in the component graph, and
// the stall report.
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

// spout -> a; a -> b; b -> a (a cycle), and a -> sink.
api::Result<Topology> cycle_topology(std::shared_ptr<Ledger> spout, std::shared_ptr<Ledger> a,
                                     std::shared_ptr<Ledger> b, std::shared_ptr<Ledger> sink,
                                     std::int64_t limit) {
  TopologyBuilder tb;
  tb.set_spout("numbers", counting_spout(spout, limit, true));
  // "a" sends what comes from the spout round the cycle once, and to the sink.
  tb.set_bolt("a", recording_bolt(a, [](const Tuple& t, OutputCollector& out) {
              if (t.source_component() == "numbers") {
                out.emit(t, {t.get_int(0)});
              }
              out.ack(t);
            }), 2)
      .shuffle_grouping("numbers")
      .shuffle_grouping("b");
  tb.set_bolt("b", recording_bolt(b, [](const Tuple& t, OutputCollector& out) {
              out.emit(t, {t.get_int(0)});
              out.ack(t);
            }), 2)
      .fields_grouping("a", Fields{"n"});
  tb.set_bolt("sink", recording_bolt(sink), 1).shuffle_grouping("a");
  return tb.build();
}

TEST(TopologyPlan, EdgesOnACycleAndEdgesToSpoutsAreNeverWaitedOn) {
  auto l = [] { return std::make_shared<Ledger>(); };
  auto t = cycle_topology(l(), l(), l(), l(), 1);
  ASSERT_TRUE(t.ok()) << t.status().message();
  auto plan = make_plan("t", Config(), *t);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const ComponentPlan& a = *(*plan)->find_component("a");
  const ComponentPlan& b = *(*plan)->find_component("b");
  const ComponentPlan& sink = *(*plan)->find_component("sink");
  const ComponentPlan& spout = *(*plan)->find_component("numbers");
  const ComponentPlan& acker = *(*plan)->find_component(kAckerComponent);
  EXPECT_EQ(a.cycle_group, b.cycle_group);
  EXPECT_NE(a.cycle_group, sink.cycle_group);
  EXPECT_NE(spout.cycle_group, a.cycle_group);
  EXPECT_TRUE(TopologyPlan::never_wait(a, b));
  EXPECT_TRUE(TopologyPlan::never_wait(b, a));
  EXPECT_FALSE(TopologyPlan::never_wait(a, sink));     // a DAG edge: a waits on a full sink
  EXPECT_FALSE(TopologyPlan::never_wait(spout, a));    // spouts keep a backlog instead
  EXPECT_FALSE(TopologyPlan::never_wait(a, acker));    // ackers never wait, so bolts may
  EXPECT_TRUE(TopologyPlan::never_wait(acker, spout)); // completions always get through
}

TEST(TopologyRuntime, CycleBetweenTwoBoltsWithTinyQueuesCompletesEveryTreeExactlyOnce) {
  // Queues of 2 batches of 4: without forced pushes on the cycle, a and b
  // fill each other's queues and wait on each other for ever.
  auto spout = std::make_shared<Ledger>(), a = std::make_shared<Ledger>(),
       b = std::make_shared<Ledger>(), sink = std::make_shared<Ledger>();
  constexpr std::int64_t kMessages = 20'000;
  auto t = cycle_topology(spout, a, b, sink, kMessages);
  ASSERT_TRUE(t.ok());
  Config conf;
  conf.set("topology.executor.receive.buffer.size", std::int64_t{8});
  conf.set("topology.transfer.batch.size", std::int64_t{4});
  auto rt = TopologyRuntime::create("t", conf, *t, nullptr, 7);
  ASSERT_TRUE(rt.ok()) << rt.status().message();
  (*rt)->start();
  auto acked = [&] {
    std::lock_guard lock(spout->mutex);
    return spout->acks.size();
  };
  const bool done = eventually([&] { return acked() == static_cast<std::size_t>(kMessages); },
                               std::chrono::seconds(120));
  (*rt)->stop();
  ASSERT_TRUE(done) << acked() << " of " << kMessages << " trees completed";
  std::lock_guard lock(spout->mutex);
  for (const auto& [id, n] : spout->acks) ASSERT_EQ(n, 1) << "message " << id;
  EXPECT_TRUE(spout->fails.empty());
  EXPECT_EQ(a->received_total(), 2 * static_cast<std::size_t>(kMessages));
  EXPECT_EQ(b->received_total(), static_cast<std::size_t>(kMessages));
  EXPECT_EQ(sink->received_total(), static_cast<std::size_t>(kMessages));
}

TEST(TopologyRuntime, SpoutWaitingOnABlockedBoltIsReportedAsStalledWithItsFullQueue) {
  auto spout = std::make_shared<Ledger>(), sink = std::make_shared<Ledger>();
  auto release = std::make_shared<std::atomic<bool>>(false);
  TopologyBuilder b2;
  b2.set_spout("numbers", counting_spout(spout, 1'000'000, true));
  b2.set_bolt("blocked", recording_bolt(sink, [release](const Tuple& t, OutputCollector& out) {
              while (!release->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
              out.ack(t);
            }))
      .shuffle_grouping("numbers");
  auto t = b2.build();
  ASSERT_TRUE(t.ok()) << t.status().message();
  Config conf;
  conf.set("topology.executor.receive.buffer.size", std::int64_t{64});
  conf.set("topology.transfer.batch.size", std::int64_t{8});
  auto rt = TopologyRuntime::create("t", conf, *t, nullptr, 3);
  ASSERT_TRUE(rt.ok()) << rt.status().message();
  (*rt)->start();
  StallReport r;
  const bool stalled = eventually([&] {
    r = (*rt)->stall_report(std::chrono::milliseconds(200));
    return r.stalled() && !r.full_queues.empty();
  });
  ASSERT_TRUE(stalled) << "stalled_ms " << r.stalled_ms;
  EXPECT_EQ(r.stalled_spouts, std::vector<std::string>{"numbers"});
  EXPECT_EQ(r.full_queues, std::vector<std::string>{"blocked"});
  EXPECT_EQ(r.queued, std::vector<std::string>{"blocked"});
  EXPECT_GT(r.pending, 0u);
  EXPECT_GE(r.stalled_ms, 200);
  release->store(true);
  EXPECT_TRUE(eventually([&] { return !(*rt)->stall_report(std::chrono::milliseconds(200)).stalled(); }));
  (*rt)->stop();
}

}  // namespace
}  // namespace rstorm::worker
