// SlotRuntime runs exactly its slot's executors of the real word count
// topology on the common plan, and sends tuples for executors of other
// workers to the sink each is routed to.
#include "worker/process/slot_runtime.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>

#include <atomic>
#include <set>

#include "rstorm/topology_library.hpp"
#include "tests/common/poll.hpp"

namespace rstorm::worker_process {
namespace {

using rstorm::testing::eventually;

std::shared_ptr<spdlog::logger> quiet_logger() {
  return std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
}

// Word count executors (count x2, report, sentences, split x2) on the given slots.
std::vector<SpecExecutor> placement(int count_port, int report_port, int sentences_port,
                                    int split_port) {
  return {{"count", 1, 1, "n", count_port},       {"count", 2, 2, "n", count_port},
          {"report", 3, 3, "n", report_port},     {"sentences", 4, 4, "n", sentences_port},
          {"split", 5, 5, "n", split_port},       {"split", 6, 6, "n", split_port}};
}

class SlotRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = load_topology_library(RSTORM_WORD_COUNT_LIB);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    config_.set("wordcount.sentences.limit", std::int64_t{50});
    config_.set("topology.message.timeout.secs", std::int64_t{30});
    auto topology = loaded->build(config_);
    ASSERT_TRUE(topology.ok()) << topology.status().message();
    topology_.emplace(*topology);
  }

  api::Result<std::unique_ptr<SlotRuntime>> make(std::vector<SpecExecutor> executors, int port) {
    SlotRuntimeOptions o;
    o.topology_name = "wc";
    o.config = config_;
    o.executors = std::move(executors);
    o.node_id = "n";
    o.port = port;
    o.logger = quiet_logger();
    return SlotRuntime::create(std::move(o), *topology_);
  }

  Config config_;
  std::optional<Topology> topology_;
};

const ComponentStats* find(const TopologyStats& s, const std::string& id) {
  return s.component(id);
}

// Routes each runtime's remote tasks straight to the other's queues.
void route_to_each_other(SlotRuntime& a, SlotRuntime& b) {
  const auto& slots = a.task_slots();
  ASSERT_EQ(slots, b.task_slots());
  for (std::size_t i = 1; i < slots.size(); ++i) {
    const TaskId task(static_cast<int>(i));
    if (slots[i] == a.self()) {
      b.route(task, a.runtime().sink_of(task));
    } else {
      a.route(task, b.runtime().sink_of(task));
    }
  }
}

// Routes the two runtimes to each other, starts both and waits until the
// spout (in `a`) has every one of its 50 sentences acked.
void run_until_every_sentence_is_acked(SlotRuntime& a, SlotRuntime& b) {
  route_to_each_other(a, b);
  a.start();
  b.start();
  ASSERT_TRUE(eventually([&] {
    auto s = a.stats();
    return find(s, "sentences") && find(s, "sentences")->acked == 50;
  }));
}

TEST_F(SlotRuntimeTest, WholeTopologyInOneSlotAcksEveryTupleAndSendsNothingRemote) {
  auto rt = make(placement(6700, 6700, 6700, 6700), 6700);
  ASSERT_TRUE(rt.ok()) << rt.status().message();
  (*rt)->start();
  ASSERT_TRUE(eventually([&] {
    auto s = (*rt)->stats();
    return find(s, "sentences") && find(s, "sentences")->acked == 50;
  }));
  auto s = (*rt)->stats();
  EXPECT_EQ(find(s, "sentences")->failed, 0u);
  EXPECT_EQ((*rt)->own_executors().size(), 7u);  // six executors and the acker
  (*rt)->stop();
}

TEST_F(SlotRuntimeTest, TwoSlotsRoutedToEachOtherRunTheWholeTopologyWithAcking) {
  // Spout and one acker in slot 6700; split, count, report and the other
  // acker in 6701. Each routes the other's executors straight to its queues.
  auto executors = placement(6701, 6701, 6700, 6701);
  auto a = make(executors, 6700);
  auto b = make(executors, 6701);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_NO_FATAL_FAILURE(run_until_every_sentence_is_acked(**a, **b));
  EXPECT_EQ(find((*a)->stats(), "sentences")->failed, 0u);
  EXPECT_EQ(find((*a)->stats(), "split"), nullptr);  // not run here
  EXPECT_GT(find((*b)->stats(), "split")->executed, 0u);
  (*a)->stop();
  (*b)->stop();
}

TEST_F(SlotRuntimeTest, UnroutedRemoteExecutorsHoldTuplesBackInsteadOfDroppingThem) {
  auto rt = make(placement(6701, 6701, 6700, 6701), 6700);
  ASSERT_TRUE(rt.ok()) << rt.status().message();
  (*rt)->start();
  // The spout emits until its batch toward 'split' is refused, then waits.
  ASSERT_TRUE(eventually([&] {
    auto s = (*rt)->stats();
    return find(s, "sentences") && find(s, "sentences")->emitted > 0 && (*rt)->runtime().in_flight() > 0;
  }));
  auto s = (*rt)->stats();
  EXPECT_EQ(find(s, "sentences")->acked, 0u);
  EXPECT_EQ(find(s, "sentences")->failed, 0u);
  (*rt)->stop();
}

TEST_F(SlotRuntimeTest, NewAssignmentMovingOnlyOtherWorkersExecutorsKeepsThisOne) {
  // Ackers listed as nimbus lists them, so that their number stays put.
  auto with_ackers = [](std::vector<SpecExecutor> v) {
    v.push_back({"__acker", -1, -1, "n", 6700});
    v.push_back({"__acker", -2, -2, "n", 6701});
    return v;
  };
  auto rt = make(with_ackers(placement(6701, 6701, 6700, 6701)), 6700);
  ASSERT_TRUE(rt.ok()) << rt.status().message();
  // count and report move to 6702: this worker keeps the spout and its acker.
  auto moved = (*rt)->layout_of(with_ackers(placement(6702, 6702, 6700, 6701)));
  ASSERT_TRUE(moved.ok()) << moved.status().message();
  std::set<int> ports;
  for (std::size_t t = 1; t < moved->size(); ++t) ports.insert((*moved)[t].port);
  EXPECT_EQ(ports, (std::set<int>{6700, 6701, 6702}));
  // The spout moving away changes this worker: it must restart.
  auto away = (*rt)->layout_of(with_ackers(placement(6701, 6701, 6701, 6701)));
  ASSERT_FALSE(away.ok());
  EXPECT_NE(away.status().message().find("sentences[4] leaves"), std::string::npos)
      << away.status().message();
}

// A rebalance to `split=1`: its two tasks in one executor on the other worker.
std::vector<SpecExecutor> split_as_one(int spout_port, int rest_port) {
  return {{"count", 1, 1, "n", rest_port},  {"count", 2, 2, "n", rest_port},
          {"report", 3, 3, "n", rest_port}, {"sentences", 4, 4, "n", spout_port},
          {"split", 5, 6, "n", rest_port},  {"__acker", -1, -1, "n", spout_port},
          {"__acker", -2, -2, "n", rest_port}};
}

TEST_F(SlotRuntimeTest, ExecutorsRegroupedInAnotherWorkerAreFollowedByReRoutingOnly) {
  auto before = placement(6701, 6701, 6700, 6701);
  before.push_back({"__acker", -1, -1, "n", 6700});
  before.push_back({"__acker", -2, -2, "n", 6701});
  auto spout_side = make(before, 6700);
  ASSERT_TRUE(spout_side.ok()) << spout_side.status().message();
  auto other = make(before, 6701);
  ASSERT_TRUE(other.ok()) << other.status().message();
  // The spout's worker keeps running: split's tasks keep their ids and only
  // their grouping elsewhere changes.
  auto followed = (*spout_side)->layout_of(split_as_one(6700, 6701));
  ASSERT_TRUE(followed.ok()) << followed.status().message();
  EXPECT_EQ((*followed)[5].port, 6701);
  EXPECT_EQ((*followed)[6].port, 6701);
  // The worker whose split executors are regrouped must restart.
  auto regrouped = (*other)->layout_of(split_as_one(6700, 6701));
  ASSERT_FALSE(regrouped.ok());
  EXPECT_NE(regrouped.status().message().find("split[5] leaves"), std::string::npos)
      << regrouped.status().message();
}

TEST_F(SlotRuntimeTest, RunsTheAssignmentsExecutorsNotTheCompiledParallelism) {
  // split has parallelism 2 in the library; the assignment gives it one
  // executor holding both tasks, and the topology still acks every sentence.
  auto a = make(split_as_one(6700, 6701), 6700);
  auto b = make(split_as_one(6700, 6701), 6701);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  int split_executors = 0;
  for (const auto& e : (*b)->own_executors()) split_executors += e.component == "split";
  EXPECT_EQ(split_executors, 1);
  ASSERT_NO_FATAL_FAILURE(run_until_every_sentence_is_acked(**a, **b));
  EXPECT_EQ(find((*a)->stats(), "sentences")->failed, 0u);
  EXPECT_EQ(find((*b)->stats(), "split")->executors, 1);
  (*a)->stop();
  (*b)->stop();
}

TEST_F(SlotRuntimeTest, RunsOnlyTheExecutorsOfItsSlot) {
  auto rt = make(placement(6701, 6701, 6700, 6701), 6701);
  ASSERT_TRUE(rt.ok()) << rt.status().message();
  std::set<std::string> components;
  for (const auto& e : (*rt)->own_executors()) components.insert(e.component);
  EXPECT_EQ(components, (std::set<std::string>{"count", "report", "split", "__acker"}));
  EXPECT_EQ((*rt)->own_executors().size(), 6u);
}

TEST_F(SlotRuntimeTest, AssignmentDisagreeingWithTheTopologyNamesTheComponent) {
  auto executors = placement(6700, 6700, 6700, 6700);
  executors.pop_back();  // split's task 6 is in no executor
  auto rt = make(executors, 6700);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("'split'"), std::string::npos) << rt.status().message();
  executors.push_back({"split", 6, 7, "n", 6700});  // a task split does not have
  rt = make(executors, 6700);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("'split'"), std::string::npos) << rt.status().message();
}

// Emits 0..limit-1 reliably and counts the trees acked.
class NumberSpout : public Spout {
 public:
  NumberSpout(int limit, std::shared_ptr<std::atomic<int>> acked)
      : limit_(limit), acked_(std::move(acked)) {}
  void open(const Config&, const TopologyContext&, SpoutOutputCollector& out) override {
    out_ = &out;
  }
  void next_tuple() override {
    if (next_ < limit_) out_->emit({Value(std::int64_t{next_})}, Value(std::int64_t{next_}));
    ++next_;
  }
  void ack(const Value&) override { acked_->fetch_add(1); }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare({"n"}); }

 private:
  int limit_;
  int next_ = 0;
  std::shared_ptr<std::atomic<int>> acked_;
  SpoutOutputCollector* out_ = nullptr;
};

class PassBolt : public BasicBolt {
 public:
  void execute(const Tuple& t, BasicOutputCollector& out) override { out.emit({t.get_int(0)}); }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare({"n"}); }
};

// s(2) -> a(2) by local-or-shuffle, fused, in two slots: a is fused into s
// in a slot only when every slot holds as many executors of s as of a.
TEST_F(SlotRuntimeTest, FusesPerWorkerWhenEveryWorkerHoldsAsManyOfEach) {
  auto acked = std::make_shared<std::atomic<int>>(0);
  TopologyBuilder b;
  b.set_spout(
      "s", [acked] { return std::make_unique<NumberSpout>(500, acked); }, 2);
  b.set_bolt("a", BasicBoltFactory([] { return std::make_unique<PassBolt>(); }), 2)
      .local_or_shuffle_grouping("s");
  auto built = b.build();
  ASSERT_TRUE(built.ok()) << built.status().message();
  topology_.emplace(*built);
  config_.set("topology.fuse.executors", true);
  auto fused_into = [](SlotRuntime& rt) {
    const TopologyStats stats = rt.stats();  // a points into it
    const ComponentStats* a = stats.component("a");
    return a == nullptr ? std::string("(none)") : a->fused_into;
  };
  // Tasks: a 1-2, s 3-4 (components by id).
  {  // one s and one a in each slot: fused in both, every tree acked
    const std::vector<SpecExecutor> alike = {{"a", 1, 1, "n", 6700},
                                             {"a", 2, 2, "n", 6701},
                                             {"s", 3, 3, "n", 6700},
                                             {"s", 4, 4, "n", 6701}};
    auto x = make(alike, 6700);
    auto y = make(alike, 6701);
    ASSERT_TRUE(x.ok()) << x.status().message();
    ASSERT_TRUE(y.ok()) << y.status().message();
    EXPECT_EQ(fused_into(**x), "s");
    EXPECT_EQ(fused_into(**y), "s");
    route_to_each_other(**x, **y);
    (*x)->start();
    (*y)->start();
    ASSERT_TRUE(eventually([&] { return acked->load() == 1000; })) << acked->load();
    (*x)->stop();
    (*y)->stop();
  }
  acked->store(0);
  {  // 6700 holds one of each, but 6701 has only s and 6702 only a: s in 6701
     // sends to a in 6700 and 6702, so no slot fuses
    config_.set("topology.fuse.executors", true);
    TopologyBuilder three;
    three.set_spout(
        "s", [acked] { return std::make_unique<NumberSpout>(500, acked); }, 3);
    three.set_bolt("a", BasicBoltFactory([] { return std::make_unique<PassBolt>(); }), 3)
        .local_or_shuffle_grouping("s");
    auto t = three.build();
    ASSERT_TRUE(t.ok()) << t.status().message();
    topology_.emplace(*t);
    // Tasks: a 1-3, s 4-6.
    const std::vector<SpecExecutor> apart = {{"a", 1, 1, "n", 6700}, {"a", 2, 2, "n", 6702},
                                             {"a", 3, 3, "n", 6702}, {"s", 4, 4, "n", 6700},
                                             {"s", 5, 5, "n", 6701}, {"s", 6, 6, "n", 6701}};
    std::vector<std::unique_ptr<SlotRuntime>> rts;
    for (int port : {6700, 6701, 6702}) {
      auto rt = make(apart, port);
      ASSERT_TRUE(rt.ok()) << rt.status().message();
      rts.push_back(std::move(rt).value());
    }
    EXPECT_EQ(fused_into(*rts[0]), "");
    EXPECT_EQ(fused_into(*rts[2]), "");
    const auto& slots = rts[0]->task_slots();
    for (std::size_t i = 1; i < slots.size(); ++i) {
      const TaskId task(static_cast<int>(i));
      SlotRuntime* owner = nullptr;
      for (auto& rt : rts) owner = slots[i] == rt->self() ? rt.get() : owner;
      ASSERT_NE(owner, nullptr) << i;
      for (auto& rt : rts) {
        if (rt.get() != owner) rt->route(task, owner->runtime().sink_of(task));
      }
    }
    for (auto& rt : rts) rt->start();
    ASSERT_TRUE(eventually([&] { return acked->load() == 1500; })) << acked->load();
    for (auto& rt : rts) rt->stop();
  }
}

}  // namespace
}  // namespace rstorm::worker_process
