#include <gtest/gtest.h>

#include <algorithm>

#include <rstorm/topology_builder.hpp>

namespace rstorm {
namespace {

class WordSpout : public Spout {
 public:
  void open(const Config&, const TopologyContext&, SpoutOutputCollector&) override {}
  void next_tuple() override {}
  void declare_output_fields(OutputFieldsDeclarer& d) override {
    d.declare(Fields{"word"});
    d.declare_stream("control", Fields{"command", "arg"});
    d.declare_stream("pick", Fields{"word"}, /*direct=*/true);
  }
};

class Counter : public BasicBolt {
 public:
  void execute(const Tuple&, BasicOutputCollector&) override {}
  void declare_output_fields(OutputFieldsDeclarer& d) override {
    d.declare(Fields{"word", "count"});
  }
};

class Sink : public Bolt {
 public:
  void prepare(const Config&, const TopologyContext&, OutputCollector&) override {}
  void execute(const Tuple&) override {}
  void declare_output_fields(OutputFieldsDeclarer&) override {}
};

SpoutFactory words() {
  return [] { return std::make_unique<WordSpout>(); };
}
BasicBoltFactory counter() {
  return [] { return std::make_unique<Counter>(); };
}
BoltFactory sink() {
  return [] { return std::make_unique<Sink>(); };
}

std::vector<std::string> problems_of(const TopologyBuilder& b) {
  auto t = b.build();
  EXPECT_FALSE(t.ok());
  return t.ok() ? std::vector<std::string>{} : t.status().messages();
}

TEST(TopologyBuilder, BuildsStructureReadableThroughAccessors) {
  TopologyBuilder b;
  b.set_spout("words", words(), 2).set_cpu_load(50);
  b.set_bolt("count", counter(), 3)
      .set_num_tasks(6)
      .set_memory_load(256, 64)
      .add_resource("gpu.count", 1)
      .add_configuration("topology.tick.tuple.freq.secs", 5)
      .fields_grouping("words", Fields{"word"})
      .all_grouping("words", "control");
  b.set_bolt("sink", sink()).global_grouping("count").direct_grouping("words", "pick");
  auto t = b.build();
  ASSERT_TRUE(t.ok()) << t.status().message();

  ASSERT_EQ(t->components().size(), 3u);
  EXPECT_EQ(t->components()[0].id, "count");  // sorted by id
  const ComponentSpec* spout = t->component("words");
  ASSERT_NE(spout, nullptr);
  EXPECT_EQ(spout->kind, ComponentKind::kSpout);
  EXPECT_EQ(spout->parallelism, 2);
  EXPECT_EQ(spout->num_tasks, 2);
  EXPECT_EQ(spout->resources.cpu_points, 50);
  EXPECT_EQ(spout->resources.onheap_mb, 128);
  ASSERT_EQ(spout->streams.size(), 3u);
  EXPECT_EQ(spout->streams[1], (StreamSpec{"control", Fields{"command", "arg"}, false}));
  EXPECT_TRUE(spout->streams[2].direct);

  const ComponentSpec* count = t->component("count");
  ASSERT_NE(count, nullptr);
  EXPECT_EQ(count->kind, ComponentKind::kBolt);
  EXPECT_EQ(count->parallelism, 3);
  EXPECT_EQ(count->num_tasks, 6);
  EXPECT_EQ(count->resources,
            (ResourceRequest{256, 64, 10, std::map<std::string, double>{{"gpu.count", 1}}}));
  EXPECT_EQ(count->config.get_int("topology.tick.tuple.freq.secs"), 5);
  ASSERT_EQ(count->inputs.size(), 2u);
  EXPECT_EQ(count->inputs[0],
            (InputSpec{"words", "default", Grouping{GroupingType::kFields, Fields{"word"}}}));
  EXPECT_EQ(count->inputs[1], (InputSpec{"words", "control", Grouping{GroupingType::kAll, {}}}));
  EXPECT_EQ(t->component("sink")->inputs[1].grouping.type, GroupingType::kDirect);
  EXPECT_EQ(t->component("nope"), nullptr);
}

TEST(TopologyBuilder, DefaultResourcesAreStorms) {
  TopologyBuilder b;
  b.set_spout("words", words());
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  const auto& r = t->component("words")->resources;
  EXPECT_EQ(r.onheap_mb, 128);
  EXPECT_EQ(r.offheap_mb, 0);
  EXPECT_EQ(r.cpu_points, 10);
  EXPECT_TRUE(r.generic.empty());
}

TEST(TopologyBuilder, FactoriesMakeFreshInstancesOfTheirKind) {
  TopologyBuilder b;
  b.set_spout("words", words());
  b.set_bolt("count", counter()).shuffle_grouping("words");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  EXPECT_NE(t->create_spout("words"), nullptr);
  EXPECT_NE(t->create_bolt("count"), nullptr);
  EXPECT_EQ(t->create_bolt("words"), nullptr);
  EXPECT_EQ(t->create_spout("missing"), nullptr);
}

TEST(TopologyBuilder, UnknownComponentIsNamed) {
  TopologyBuilder b;
  b.set_spout("words", words());
  b.set_bolt("count", counter()).shuffle_grouping("wrods");
  EXPECT_EQ(problems_of(b), std::vector<std::string>{
                                "component 'count' subscribes to unknown component 'wrods'"});
}

TEST(TopologyBuilder, UndeclaredStreamIsNamedWithDeclaredOnes) {
  TopologyBuilder b;
  b.set_spout("words", words());
  b.set_bolt("count", counter()).shuffle_grouping("words", "sentences");
  EXPECT_EQ(problems_of(b),
            std::vector<std::string>{
                "component 'count' subscribes to stream 'sentences' of component 'words', "
                "which declares no such stream (streams: default, control, pick)"});
}

TEST(TopologyBuilder, GroupingOnUndeclaredFieldIsNamed) {
  TopologyBuilder b;
  b.set_spout("words", words());
  b.set_bolt("count", counter()).fields_grouping("words", Fields{"wrd"});
  EXPECT_EQ(problems_of(b), std::vector<std::string>{
                                "component 'count' groups stream 'default' of component 'words' "
                                "by field 'wrd', which the stream does not declare (fields: "
                                "word)"});
}

TEST(TopologyBuilder, FieldsGroupingWithoutFieldsIsRefused) {
  TopologyBuilder b;
  b.set_spout("words", words());
  b.set_bolt("count", counter()).fields_grouping("words", Fields{});
  EXPECT_EQ(problems_of(b), std::vector<std::string>{
                                "component 'count' groups stream 'default' of component 'words' "
                                "by an empty field list"});
}

TEST(TopologyBuilder, DuplicateIdIsNamed) {
  TopologyBuilder b;
  b.set_spout("words", words());
  b.set_bolt("words", counter());
  EXPECT_EQ(problems_of(b), std::vector<std::string>{"component 'words' is declared twice"});
}

TEST(TopologyBuilder, ParallelismBelowOneIsNamed) {
  TopologyBuilder b;
  b.set_spout("words", words(), 0);
  // Not also "0 tasks": the tasks only follow the parallelism here.
  EXPECT_EQ(problems_of(b),
            (std::vector<std::string>{"component 'words' has parallelism 0; it must be at least 1"}));
}

TEST(TopologyBuilder, TasksBelowOneAreNamed) {
  TopologyBuilder b;
  b.set_spout("words", words(), 2).set_num_tasks(-1);
  EXPECT_EQ(problems_of(b),
            std::vector<std::string>{"component 'words' has -1 tasks; it must have at least 1"});
}

// As in Storm: more executors than tasks run as many executors as tasks,
// in local mode and on a cluster alike (the structure says so).
TEST(TopologyBuilder, ParallelismAboveTheTasksRunsOneExecutorPerTask) {
  TopologyBuilder b;
  b.set_spout("words", words(), 1);
  b.set_bolt("count", counter(), 3).set_num_tasks(1).shuffle_grouping("words");
  b.set_bolt("sink", sink(), 2).set_num_tasks(5).shuffle_grouping("count");
  auto t = b.build();
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->component("count")->parallelism, 1);
  EXPECT_EQ(t->component("count")->num_tasks, 1);
  EXPECT_EQ(t->component("sink")->parallelism, 2);
  EXPECT_EQ(t->component("sink")->num_tasks, 5);
}

// As in Storm: a component's resources are its own (set_memory_load,
// set_cpu_load, or the keys in add_configuration), else the topology
// config's topology.component.resources.* / topology.component.cpu.pcore.percent,
// else the defaults.
TEST(TopologyBuilder, ResourcesComeFromTheComponentElseTheTopologyConfig) {
  TopologyBuilder b;
  b.set_spout("words", words());
  b.set_bolt("count", counter()).set_memory_load(256).shuffle_grouping("words");
  b.set_bolt("sink", sink())
      .add_configuration(std::string(keys::kTopologyComponentCpuPcorePercent), 30)
      .shuffle_grouping("words");
  auto t = b.build();
  ASSERT_TRUE(t.ok()) << t.status().message();
  Config config;
  config.set(std::string(keys::kTopologyComponentOnheapMb), 9000.0, "command line");
  config.set(std::string(keys::kTopologyComponentCpuPcorePercent), 20, "command line");
  ASSERT_TRUE(t->resolve_resources(config).is_ok());
  const ResourceRequest& spout = t->component("words")->resources;
  EXPECT_EQ(spout.onheap_mb, 9000);
  EXPECT_EQ(spout.offheap_mb, 0);
  EXPECT_EQ(spout.cpu_points, 20);
  const ResourceRequest& count = t->component("count")->resources;
  EXPECT_EQ(count.onheap_mb, 256);
  EXPECT_EQ(count.cpu_points, 20);
  const ResourceRequest& sink_resources = t->component("sink")->resources;
  EXPECT_EQ(sink_resources.onheap_mb, 9000);
  EXPECT_EQ(sink_resources.cpu_points, 30);

  // Without the keys: as declared.
  auto plain = b.build();
  ASSERT_TRUE(plain.ok());
  ASSERT_TRUE(plain->resolve_resources(Config()).is_ok());
  EXPECT_EQ(plain->component("words")->resources.onheap_mb, 128);
  EXPECT_EQ(plain->component("count")->resources.onheap_mb, 256);

  Config wrong;
  wrong.set(std::string(keys::kTopologyComponentOnheapMb), std::string("lots"), "command line");
  const auto s = plain->resolve_resources(wrong);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("component 'words': config key "
                             "'topology.component.resources.onheap.memory.mb' (from command "
                             "line) is a string (\"lots\"), expected a number"),
            std::string::npos)
      << s.message();
}

TEST(TopologyBuilder, NegativeResourcesAreNamed) {
  TopologyBuilder b;
  b.set_spout("words", words()).set_memory_load(-5, -1).set_cpu_load(-10).add_resource(
      "gpu.count", -2);
  EXPECT_EQ(problems_of(b),
            (std::vector<std::string>{
                "component 'words' asks -5 MB of on-heap memory; resources cannot be negative",
                "component 'words' asks -1 MB of off-heap memory; resources cannot be negative",
                "component 'words' asks -10 CPU points; resources cannot be negative",
                "component 'words' asks -2 of resource 'gpu.count'; resources cannot be "
                "negative"}));
}

TEST(TopologyBuilder, TopologyWithoutSpoutIsRefused) {
  TopologyBuilder b;
  b.set_bolt("sink", sink());
  EXPECT_EQ(problems_of(b), std::vector<std::string>{"the topology has no spout"});
}

TEST(TopologyBuilder, ReservedAndEmptyIdsAreRefused) {
  TopologyBuilder b;
  b.set_spout("__acker", words());
  b.set_bolt("", sink());
  EXPECT_EQ(problems_of(b),
            (std::vector<std::string>{"a component has an empty id",
                                      "component id '__acker' is reserved: ids starting with "
                                      "'__' belong to the system"}));
}

TEST(TopologyBuilder, DirectGroupingNeedsDirectStreamAndViceVersa) {
  TopologyBuilder b;
  b.set_spout("words", words());
  b.set_bolt("a", sink()).direct_grouping("words");
  b.set_bolt("b", sink()).shuffle_grouping("words", "pick");
  EXPECT_EQ(problems_of(b),
            (std::vector<std::string>{
                "component 'a' uses direct grouping on stream 'default' of component 'words', "
                "which is not declared direct",
                "component 'b' uses shuffle grouping on stream 'pick' of component 'words', "
                "which is declared direct and takes only direct grouping"}));
}

TEST(TopologyBuilder, FactoryReturningNothingIsNamed) {
  TopologyBuilder b;
  b.set_spout("words", [] { return std::unique_ptr<Spout>(); });
  EXPECT_EQ(problems_of(b),
            std::vector<std::string>{"component 'words': its factory returned no instance"});
}

TEST(TopologyBuilder, AFactoryThatThrowsIsNamedApartFromDeclaringOutputs) {
  TopologyBuilder b;
  b.set_spout("words", words());
  b.set_bolt("std", []() -> std::unique_ptr<Bolt> { throw std::runtime_error("no db"); })
      .shuffle_grouping("words");
  b.set_bolt("int", []() -> std::unique_ptr<Bolt> { throw 42; }).shuffle_grouping("words");
  EXPECT_EQ(problems_of(b),
            (std::vector<std::string>{
                "component 'std': its factory threw: no db",
                "component 'int': its factory threw a non-standard exception"}));
}

// As Storm refuses them: a system stream id, an empty one, a field twice.
TEST(TopologyBuilder, ReservedStreamIdsAndRepeatedFieldsAreNamed) {
  class Odd : public BasicBolt {
    void execute(const Tuple&, BasicOutputCollector&) override {}
    void declare_output_fields(OutputFieldsDeclarer& d) override {
      d.declare_stream("__tick", Fields{"a"});
      d.declare_stream("", Fields{"a"});
      d.declare(Fields{"n", "n", ""});
    }
  };
  TopologyBuilder b;
  b.set_spout("words", words());
  b.set_bolt("odd", [] { return std::make_unique<Odd>(); }).shuffle_grouping("words");
  EXPECT_EQ(problems_of(b),
            (std::vector<std::string>{
                "component 'odd' declares stream '__tick': stream ids starting with '__' belong "
                "to the system",
                "component 'odd' declares a stream with an empty id",
                "component 'odd' declares field 'n' twice in stream 'default' (fields: n, n, )",
                "component 'odd' declares an empty field name in stream 'default'"}));
}

// Each tuple would arrive once per subscription (Storm keeps the last).
TEST(TopologyBuilder, TheSameStreamSubscribedTwiceIsNamed) {
  TopologyBuilder b;
  b.set_spout("words", words());
  b.set_bolt("count", counter()).shuffle_grouping("words").fields_grouping("words", Fields{"word"});
  EXPECT_EQ(problems_of(b),
            (std::vector<std::string>{"component 'count' subscribes to stream 'default' of "
                                      "component 'words' twice: each tuple would arrive once per "
                                      "subscription"}));
}

// A component's own config is checked against the schema at build, every
// component's problems at once.
TEST(TopologyBuilder, ComponentConfigsTheSchemaRefusesAreAllNamed) {
  TopologyBuilder b;
  b.set_spout("words", words()).add_configuration("topology.max.spout.pending", -1);
  b.set_bolt("count", counter())
      .shuffle_grouping("words")
      .add_configuration("topology.state.provider", "redis");
  auto problems = problems_of(b);
  std::sort(problems.begin(), problems.end());
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].rfind("component 'count': topology.state.provider: \"redis\"", 0), 0u)
      << problems[0];
  EXPECT_EQ(problems[1].rfind("component 'words': topology.max.spout.pending: -1", 0), 0u)
      << problems[1];
}

TEST(TopologyBuilder, StreamDeclaredTwiceIsNamed) {
  class Twice : public BasicBolt {
    void execute(const Tuple&, BasicOutputCollector&) override {}
    void declare_output_fields(OutputFieldsDeclarer& d) override {
      d.declare(Fields{"a"});
      d.declare(Fields{"b"});
    }
  };
  TopologyBuilder b;
  b.set_spout("words", words());
  b.set_bolt("twice", [] { return std::make_unique<Twice>(); }).shuffle_grouping("words");
  EXPECT_EQ(problems_of(b),
            std::vector<std::string>{"component 'twice' declares stream 'default' twice"});
}

TEST(TopologyBuilder, EveryProblemIsReportedAtOnce) {
  TopologyBuilder b;
  b.set_bolt("count", counter(), 0).shuffle_grouping("ghost");
  b.set_bolt("sink", sink()).fields_grouping("count", Fields{"nope"});
  auto problems = problems_of(b);
  // count's parallelism, its unknown input, sink's unknown field, no spout.
  EXPECT_EQ(problems.size(), 4u);
  EXPECT_EQ(problems.back(), "the topology has no spout");
}

// The runtime calls an adapted BasicBolt directly: adapted_basic_bolt finds
// it behind the adapter, and finds none behind any other bolt.
TEST(TopologyBuilder, AdaptedBasicBoltIsFoundBehindItsAdapterOnly) {
  auto basic = std::make_unique<Counter>();
  BasicBolt* raw = basic.get();
  auto adapted = adapt_basic_bolt(std::move(basic));
  ASSERT_NE(adapted, nullptr);
  EXPECT_EQ(adapted_basic_bolt(*adapted), raw);
  Sink plain;
  EXPECT_EQ(adapted_basic_bolt(plain), nullptr);
}

}  // namespace
}  // namespace rstorm
