// Keyed state in running topologies: a bolt counts words with
// TopologyContext::key_value_state in local mode, in memory and in RocksDB
// (read back from disk after the topology is killed); a store that cannot be
// opened stops the task, naming it and the path.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <fstream>

#include "rstorm/worker/state_backends.hpp"
#include "rstorm/worker/topology_runtime.hpp"
#include "test_helpers.hpp"

namespace rstorm::worker {
namespace {

using rstorm::testing::eventually;
using rstorm::testing::Ledger;

constexpr std::int64_t kWords = 2000;
constexpr int kDistinct = 7;

// Word i of the input: "w<i mod 7>".
std::string word(std::int64_t i) { return "w" + std::to_string(i % kDistinct); }

// The exact counts of the input.
std::map<std::string, std::int64_t> expected_counts() {
  std::map<std::string, std::int64_t> out;
  for (std::int64_t i = 0; i < kWords; ++i) ++out[word(i)];
  return out;
}

// Emits the kWords words once, reliably (message id: the index).
class WordSpout : public Spout {
 public:
  explicit WordSpout(std::shared_ptr<Ledger> ledger) : ledger_(std::move(ledger)) {}
  void open(const Config&, const TopologyContext&, SpoutOutputCollector& c) override { out_ = &c; }
  void next_tuple() override {
    if (next_ < kWords) {
      out_->emit({word(next_)}, next_);
      ++next_;
    }
  }
  void ack(const Value& id) override { ledger_->record_ack(id); }
  void fail(const Value& id) override { ledger_->record_fail(id); }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields{"word"}); }

 private:
  std::shared_ptr<Ledger> ledger_;
  SpoutOutputCollector* out_ = nullptr;
  std::int64_t next_ = 0;
};

// Counts its words in the keyed state "counts".
class CountBolt : public BasicBolt {
 public:
  void prepare(const Config&, const TopologyContext& context) override {
    counts_ = context.key_value_state<std::string, std::int64_t>("counts");
  }
  void execute(const Tuple& input, BasicOutputCollector&) override {
    const std::string& w = input.get_string("word");
    counts_.put(w, counts_.get(w, 0) + 1);
  }
  void declare_output_fields(OutputFieldsDeclarer&) override {}

 private:
  KeyValueState<std::string, std::int64_t> counts_;
};

api::Result<Topology> word_count(std::shared_ptr<Ledger> ledger) {
  TopologyBuilder b;
  b.set_spout("words", [ledger] { return std::make_unique<WordSpout>(ledger); });
  b.set_bolt(
       "count", [] { return std::make_unique<CountBolt>(); }, 3)
      .fields_grouping("words", Fields{"word"});
  return b.build();
}

// The counts of every task of "count" that `backend` holds, merged; fails
// the test when two tasks hold one word.
std::map<std::string, std::int64_t> counts_in(StateBackend& backend,
                                              const std::vector<TaskId>& tasks) {
  std::map<std::string, std::int64_t> out;
  for (TaskId task : tasks) {
    KeyValueState<std::string, std::int64_t> counts(backend.open(task, "count"), "counts");
    counts.for_each([&](const std::string& w, std::int64_t n) {
      EXPECT_EQ(out.count(w), 0u) << w << " counted by two tasks";
      out[w] += n;
    });
  }
  return out;
}

TEST(KeyedState, BoltCountsWordsInMemoryStateExactly) {
  auto ledger = std::make_shared<Ledger>();
  auto t = word_count(ledger);
  ASSERT_TRUE(t.ok()) << t.status().message();
  auto rt = TopologyRuntime::create("wc", Config(), *t, nullptr, 5);
  ASSERT_TRUE(rt.ok()) << rt.status().message();
  (*rt)->start();
  ASSERT_TRUE(
      eventually([&] { return ledger->acked_total() == static_cast<std::size_t>(kWords); }));
  EXPECT_EQ(ledger->failed_total(), 0u);
  const auto& tasks = (*rt)->plan().layout->component_tasks.at("count");
  EXPECT_EQ(counts_in(*(*rt)->plan().state_backend, tasks), expected_counts());
  (*rt)->stop();
}

TEST(KeyedState, BoltCountsWordsInRocksDbAndTheCountsStayOnDisk) {
  testing::TempDir dir;
  auto ledger = std::make_shared<Ledger>();
  auto t = word_count(ledger);
  ASSERT_TRUE(t.ok()) << t.status().message();
  Config config;
  config.set("topology.state.provider", "rocksdb", "test");
  config.set("topology.state.rocksdb.dir", dir.path().string(), "test");
  {
    LocalCluster cluster;
    ASSERT_TRUE(cluster.submit("wc", config, *t).is_ok());
    ASSERT_TRUE(
        eventually([&] { return ledger->acked_total() == static_cast<std::size_t>(kWords); }));
    ASSERT_TRUE(cluster.kill("wc").is_ok());
  }
  // One database per task that asked for state (not the spout's): <dir>/wc/task-<id>.
  std::vector<TaskId> tasks;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path() / "wc")) {
    const std::string name = entry.path().filename().string();
    ASSERT_EQ(name.rfind("task-", 0), 0u) << name;
    tasks.push_back(TaskId(std::stoi(name.substr(5))));
  }
  std::sort(tasks.begin(), tasks.end());
  EXPECT_EQ(tasks, (std::vector<TaskId>{TaskId(1), TaskId(2), TaskId(3)}));
  RocksDbStateBackend reopened(dir.path() / "wc");
  EXPECT_EQ(counts_in(reopened, tasks), expected_counts());
}

TEST(KeyedState, StoreThatCannotBeOpenedStopsTheTaskNamingTaskAndPath) {
  testing::TempDir dir;
  const auto file = dir.path() / "not-a-dir";
  std::ofstream(file) << "x";
  auto ledger = std::make_shared<Ledger>();
  auto t = word_count(ledger);
  ASSERT_TRUE(t.ok()) << t.status().message();
  Config config;
  config.set("topology.state.provider", "rocksdb", "test");
  config.set("topology.state.rocksdb.dir", file.string(), "test");
  auto rt = TopologyRuntime::create("wc", config, *t, nullptr, 5);
  ASSERT_TRUE(rt.ok()) << rt.status().message();
  (*rt)->start();
  std::vector<const Executor*> counters;
  for (const auto& ex : (*rt)->executors()) {
    if (ex->plan().component->id == "count") counters.push_back(ex.get());
  }
  ASSERT_EQ(counters.size(), 3u);
  ASSERT_TRUE(eventually([&] {
    return std::all_of(counters.begin(), counters.end(),
                       [](const Executor* ex) { return !ex->fatal_error().empty(); });
  }));
  for (const Executor* ex : counters) {
    const std::string task = std::to_string(ex->plan().tasks.front().value);
    const std::string expected =
        "component 'count' task " + task + ": prepare threw: cannot open the state store of task " +
        task + " (component 'count') in " + (file / "wc" / ("task-" + task)).string() + ": ";
    EXPECT_EQ(ex->fatal_error().substr(0, expected.size()), expected) << ex->fatal_error();
  }
  (*rt)->stop();
}

}  // namespace
}  // namespace rstorm::worker
