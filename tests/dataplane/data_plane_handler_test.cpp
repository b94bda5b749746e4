// DataPlane, the worker's InboundHandler, on a real SlotRuntime of the word
// count topology: envelopes handed back as undeliverable have their tuple
// trees failed at their acker, so the spout replays them; envelopes that
// arrive for tasks run here reach their executors.
#include "worker/process/data_plane.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>

#include "rstorm/topology_library.hpp"
#include "tests/common/poll.hpp"

namespace rstorm::worker_process {
namespace {

using rstorm::testing::eventually;

// A sink that never reaches its peer: every batch comes back as undeliverable,
// as the transport hands back what it buffered for a peer that went away.
class LostPeerSink final : public worker::TupleSink {
 public:
  explicit LostPeerSink(DataPlane& plane) : plane_(plane) {}
  bool try_push(worker::Batch& batch) override {
    plane_.undeliverable(batch, "connection to the test peer lost");
    return true;
  }
  void force_push(worker::Batch& batch) override { try_push(batch); }
  void wait_for_space(std::chrono::microseconds) override {}

 private:
  DataPlane& plane_;
};

TEST(DataPlaneHandlerTest, UndeliverableTuplesHaveTheirTreesFailedSoTheSpoutReplays) {
  auto loaded = load_topology_library(RSTORM_WORD_COUNT_LIB);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  Config config;
  config.set("wordcount.sentences.limit", std::int64_t{20});
  config.set("wordcount.report.print", false);
  auto topology = loaded->build(config);
  ASSERT_TRUE(topology.ok());
  SlotRuntimeOptions o;
  o.topology_name = "wc";
  o.config = config;
  // The spout and the only acker here; every bolt in another worker.
  o.executors = {{"count", 1, 1, "n", 6701},    {"count", 2, 2, "n", 6701},
                 {"report", 3, 3, "n", 6701},   {"sentences", 4, 4, "n", 6700},
                 {"split", 5, 5, "n", 6701},    {"split", 6, 6, "n", 6701},
                 {"__acker", -1, -1, "n", 6700}};
  o.node_id = "n";
  o.port = 6700;
  o.logger = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  auto rt = SlotRuntime::create(std::move(o), *topology);
  ASSERT_TRUE(rt.ok()) << rt.status().message();
  DataPlane plane(**rt, std::make_shared<spdlog::logger>(
                            "test", std::make_shared<spdlog::sinks::null_sink_mt>()));
  LostPeerSink lost(plane);
  const auto& slots = (*rt)->task_slots();
  for (std::size_t t = 1; t < slots.size(); ++t) {
    if (slots[t].port != 6700) (*rt)->route(TaskId(static_cast<int>(t)), &lost);
  }
  plane.start(nullptr);
  (*rt)->start();
  // Every sentence is failed (and replayed) again and again; none is acked.
  ASSERT_TRUE(eventually([&] {
    const auto stats = (*rt)->stats();  // s points into it
    const auto* s = stats.component("sentences");
    return s && s->failed >= 40;
  }));
  EXPECT_EQ((*rt)->stats().component("sentences")->acked, 0u);
  const DataPlaneCounters c = plane.counters();
  EXPECT_GE(c.undeliverable_envelopes, 40u);
  EXPECT_GE(c.trees_failed, 40u);
  (*rt)->stop();
  plane.stop();
}

TEST(DataPlaneHandlerTest, DeliveredEnvelopesForTasksRunHereReachThemAndOthersAreFailed) {
  auto loaded = load_topology_library(RSTORM_WORD_COUNT_LIB);
  ASSERT_TRUE(loaded.ok());
  Config config;
  config.set("wordcount.sentences.limit", std::int64_t{0});
  config.set("wordcount.report.print", false);
  config.set("topology.acker.executors", std::int64_t{0});
  auto topology = loaded->build(config);
  ASSERT_TRUE(topology.ok());
  SlotRuntimeOptions o;
  o.topology_name = "wc";
  o.config = config;
  o.executors = {{"count", 1, 1, "n", 6701},    {"count", 2, 2, "n", 6701},
                 {"report", 3, 3, "n", 6701},   {"sentences", 4, 4, "n", 6700},
                 {"split", 5, 5, "n", 6701},    {"split", 6, 6, "n", 6701}};
  o.node_id = "n";
  o.port = 6701;
  o.logger = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  auto rt = SlotRuntime::create(std::move(o), *topology);
  ASSERT_TRUE(rt.ok()) << rt.status().message();
  DataPlane plane(**rt, std::make_shared<spdlog::logger>(
                            "test", std::make_shared<spdlog::sinks::null_sink_mt>()));
  plane.start(nullptr);
  (*rt)->start();
  const auto& plan = (*rt)->runtime().plan();
  const StreamInfo* stream = &plan.find_component("sentences")->streams[0]->info;
  worker::Batch batch;
  for (int i = 0; i < 10; ++i) {
    worker::Envelope e;
    e.dest = plan.find_component("split")->tasks[static_cast<std::size_t>(i % 2)];
    e.tuple = Tuple(stream, plan.find_component("sentences")->tasks[0], Values{"a b c"});
    batch.push_back(std::move(e));
  }
  worker::Envelope foreign;
  foreign.dest = plan.find_component("sentences")->tasks[0];  // runs in the other worker
  foreign.tuple = Tuple(stream, foreign.dest, Values{"x"});
  batch.push_back(std::move(foreign));
  plane.deliver(batch);
  plane.read_delivered();  // as the transport does after each read
  EXPECT_TRUE(batch.empty());
  ASSERT_TRUE(eventually([&] {
    const auto stats = (*rt)->stats();  // s points into it
    const auto* s = stats.component("count");
    return s && s->executed == 30;  // 10 sentences of 3 words
  }));
  EXPECT_EQ(plane.counters().undeliverable_envelopes, 1u);
  (*rt)->stop();
  plane.stop();
}

}  // namespace
}  // namespace rstorm::worker_process
