// LocalCluster: submitting, naming errors, activation, ticks and shutdown.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "test_helpers.hpp"

namespace rstorm {
namespace {

using testing::counting_spout;
using testing::eventually;
using testing::Ledger;
using testing::recording_bolt;

api::Result<Topology> simple(std::shared_ptr<Ledger> spout, std::shared_ptr<Ledger> sink,
                             std::int64_t limit) {
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(spout, limit, false));
  b.set_bolt("sink", recording_bolt(sink), 2).shuffle_grouping("numbers");
  return b.build();
}

TEST(LocalCluster, DuplicateNameIsRefused) {
  auto a = std::make_shared<Ledger>(), b = std::make_shared<Ledger>();
  auto t = simple(a, b, 10);
  ASSERT_TRUE(t.ok());
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", Config(), *t).is_ok());
  auto again = cluster.submit("t", Config(), *t);
  EXPECT_EQ(again.message(), "a topology named 't' is already running");
  EXPECT_EQ(cluster.topologies(), std::vector<std::string>{"t"});
}

TEST(LocalCluster, UnknownTopologyIsNamed) {
  LocalCluster cluster;
  EXPECT_EQ(cluster.kill("ghost").message(), "no topology named 'ghost' is running");
  EXPECT_EQ(cluster.stats("ghost").status().message(), "no topology named 'ghost' is running");
}

TEST(LocalCluster, FactoryThatThrowsFailsSubmitNamingComponent) {
  auto a = std::make_shared<Ledger>();
  int calls = 0;
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(a, 1, false));
  // The builder calls the factory once to learn the streams; the runtime's call throws.
  b.set_bolt("broken", [&calls]() -> std::unique_ptr<Bolt> {
     if (++calls > 1) throw std::runtime_error("no database");
     return std::make_unique<testing::RecordingBolt>(nullptr);
   }).shuffle_grouping("numbers");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  LocalCluster cluster;
  EXPECT_EQ(cluster.submit("t", Config(), *t).message(),
            "cannot run topology 't': component 'broken': its factory threw: no database");
  EXPECT_TRUE(cluster.topologies().empty());
}

TEST(LocalCluster, WrongConfigTypeFailsSubmitNamingKey) {
  auto a = std::make_shared<Ledger>(), b = std::make_shared<Ledger>();
  auto t = simple(a, b, 1);
  ASSERT_TRUE(t.ok());
  Config conf;
  conf.set("topology.max.spout.pending", "lots", "command line");
  LocalCluster cluster;
  auto status = cluster.submit("t", conf, *t);
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("topology.max.spout.pending"), std::string::npos)
      << status.message();
}

// A component's own config is checked against the schema as nimbus checks
// what `rstorm submit` sends: refused, naming the component and the key,
// also for a topology not made by TopologyBuilder::build (which checks it
// first).
TEST(LocalCluster, AComponentConfigTheSchemaRefusesFailsSubmitNamingComponentAndKey) {
  auto a = std::make_shared<Ledger>(), b = std::make_shared<Ledger>();
  TopologyBuilder builder;
  builder.set_spout("numbers", counting_spout(a, 1, false));
  builder.set_bolt("counter", recording_bolt(b)).shuffle_grouping("numbers");
  auto built = builder.build();
  ASSERT_TRUE(built.ok()) << built.status().message();
  TopologySpec spec = built->spec();
  for (auto& c : spec.components) {
    if (c.id == "counter") c.config.set("topology.state.provider", "redis", "component counter");
  }
  const Topology t(spec, {{"numbers", counting_spout(a, 1, false)}},
                   {{"counter", recording_bolt(b)}});
  LocalCluster cluster;
  auto status = cluster.submit("t", Config(), t);
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("component 'counter'"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("topology.state.provider"), std::string::npos)
      << status.message();
  EXPECT_TRUE(cluster.topologies().empty());
}

TEST(LocalCluster, KillDeactivatesClosesAndCleansUpEveryTask) {
  auto spout = std::make_shared<Ledger>(), sink = std::make_shared<Ledger>();
  auto t = simple(spout, sink, 1000);
  ASSERT_TRUE(t.ok());
  {
    LocalCluster cluster;
    ASSERT_TRUE(cluster.submit("t", Config(), *t).is_ok());
    ASSERT_TRUE(eventually([&] { return sink->received_total() == 1000; }));
    ASSERT_TRUE(cluster.kill("t", std::chrono::milliseconds(100)).is_ok());
    EXPECT_TRUE(cluster.topologies().empty());
  }
  EXPECT_EQ(spout->opened.load(), 1);
  EXPECT_EQ(spout->activated.load(), 1);
  EXPECT_EQ(spout->deactivated.load(), 1);
  EXPECT_EQ(spout->closed.load(), 1);
  EXPECT_EQ(sink->cleaned_up.load(), 2);
}

TEST(LocalCluster, DeactivateStopsSpoutAndActivateResumesIt) {
  auto spout = std::make_shared<Ledger>(), sink = std::make_shared<Ledger>();
  auto t = simple(spout, sink, 1'000'000'000);
  ASSERT_TRUE(t.ok());
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", Config(), *t).is_ok());
  ASSERT_TRUE(eventually([&] { return sink->received_total() > 0; }));
  ASSERT_TRUE(cluster.deactivate("t").is_ok());
  ASSERT_TRUE(eventually([&] { return spout->deactivated.load() == 1; }));
  // Once deactivated, what was emitted drains and nothing more comes.
  std::uint64_t emitted = 0;
  ASSERT_TRUE(eventually([&] {
    auto s = cluster.stats("t");
    emitted = s->component("numbers")->emitted;
    return s->component("sink")->executed == emitted;
  }));
  EXPECT_EQ(cluster.stats("t")->component("numbers")->emitted, emitted);
  ASSERT_TRUE(cluster.activate("t").is_ok());
  ASSERT_TRUE(eventually(
      [&] { return cluster.stats("t")->component("numbers")->emitted > emitted; }));
  EXPECT_EQ(spout->activated.load(), 2);
}

// Counts tick tuples; checks their source.
class TickBolt : public Bolt {
 public:
  explicit TickBolt(std::shared_ptr<Ledger> l) : ledger_(std::move(l)) {}
  void prepare(const Config&, const TopologyContext&, OutputCollector& c) override { out_ = &c; }
  void execute(const Tuple& t) override {
    if (t.is_tick() && t.source_component() == "__system" && t.source_stream() == "__tick" &&
        t.get_int("rate_secs") == 1) {
      std::lock_guard lock(ledger_->mutex);
      ++ledger_->acks[0];
    }
    out_->ack(t);
  }
  void declare_output_fields(OutputFieldsDeclarer&) override {}

 private:
  std::shared_ptr<Ledger> ledger_;
  OutputCollector* out_ = nullptr;
};

TEST(LocalCluster, TickTuplesArriveAtTheConfiguredFrequency) {
  auto spout = std::make_shared<Ledger>(), ticks = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(spout, 0, false));
  b.set_bolt("ticker", [ticks] { return std::make_unique<TickBolt>(ticks); })
      .add_configuration("topology.tick.tuple.freq.secs", 1)
      .shuffle_grouping("numbers");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", Config(), *t).is_ok());
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(ticks->mutex);
    return ticks->acks[0] >= 2;
  }));
  // The bolt acked its ticks, which belong to no tree: counted as ticks,
  // neither as executed nor as acked (the spout emits nothing here).
  auto stats = cluster.stats("t");
  ASSERT_TRUE(stats.ok());
  const ComponentStats* ticker = stats->component("ticker");
  ASSERT_NE(ticker, nullptr);
  EXPECT_EQ(ticker->executed, 0u);
  EXPECT_EQ(ticker->acked, 0u);
  EXPECT_EQ(ticker->failed, 0u);
}

// Emits nothing; counts how often it is asked.
class EmptySpout : public Spout {
 public:
  explicit EmptySpout(std::shared_ptr<std::atomic<std::int64_t>> calls) : calls_(std::move(calls)) {}
  void open(const Config&, const TopologyContext&, SpoutOutputCollector&) override {}
  void next_tuple() override { calls_->fetch_add(1); }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields{"n"}); }

 private:
  std::shared_ptr<std::atomic<std::int64_t>> calls_;
};

// A spout whose source has nothing is asked again only after
// topology.spout.wait.park.micros, not polled in a loop: an idle topology must
// cost no CPU. Load can only make the calls fewer, so the bound holds on a
// busy machine.
TEST(LocalCluster, SpoutWithNothingToEmitIsAskedOncePerSpoutWaitPark) {
  auto calls = std::make_shared<std::atomic<std::int64_t>>(0);
  auto sink = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("empty", [calls] { return std::make_unique<EmptySpout>(calls); });
  b.set_bolt("sink", recording_bolt(sink)).shuffle_grouping("empty");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  Config conf;
  conf.set("topology.spout.wait.park.micros", 100'000);
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", conf, *t).is_ok());
  ASSERT_TRUE(eventually([&] { return calls->load() >= 2; }));
  const auto start = std::chrono::steady_clock::now();
  const std::int64_t first = calls->load();
  ASSERT_TRUE(eventually([&] { return calls->load() >= first + 5; }));
  const std::int64_t asked = calls->load() - first;
  const double elapsed_ms = std::chrono::duration<double, std::milli>(
                                std::chrono::steady_clock::now() - start).count();
  // One call per 100 ms; the bound allows twice that (a polling spout would
  // be asked thousands of times).
  EXPECT_LE(asked, static_cast<std::int64_t>(elapsed_ms / 50) + 2)
      << asked << " calls in " << elapsed_ms << " ms";
}

// Each executor makes its spout and bolt instances on its own thread, the one
// that then runs them: instances of two executors made by one thread could
// share a cache line, and each thread's writes would then stall the other.
// Two executors of each component, not fused: every instance is opened or
// prepared on the thread that made it, and no two executors share one.
struct MadeAndRun {
  std::mutex mu;
  std::vector<std::pair<std::thread::id, std::thread::id>> spouts, bolts;
};

class ThreadSpout : public Spout {
 public:
  explicit ThreadSpout(std::shared_ptr<MadeAndRun> r) : r_(std::move(r)) {}
  void open(const Config&, const TopologyContext&, SpoutOutputCollector& c) override {
    std::lock_guard lock(r_->mu);
    r_->spouts.emplace_back(made_on_, std::this_thread::get_id());
    out_ = &c;
  }
  void next_tuple() override {
    if (n_ < 10) out_->emit({n_++});
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields{"n"}); }

 private:
  std::shared_ptr<MadeAndRun> r_;
  std::thread::id made_on_ = std::this_thread::get_id();
  SpoutOutputCollector* out_ = nullptr;
  std::int64_t n_ = 0;
};

class ThreadBolt : public BasicBolt {
 public:
  explicit ThreadBolt(std::shared_ptr<MadeAndRun> r) : r_(std::move(r)) {}
  void prepare(const Config&, const TopologyContext&) override {
    std::lock_guard lock(r_->mu);
    r_->bolts.emplace_back(made_on_, std::this_thread::get_id());
  }
  void execute(const Tuple&, BasicOutputCollector&) override {}
  void declare_output_fields(OutputFieldsDeclarer&) override {}

 private:
  std::shared_ptr<MadeAndRun> r_;
  std::thread::id made_on_ = std::this_thread::get_id();
};

TEST(LocalCluster, EachExecutorMakesItsInstancesOnTheThreadThatRunsThem) {
  auto r = std::make_shared<MadeAndRun>();
  TopologyBuilder b;
  b.set_spout(
      "numbers", [r] { return std::make_unique<ThreadSpout>(r); }, 2);
  b.set_bolt(
       "sink", [r] { return std::make_unique<ThreadBolt>(r); }, 2)
      .shuffle_grouping("numbers");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  Config conf;
  conf.set("topology.fuse.executors", false);
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", conf, *t).is_ok());
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(r->mu);
    return r->spouts.size() == 2 && r->bolts.size() == 2;
  }));
  std::set<std::thread::id> threads;
  std::lock_guard lock(r->mu);
  for (const auto* made : {&r->spouts, &r->bolts}) {
    for (const auto& [made_on, run_on] : *made) {
      EXPECT_EQ(made_on, run_on);
      EXPECT_NE(made_on, std::this_thread::get_id());
      threads.insert(run_on);
    }
  }
  EXPECT_EQ(threads.size(), 4u);
}

}  // namespace
}  // namespace rstorm
