#include "scheduler/api_request.hpp"

#include <gtest/gtest.h>

#include <rstorm/rstorm.hpp>

#include "scheduler/fusion.hpp"

namespace rstorm::scheduler {
namespace {

class NullSpout : public rstorm::Spout {
 public:
  void open(const rstorm::Config&, const rstorm::TopologyContext&,
            rstorm::SpoutOutputCollector&) override {}
  void next_tuple() override {}
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override { d.declare({"x"}); }
};

class NullBolt : public rstorm::BasicBolt {
 public:
  void execute(const rstorm::Tuple&, rstorm::BasicOutputCollector&) override {}
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override { d.declare({"x"}); }
};

rstorm::Topology build() {
  rstorm::TopologyBuilder b;
  b.set_spout(
       "words", [] { return std::make_unique<NullSpout>(); }, 2)
      .set_num_tasks(4)
      .set_cpu_load(30);
  b.set_bolt("count", rstorm::BasicBoltFactory([] { return std::make_unique<NullBolt>(); }), 3)
      .set_memory_load(256, 64)
      .add_resource("gpu.count", 1)
      .fields_grouping("words", rstorm::Fields{"x"});
  auto topology = b.build();
  EXPECT_TRUE(topology.ok()) << topology.status().message();
  return std::move(topology).value();
}

TEST(ApiRequestTest, ComponentsResourcesAndInputsBecomeExecutorsAndEdges) {
  rstorm::Config config;
  config.set("topology.workers", 3, "test");
  config.set("topology.acker.executors", 1, "test");
  config.set("topology.scheduler.strategy", "round-robin", "test");
  Result<TopologyRequest> r = request_from_topology("wc", build().spec(), config);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const TopologyRequest& t = r.value();
  EXPECT_EQ(t.id.value(), "wc");
  EXPECT_EQ(t.workers, 3);
  EXPECT_EQ(t.acker_executors, 1);
  EXPECT_EQ(t.strategy, Strategy::kRoundRobin);
  ASSERT_EQ(t.executors.size(), 5u);  // components sorted by id: count (3), words (2)
  EXPECT_EQ(t.executors[0].component, "count");
  EXPECT_EQ(t.executors[0].memory_mb(), 320);
  EXPECT_EQ(t.executors[0].generic.at("gpu.count"), 1);
  EXPECT_EQ(t.executors[3].component, "words");
  EXPECT_EQ(t.executors[3].cpu, 30);
  EXPECT_EQ(t.executors[3].last_task - t.executors[3].first_task, 1);  // 4 tasks on 2 executors
  ASSERT_EQ(t.edges.size(), 1u);
  EXPECT_EQ(t.edges[0].from, "words");
  EXPECT_EQ(t.edges[0].to, "count");
  EXPECT_TRUE(t.components[1].is_spout);
}

TEST(ApiRequestTest, WrongConfigTypeNamesKeyAndOrigin) {
  rstorm::Config config;
  config.set("topology.workers", "many", "command line");
  Result<TopologyRequest> r = request_from_topology("wc", build().spec(), config);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("topology.workers"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("command line"), std::string::npos) << r.error().message;
}

TEST(ApiRequestTest, UnknownStrategyIsAnError) {
  rstorm::Config config;
  config.set("topology.scheduler.strategy", "fastest", "command line");
  Result<TopologyRequest> r = request_from_topology("wc", build().spec(), config);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "topology.scheduler.strategy (command line): unknown strategy 'fastest' "
            "(resource-aware, round-robin)");
}

TEST(ApiRequestTest, PlacementSearchKeysAreRead) {
  rstorm::Config config;
  config.set("topology.scheduler.improve.max.evaluations", 250, "test");
  config.set("topology.scheduler.exact.max.executors", 10, "test");
  Result<TopologyRequest> r = request_from_topology("wc", build().spec(), config);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().improve_max_evaluations, 250u);
  EXPECT_EQ(r.value().exact_max_executors, 10);
  // Absent keys keep the defaults.
  Result<TopologyRequest> d = request_from_topology("wc", build().spec(), rstorm::Config());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.value().improve_max_evaluations, kDefaultImproveMaxEvaluations);
  EXPECT_EQ(d.value().exact_max_executors, kDefaultExactMaxExecutors);
}

TEST(ApiRequestTest, FusionKeysGroupingsAndTicksAreRead) {
  rstorm::TopologyBuilder b;
  b.set_spout(
      "words", [] { return std::make_unique<NullSpout>(); }, 2);
  b.set_bolt("upper", rstorm::BasicBoltFactory([] { return std::make_unique<NullBolt>(); }), 2)
      .local_or_shuffle_grouping("words");
  b.set_bolt("tick", rstorm::BasicBoltFactory([] { return std::make_unique<NullBolt>(); }), 2)
      .local_or_shuffle_grouping("upper")
      .add_configuration("topology.tick.tuple.freq.secs", 5);
  b.set_bolt("sink", rstorm::BasicBoltFactory([] { return std::make_unique<NullBolt>(); }), 2)
      .shuffle_grouping("upper");
  auto topology = b.build();
  ASSERT_TRUE(topology.ok()) << topology.status().message();
  rstorm::Config config;
  config.set("topology.fuse.executors", true, "test");
  Result<TopologyRequest> r = request_from_topology("f", topology.value().spec(), config);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r.value().fuse_executors);
  std::map<std::string, bool> local_or_shuffle, ticks;
  for (const Edge& e : r.value().edges) local_or_shuffle[e.to] = e.local_or_shuffle;
  for (const ComponentSpec& c : r.value().components) ticks[c.name] = c.ticks;
  EXPECT_TRUE(local_or_shuffle["upper"]);
  EXPECT_TRUE(local_or_shuffle["tick"]);
  EXPECT_FALSE(local_or_shuffle["sink"]);
  EXPECT_TRUE(ticks["tick"]);
  EXPECT_FALSE(ticks["upper"]);
  EXPECT_EQ(fused_components(r.value()), (std::map<std::string, std::string>{{"upper", "words"}}));

  // Ticks for the whole topology: nothing is fused.
  config.set("topology.tick.tuple.freq.secs", 1, "test");
  r = request_from_topology("f", topology.value().spec(), config);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(fused_components(r.value()).empty());

  Result<TopologyRequest> absent =
      request_from_topology("f", topology.value().spec(), rstorm::Config());
  ASSERT_TRUE(absent.ok());
  EXPECT_EQ(absent.value().fuse_executors, kDefaultFuseExecutors);

  // A checkpointing topology runs unfused.
  rstorm::Config checkpointing;
  checkpointing.set("topology.state.checkpointing", true, "test");
  Result<TopologyRequest> cp = request_from_topology("f", topology.value().spec(), checkpointing);
  ASSERT_TRUE(cp.ok());
  EXPECT_FALSE(cp.value().fuse_executors);
}

}  // namespace
}  // namespace rstorm::scheduler
