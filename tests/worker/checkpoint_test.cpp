// Checkpoints with aligned barriers (worker/checkpoint.hpp), in one process:
// - every complete checkpoint of a diamond topology is a consistent cut: the
//   counts stored by the counting tasks are exactly those of the sentences the
//   spouts had emitted at their barriers (their stored offsets), from both
//   branches;
// - a runtime stopped mid-stream (its queued tuples and unsaved progress
//   dropped) and started again on the same state and checkpoint store, several
//   times, ends with exactly the true counts (in memory, and in RocksDB with a
//   folder store and fresh backends as after a process restart);
// - a damaged newest checkpoint is reported and the one before is restored; a
//   topology with a cycle is refused; the part codec refuses damage.
#include "rstorm/worker/checkpoint.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <fstream>
#include <mutex>

#include "rstorm/worker/runtime_metrics.hpp"
#include "rstorm/worker/state_backends.hpp"
#include "rstorm/worker/topology_runtime.hpp"
#include "test_helpers.hpp"

namespace rstorm::worker {
namespace {

using rstorm::testing::eventually;

constexpr std::int64_t kSentences = 30000;
constexpr int kSpoutTasks = 2;

// Sentence i: four words out of 13.
std::vector<std::string> words_of(std::int64_t i) {
  std::vector<std::string> out;
  for (int k = 0; k < 4; ++k) out.push_back("w" + std::to_string((i * 7 + k * 3) % 13));
  return out;
}

std::string sentence(std::int64_t i) {
  std::string out;
  for (const auto& w : words_of(i)) out += (out.empty() ? "" : " ") + w;
  return out;
}

// The true counts of every sentence for which `emitted(i)` holds, each word
// counted twice (it reaches "count" by two branches).
template <typename F>
std::map<std::string, std::int64_t> true_counts(F emitted) {
  std::map<std::string, std::int64_t> out;
  for (std::int64_t i = 0; i < kSentences; ++i) {
    if (!emitted(i)) continue;
    for (const auto& w : words_of(i)) out[w] += 2;
  }
  return out;
}

// Task k of n emits sentences k, k + n, ... in order, paced at about 10,000
// a second per task so that checkpoints fall mid-stream; its next sentence is
// its keyed state "offset", read back at open (a restored checkpoint's).
class SentenceSpout : public Spout {
 public:
  void open(const Config&, const TopologyContext& context, SpoutOutputCollector& c) override {
    out_ = &c;
    offset_ = context.key_value_state<std::string, std::int64_t>("offset");
    index_ = context.this_task_index();
    next_ = offset_.get("next", index_);
    start_ = std::chrono::steady_clock::now();
    emitted_ = 0;
  }
  void next_tuple() override {
    if (next_ >= kSentences) {
      out_->finish();
      return;
    }
    const auto elapsed = std::chrono::steady_clock::now() - start_;
    const auto allowed =
        std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count() / 100;
    if (emitted_ >= allowed) return;
    out_->emit({sentence(next_)}, next_);
    next_ += kSpoutTasks;
    ++emitted_;
    offset_.put("next", next_);
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields{"sentence"}); }

 private:
  SpoutOutputCollector* out_ = nullptr;
  KeyValueState<std::string, std::int64_t> offset_;
  int index_ = 0;
  std::int64_t next_ = 0;
  std::int64_t emitted_ = 0;
  std::chrono::steady_clock::time_point start_;
};

class SplitBolt : public BasicBolt {
 public:
  void execute(const Tuple& input, BasicOutputCollector& out) override {
    std::string s = input.get_string("sentence");
    std::size_t at = 0;
    while (at <= s.size()) {
      const std::size_t end = std::min(s.find(' ', at), s.size());
      out.emit({s.substr(at, end - at)});
      at = end + 1;
    }
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields{"word"}); }
};

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

// sentences (2) -> split (2) and split2 (2), both -> count (3, by word)
Topology diamond() {
  TopologyBuilder b;
  b.set_spout(
      "sentences", [] { return std::make_unique<SentenceSpout>(); }, kSpoutTasks);
  b.set_bolt(
       "split", [] { return std::make_unique<SplitBolt>(); }, 2)
      .shuffle_grouping("sentences");
  b.set_bolt(
       "split2", [] { return std::make_unique<SplitBolt>(); }, 2)
      .shuffle_grouping("sentences");
  b.set_bolt(
       "count", [] { return std::make_unique<CountBolt>(); }, 3)
      .fields_grouping("split", Fields{"word"})
      .fields_grouping("split2", Fields{"word"});
  auto t = b.build();
  if (!t.ok()) throw std::runtime_error(t.status().message());
  return std::move(t).value();
}

Config checkpoint_config(int retained = 2) {
  Config c;
  c.set(std::string(keys::kTopologyStateCheckpointing), true, "test");
  c.set(std::string(keys::kTopologyStateCheckpointIntervalMs), std::int64_t{100}, "test");
  c.set(std::string(keys::kTopologyStateCheckpointRetained), std::int64_t{retained}, "test");
  c.set(std::string(keys::kTopologyMaxSpoutPending), std::int64_t{500}, "test");
  return c;
}

// The named state of `component`'s tasks in the parts of checkpoint `id`,
// merged (keys decoded as strings, values as int64).
std::map<std::string, std::int64_t> from_parts(
    CheckpointStore& store, std::int64_t id, const std::vector<TaskId>& tasks,
    const std::string& state, std::map<std::int32_t, std::int64_t>* per_task = nullptr) {
  std::map<std::string, std::int64_t> out;
  for (TaskId t : tasks) {
    auto bytes = store.get(CheckpointRecord{.id = id}, t);
    EXPECT_TRUE(bytes.ok()) << bytes.status().message();
    if (!bytes.ok()) continue;
    auto entries = decode_task_snapshot(*bytes, id, t);
    EXPECT_TRUE(entries.ok()) << entries.status().message();
    if (!entries.ok()) continue;
    auto copy = std::make_shared<InMemoryStateStore>();
    for (const auto& [k, v] : *entries) copy->put(k, v);
    KeyValueState<std::string, std::int64_t> view(copy, state);
    view.for_each([&](const std::string& k, std::int64_t v) {
      out[k] += v;
      if (per_task != nullptr) (*per_task)[t.value] = v;
    });
  }
  return out;
}

// The counts the live stores of "count" hold.
std::map<std::string, std::int64_t> live_counts(StateBackend& backend,
                                                const std::vector<TaskId>& tasks) {
  std::map<std::string, std::int64_t> out;
  for (TaskId t : tasks) {
    KeyValueState<std::string, std::int64_t> counts(backend.open(t, "count"), "counts");
    counts.for_each([&](const std::string& w, std::int64_t n) { out[w] += n; });
  }
  return out;
}

std::unique_ptr<TopologyRuntime> start(const Topology& topology, const Config& config,
                                       std::shared_ptr<StateBackend> backend,
                                       std::shared_ptr<CheckpointStore> store, std::uint64_t seed) {
  auto plan = make_plan("diamond", config, topology);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  if (!plan.ok()) return nullptr;
  (*plan)->state_backend = std::move(backend);
  (*plan)->checkpoint_store = std::move(store);
  auto rt = TopologyRuntime::create(std::move(plan).value(), topology, nullptr, seed,
                                    ExecutorPlacement{});
  EXPECT_TRUE(rt.ok()) << rt.status().message();
  if (!rt.ok()) return nullptr;
  (*rt)->start();
  return std::move(rt).value();
}

// Every error the executors kept, for failure messages.
std::string errors_of(const TopologyRuntime& rt) {
  std::string out;
  for (const auto& ex : rt.executors()) {
    out += "\n  " + ex->plan().component->id + ": parts " +
           std::to_string(ex->stats().checkpoint_parts.load()) + " completed " +
           std::to_string(ex->stats().checkpoints_completed.load()) + " failed " +
           std::to_string(ex->stats().checkpoints_failed.load());
    for (const auto& e : ex->recent_errors())
      out += "\n  task " + std::to_string(e.task.value) + ": " + e.message;
  }
  return out;
}

std::int64_t last_id(CheckpointStore& store) {
  auto last = store.last_complete();
  return last.ok() && *last ? (*last)->id : 0;
}

TEST(Checkpoint, EveryCompleteCheckpointOfADiamondIsAConsistentCut) {
  const Topology topology = diamond();
  auto store = std::make_shared<InMemoryCheckpointStore>();
  auto backend = std::make_shared<InMemoryStateBackend>();
  auto rt = start(topology, checkpoint_config(/*retained=*/1000), backend, store, 3);
  ASSERT_NE(rt, nullptr);
  ASSERT_TRUE(eventually([&] { return rt->spouts_finished() && rt->in_flight() == 0; },
                         std::chrono::seconds(120)));
  // One more checkpoint after the end: it holds everything.
  const std::int64_t at_end = last_id(*store);
  ASSERT_TRUE(eventually([&] { return last_id(*store) > at_end; })) << errors_of(*rt);
  // What /metrics shows of them.
  metrics::Registry registry;
  registry.add_collector([&](metrics::Snapshot& out) {
    collect_executor_metrics(out, "diamond",
                             [&](const ExecutorVisitor& visit) {
                               for (const auto& e : rt->executors()) visit(*e);
                             },
                             {});
  });
  const std::string scraped = registry.render();
  for (const char* series :
       {"rstorm_checkpoints_completed_total{topology=\"diamond\"}",
        "rstorm_checkpoint_last_id{topology=\"diamond\"}",
        "rstorm_checkpoint_parts_total{topology=\"diamond\",component=\"count\"",
        "rstorm_checkpoint_alignment_seconds_total{topology=\"diamond\",component=\"count\""}) {
    EXPECT_NE(scraped.find(series), std::string::npos) << series;
  }
  rt->stop();

  auto records = store->complete_checkpoints();
  ASSERT_TRUE(records.ok());
  const auto& layout = *rt->plan().layout;
  const auto& spout_tasks = layout.component_tasks.at("sentences");
  const auto& count_tasks = layout.component_tasks.at("count");
  int mid_stream = 0;
  for (const auto& r : *records) {
    std::map<std::int32_t, std::int64_t> next;  // spout task -> its next sentence
    from_parts(*store, r.id, spout_tasks, "offset", &next);
    auto emitted = [&](std::int64_t i) {
      const TaskId task = spout_tasks[static_cast<std::size_t>(i % kSpoutTasks)];
      auto it = next.find(task.value);
      return it != next.end() && i < it->second;
    };
    const auto counts = from_parts(*store, r.id, count_tasks, "counts");
    EXPECT_EQ(counts, true_counts(emitted)) << "checkpoint " << r.id;
    std::int64_t total = 0;
    for (const auto& [task, n] : next) total += n / kSpoutTasks;
    if (total > 0 && total < kSentences) ++mid_stream;
  }
  EXPECT_GE(mid_stream, 2) << "checkpoints taken while sentences were in flight";
  EXPECT_EQ(live_counts(*backend, count_tasks), true_counts([](std::int64_t) { return true; }));
  std::uint64_t failed = 0;
  for (const auto& ex : rt->executors()) failed += ex->stats().checkpoints_failed.load();
  EXPECT_EQ(failed, 0u);
}

// Stops the runtime three times after a new checkpoint completed (dropping
// what was queued and what the stores took since), restarts it on the same
// state and store (`fresh_backend` makes a new backend object each time, as
// a restarted process would), and runs it to the end.
void run_with_restarts(const std::function<std::shared_ptr<StateBackend>()>& fresh_backend,
                       std::shared_ptr<CheckpointStore> store) {
  const Topology topology = diamond();
  std::shared_ptr<StateBackend> backend = fresh_backend();
  std::int64_t restored = 0;
  for (int round = 0; round < 3; ++round) {
    auto rt = start(topology, checkpoint_config(), backend, store, 10 + round);
    ASSERT_NE(rt, nullptr);
    EXPECT_EQ(rt->plan().checkpoint_restored, restored);
    ASSERT_TRUE(
        eventually([&] { return last_id(*store) >= restored + 2 || rt->spouts_finished(); }));
    rt->stop();
    restored = last_id(*store);
    rt.reset();
    backend = fresh_backend();
  }
  auto rt = start(topology, checkpoint_config(), backend, store, 99);
  ASSERT_NE(rt, nullptr);
  EXPECT_EQ(rt->plan().checkpoint_restored, restored);
  ASSERT_TRUE(eventually([&] { return rt->spouts_finished() && rt->in_flight() == 0; },
                         std::chrono::seconds(120)));
  const auto& count_tasks = rt->plan().layout->component_tasks.at("count");
  EXPECT_EQ(live_counts(*backend, count_tasks), true_counts([](std::int64_t) { return true; }));
  rt->stop();
}

TEST(Checkpoint, StoppedAndRestartedThreeTimesTheCountsAreExactInMemory) {
  auto backend = std::make_shared<InMemoryStateBackend>();
  run_with_restarts([&] { return backend; }, std::make_shared<InMemoryCheckpointStore>());
}

TEST(Checkpoint, StoppedAndRestartedThreeTimesTheCountsAreExactInRocksDbWithAFolderStore) {
  testing::TempDir dir;
  run_with_restarts([&] { return std::make_shared<RocksDbStateBackend>(dir.path() / "state"); },
                    std::make_shared<FolderCheckpointStore>(dir.path() / "checkpoints"));
  // Only the retained complete checkpoints (2) are left, and any newer one
  // in progress when the runtime stopped.
  int folders = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() / "checkpoints")) {
    if (e.path().filename().string().rfind("chk-", 0) == 0) ++folders;
  }
  EXPECT_GE(folders, 1);
  EXPECT_LE(folders, 3);
}

// A store that hangs (nimbus answering nothing) holds no task: parts are
// stored off the tasks' threads, so while the first part's put waits, the
// task that took it goes on processing. Once the store answers, the
// checkpoint completes and the counts end exact.
class HangingStore final : public CheckpointStore {
 public:
  api::Status put(std::int64_t checkpoint, TaskId task, std::string_view bytes) override {
    {
      std::unique_lock lock(mutex_);
      if (hang_) {
        hung_task_ = task;
        ++hung_;
        released_.wait(lock, [&] { return !hang_; });
      }
    }
    return inner_.put(checkpoint, task, bytes);
  }
  api::Result<std::string> get(const CheckpointRecord& record, TaskId task) override {
    return inner_.get(record, task);
  }
  api::Status complete(const CheckpointRecord& record, int retained) override {
    return inner_.complete(record, retained);
  }
  api::Result<std::vector<CheckpointRecord>> complete_checkpoints() override {
    return inner_.complete_checkpoints();
  }
  std::string describe() const override { return "a hanging store"; }

  void release() {
    {
      std::lock_guard lock(mutex_);
      hang_ = false;
    }
    released_.notify_all();
  }
  int hung() {
    std::lock_guard lock(mutex_);
    return hung_;
  }
  TaskId hung_task() {
    std::lock_guard lock(mutex_);
    return hung_task_;
  }

 private:
  InMemoryCheckpointStore inner_;
  std::mutex mutex_;
  std::condition_variable released_;
  bool hang_ = true;
  int hung_ = 0;
  TaskId hung_task_;
};

TEST(Checkpoint, AStoreThatHangsDoesNotStopTheTaskWhosePartWaits) {
  const Topology topology = diamond();
  auto store = std::make_shared<HangingStore>();
  auto backend = std::make_shared<InMemoryStateBackend>();
  auto rt = start(topology, checkpoint_config(), backend, store, 8);
  ASSERT_NE(rt, nullptr);
  struct Release {
    HangingStore& store;
    ~Release() { store.release(); }  // also when an assertion returns early
  } release{*store};
  ASSERT_TRUE(eventually([&] { return store->hung() >= 1; })) << errors_of(*rt);
  const TaskId task = store->hung_task();
  const Executor* owner = nullptr;
  for (const auto& ex : rt->executors()) {
    const auto& tasks = ex->plan().tasks;
    if (std::find(tasks.begin(), tasks.end(), task) != tasks.end()) owner = ex.get();
  }
  ASSERT_NE(owner, nullptr);
  auto work = [&] { return owner->stats().emitted.load() + owner->stats().executed.load(); };
  const std::uint64_t at_hang = work();
  EXPECT_TRUE(eventually([&] { return work() > at_hang + 100; }))
      << "task " << task.value << " stopped while its part waited for the store";
  EXPECT_EQ(store->hung(), 1) << "parts are stored one at a time, off the tasks' threads";
  store->release();
  ASSERT_TRUE(eventually([&] { return last_id(*store) >= 1; })) << errors_of(*rt);
  ASSERT_TRUE(eventually([&] { return rt->spouts_finished() && rt->in_flight() == 0; },
                         std::chrono::seconds(120)));
  const auto& count_tasks = rt->plan().layout->component_tasks.at("count");
  EXPECT_EQ(live_counts(*backend, count_tasks), true_counts([](std::int64_t) { return true; }));
  rt->stop();
}

// A full checkpoint store: the parts of one count task for checkpoints 1 to
// 3 are written to /dev/full (the kernel's "No space left on device"). Each
// failure is reported naming the task, the checkpoint and the cause, the
// checkpoint is given up, the topology runs on, and the next checkpoints
// complete; the counts end exact.
TEST(Checkpoint, AFullStoreIsReportedNamingTaskAndCheckpointAndTheTopologyRunsOn) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const Topology topology = diamond();
  testing::TempDir dir;
  auto plan = make_plan("diamond", checkpoint_config(), topology);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const TaskId full = (*plan)->layout->component_tasks.at("count").front();
  for (int id = 1; id <= 3; ++id) {
    const auto part = dir.path() / ("chk-" + std::to_string(id) + "-e0");
    std::filesystem::create_directories(part);
    std::filesystem::create_symlink("/dev/full",
                                    part / ("task-" + std::to_string(full.value) + ".tmp"));
  }
  auto store = std::make_shared<FolderCheckpointStore>(dir.path());
  auto backend = std::make_shared<InMemoryStateBackend>();
  auto rt = start(topology, checkpoint_config(), backend, store, 5);
  ASSERT_NE(rt, nullptr);
  ASSERT_TRUE(eventually([&] { return last_id(*store) >= 4; })) << errors_of(*rt);
  std::string errors;
  std::uint64_t part_failures = 0;
  for (const auto& ex : rt->executors()) {
    part_failures += ex->stats().checkpoint_part_failures.load();
    for (const auto& e : ex->recent_errors()) errors += e.message + "\n";
  }
  EXPECT_EQ(part_failures, 3u) << errors;
  EXPECT_NE(errors.find("checkpoint 1: cannot store the part of task " +
                        std::to_string(full.value) + " in checkpoint 1"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("No space left on device"), std::string::npos) << errors;
  ASSERT_TRUE(eventually([&] { return rt->spouts_finished() && rt->in_flight() == 0; },
                         std::chrono::seconds(120)));
  const auto& count_tasks = rt->plan().layout->component_tasks.at("count");
  EXPECT_EQ(live_counts(*backend, count_tasks), true_counts([](std::int64_t) { return true; }));
  rt->stop();
}

TEST(Checkpoint, ADamagedNewestCheckpointIsReportedAndTheOneBeforeIsRestored) {
  const Topology topology = diamond();
  auto store = std::make_shared<InMemoryCheckpointStore>();
  auto backend = std::make_shared<InMemoryStateBackend>();
  auto rt = start(topology, checkpoint_config(), backend, store, 5);
  ASSERT_NE(rt, nullptr);
  ASSERT_TRUE(eventually([&] { return last_id(*store) >= 3; }));
  rt->stop();
  auto records = store->complete_checkpoints();
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 2u);
  const std::int64_t newest = records->back().id;
  const TaskId count_task = rt->plan().layout->component_tasks.at("count").front();
  store->corrupt(newest, count_task, "not a snapshot");
  rt.reset();

  // Restarted: the newest cannot be read, the one before is restored, and
  // the run still ends with the true counts.
  auto again = start(topology, checkpoint_config(), backend, store, 6);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->plan().checkpoint_restored, records->front().id);
  ASSERT_TRUE(eventually([&] { return again->spouts_finished() && again->in_flight() == 0; },
                         std::chrono::seconds(120)));
  EXPECT_EQ(live_counts(*backend, again->plan().layout->component_tasks.at("count")),
            true_counts([](std::int64_t) { return true; }));
  again->stop();
}

TEST(Checkpoint, WhenNoCheckpointCanBeReadTheRuntimeRefusesToStartNamingTaskAndCheckpoint) {
  const Topology topology = diamond();
  auto store = std::make_shared<InMemoryCheckpointStore>();
  auto plan = make_plan("diamond", checkpoint_config(), topology);
  ASSERT_TRUE(plan.ok());
  ASSERT_TRUE(store->put(4, TaskId(1), encode_task_snapshot(4, TaskId(1), {})).is_ok());
  ASSERT_TRUE(store->complete(CheckpointRecord{4, 0, 0, 0, 9}, 2).is_ok());
  (*plan)->checkpoint_store = store;
  auto rt =
      TopologyRuntime::create(std::move(plan).value(), topology, nullptr, 1, ExecutorPlacement{});
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("cannot restore its state"), std::string::npos)
      << rt.status().message();
  EXPECT_NE(rt.status().message().find("part of task 2 in checkpoint 4 is missing"),
            std::string::npos)
      << rt.status().message();
}

TEST(Checkpoint, ATopologyWithACycleIsRefusedNamingTheEdge) {
  TopologyBuilder b;
  b.set_spout("sentences", [] { return std::make_unique<SentenceSpout>(); });
  b.set_bolt("split", [] { return std::make_unique<SplitBolt>(); })
      .shuffle_grouping("sentences")
      .shuffle_grouping("again");
  b.set_bolt("again", [] { return std::make_unique<SplitBolt>(); }).shuffle_grouping("split");
  auto t = b.build();
  ASSERT_TRUE(t.ok()) << t.status().message();
  auto plan = make_plan("cyclic", checkpoint_config(), *t);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("closes a cycle"), std::string::npos)
      << plan.status().message();
  EXPECT_NE(plan.status().message().find("'again' -> 'split'"), std::string::npos)
      << plan.status().message();
}

TEST(CheckpointCodec, PartsRoundTripAndDamageIsNamed) {
  const StateEntries entries = {
      {"a", "1"}, {std::string("b\0c", 3), std::string(300, 'x')}, {"", ""}};
  const std::string bytes = encode_task_snapshot(12, TaskId(7), entries);
  auto back = decode_task_snapshot(bytes, 12, TaskId(7));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, entries);

  auto other = decode_task_snapshot(bytes, 12, TaskId(8));
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("part of task 8 in checkpoint 12 is corrupt: it holds "
                                          "task 7's part of checkpoint 12"),
            std::string::npos)
      << other.status().message();
  std::string flipped = bytes;
  flipped[30] ^= 1;
  auto damaged = decode_task_snapshot(flipped, 12, TaskId(7));
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.status().message().find("checksum does not match"), std::string::npos);
  auto cut = decode_task_snapshot(bytes.substr(0, 20), 12, TaskId(7));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("too short"), std::string::npos);
}

TEST(CheckpointStoreFolder, KeepsTheRetainedCompleteOnesAndRemovesTheRest) {
  testing::TempDir dir;
  FolderCheckpointStore store(dir.path() / "wc");
  for (std::int64_t id = 1; id <= 5; ++id) {
    ASSERT_TRUE(
        store.put(id, TaskId(1), encode_task_snapshot(id, TaskId(1), {{"k", "v"}})).is_ok());
    if (id != 4) {
      ASSERT_TRUE(store.complete(CheckpointRecord{id, 10 * id, 10 * id + 1, 30, 1}, 2).is_ok());
    }
  }
  ASSERT_TRUE(store.put(6, TaskId(1), "in progress").is_ok());
  auto kept = store.complete_checkpoints();
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  ASSERT_EQ(kept->size(), 2u);
  EXPECT_EQ((*kept)[0], (CheckpointRecord{3, 30, 31, 30, 1}));
  EXPECT_EQ((*kept)[1].id, 5);
  std::vector<std::string> folders;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() / "wc")) {
    folders.push_back(e.path().filename().string());
  }
  std::sort(folders.begin(), folders.end());
  EXPECT_EQ(folders, (std::vector<std::string>{"chk-3-e0", "chk-5-e0", "chk-6-e0", "complete",
                                               "epoch.lock"}));
  auto missing = store.get(CheckpointRecord{.id = 4}, TaskId(1));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("part of task 1 in checkpoint 4 is missing"),
            std::string::npos);
  std::ofstream(dir.path() / "wc" / "complete") << "garbage\n";
  auto bad = store.complete_checkpoints();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cannot be read: line 'garbage'"), std::string::npos);
}

}  // namespace
}  // namespace rstorm::worker
