// Every grouping, end to end through LocalCluster: which task gets which tuple.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <set>
#include <sstream>

#include "rstorm/worker/field_hash.hpp"
#include "test_helpers.hpp"

namespace rstorm {
namespace {

using testing::CapturedLog;
using testing::counting_spout;
using testing::eventually;
using testing::Ledger;
using testing::recording_bolt;

// Emits {key, n} for n = 0 .. limit-1 with key = "k" + (n % keys).
class KeySpout : public Spout {
 public:
  KeySpout(std::int64_t limit, int keys) : limit_(limit), keys_(keys) {}
  void open(const Config&, const TopologyContext&, SpoutOutputCollector& c) override { out_ = &c; }
  void next_tuple() override {
    if (n_ >= limit_) return;
    out_->emit({"k" + std::to_string(n_ % keys_), n_});
    ++n_;
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields{"key", "n"}); }

 private:
  SpoutOutputCollector* out_ = nullptr;
  std::int64_t limit_;
  int keys_;
  std::int64_t n_ = 0;
};

// Runs `topology` until the ledger holds `expected` tuples, then kills it.
void run_until(const Topology& topology, Ledger& ledger, std::size_t expected) {
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", Config(), topology).is_ok());
  ASSERT_TRUE(eventually([&] { return ledger.received_total() >= expected; }));
  ASSERT_TRUE(cluster.kill("t").is_ok());
  EXPECT_EQ(ledger.received_total(), expected);
}

std::map<std::string, std::set<std::int32_t>> key_tasks(Ledger& ledger) {
  std::map<std::string, std::set<std::int32_t>> out;
  for (const auto& [task, tuples] : ledger.received) {
    for (const auto& t : tuples) out[t.get_string(0)].insert(task);
  }
  return out;
}

TEST(Groupings, FieldsGroupingSendsSameKeyToSameTaskAcrossRuns) {
  std::map<std::string, std::set<std::int32_t>> first;
  for (int run = 0; run < 2; ++run) {
    auto ledger = std::make_shared<Ledger>();
    TopologyBuilder b;
    b.set_spout("keys", [] { return std::make_unique<KeySpout>(20000, 50); });
    b.set_bolt("sink", recording_bolt(ledger), 2)
        .set_num_tasks(4)
        .fields_grouping("keys", Fields{"key"});
    auto t = b.build();
    ASSERT_TRUE(t.ok());
    run_until(*t, *ledger, 20000);
    auto tasks = key_tasks(*ledger);
    ASSERT_EQ(tasks.size(), 50u);
    std::set<std::int32_t> used;
    for (const auto& [key, set] : tasks) {
      ASSERT_EQ(set.size(), 1u) << "key " << key << " went to several tasks";
      used.insert(*set.begin());
    }
    EXPECT_EQ(used.size(), 4u);  // 50 keys spread over all four tasks
    if (run == 0) {
      first = tasks;
    } else {
      EXPECT_EQ(tasks, first);  // same key -> same task, run after run
    }
  }
}

TEST(Groupings, FieldsHashIsStableAcrossProcessesAndVersions) {
  // Fixed values: a change here moves keys between tasks for running users.
  const int idx[] = {0};
  EXPECT_EQ(worker::fields_hash(Values{"apple"}, idx), 15087377643208141511ULL);
  EXPECT_EQ(worker::fields_hash(Values{std::int64_t{42}}, idx), 11681803648414190572ULL);
  const int two[] = {1, 0};
  EXPECT_NE(worker::fields_hash(Values{"a", "b"}, two), worker::fields_hash(Values{"b", "a"}, two));
}

TEST(Groupings, FieldsHashIsXxh3OfTheCanonicalBytesWhateverTheirLength) {
  // Every type, and keys whose bytes pass the room kept on the stack (256),
  // alone or together: the hash is XXH3-64 of the bytes
  // append_canonical_bytes writes, one after the other.
  const std::string long_string(300, 'x');
  const Values values{Value(),          true,
                      std::int64_t{-7}, 2.5,
                      "word",           Value(Bytes{1, 2, 3}),
                      long_string,      std::string(200, 'y')};
  const std::vector<std::vector<int>> keys = {
      {0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {4, 2}, {7, 4}, {7, 7}, {0, 1, 2, 3, 4, 5}, {3, 6}};
  for (const auto& key : keys) {
    std::string bytes;
    for (int i : key) worker::append_canonical_bytes(values[static_cast<std::size_t>(i)], bytes);
    EXPECT_EQ(worker::fields_hash(values, key), XXH3_64bits(bytes.data(), bytes.size()))
        << "key of " << key.size() << " fields, " << bytes.size() << " bytes";
  }
  // The canonical bytes themselves: a tag, then the value.
  std::string word;
  worker::append_canonical_bytes(Value("ab"), word);
  EXPECT_EQ(word, std::string("\x04\x02\0\0\0\0\0\0\0ab", 11));
  std::string number;
  worker::append_canonical_bytes(Value(std::int64_t{258}), number);
  EXPECT_EQ(number, std::string("\x02\x02\x01\0\0\0\0\0\0", 9));
}

TEST(Groupings, ShuffleGroupingIsEvenOver100kTuples) {
  auto ledger = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(ledger, 100000, false));
  b.set_bolt("sink", recording_bolt(ledger), 4).shuffle_grouping("numbers");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  run_until(*t, *ledger, 100000);
  ASSERT_EQ(ledger->received.size(), 4u);
  for (const auto& [task, tuples] : ledger->received) {
    EXPECT_NEAR(static_cast<double>(tuples.size()), 25000.0, 25000.0 * 0.05) << "task " << task;
  }
}

TEST(Groupings, AllGroupingSendsEveryTupleToEveryTask) {
  auto ledger = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(ledger, 1000, false));
  b.set_bolt("sink", recording_bolt(ledger), 3).all_grouping("numbers");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  run_until(*t, *ledger, 3000);
  ASSERT_EQ(ledger->received.size(), 3u);
  for (const auto& [task, tuples] : ledger->received) {
    std::set<std::int64_t> seen;
    for (const auto& tuple : tuples) seen.insert(tuple.get_int(0));
    EXPECT_EQ(seen.size(), 1000u) << "task " << task;
  }
}

TEST(Groupings, GlobalGroupingSendsEverythingToLowestTask) {
  auto ledger = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(ledger, 1000, false));
  b.set_bolt("sink", recording_bolt(ledger), 3).global_grouping("numbers");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  run_until(*t, *ledger, 1000);
  ASSERT_EQ(ledger->received.size(), 1u);
  // Tasks: numbers = 1, sink = 2, 3, 4 (ids in component order).
  EXPECT_EQ(ledger->received.begin()->first, 2);
}

// Sends each n to the sink task n % tasks with emit_direct.
class DirectSpout : public Spout {
 public:
  void open(const Config&, const TopologyContext& ctx, SpoutOutputCollector& c) override {
    out_ = &c;
    targets_ = ctx.component_tasks("sink");
  }
  void next_tuple() override {
    if (n_ >= 999) return;
    out_->emit_direct(targets_[static_cast<std::size_t>(n_) % targets_.size()], {n_});
    ++n_;
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(true, Fields{"n"}); }

 private:
  SpoutOutputCollector* out_ = nullptr;
  std::vector<TaskId> targets_;
  std::int64_t n_ = 0;
};

TEST(Groupings, DirectGroupingDeliversToTheChosenTask) {
  auto ledger = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("numbers", [] { return std::make_unique<DirectSpout>(); });
  b.set_bolt("sink", recording_bolt(ledger), 3).direct_grouping("numbers");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  run_until(*t, *ledger, 999);
  ASSERT_EQ(ledger->received.size(), 3u);
  for (const auto& [task, tuples] : ledger->received) {
    EXPECT_EQ(tuples.size(), 333u);
    for (const auto& tuple : tuples) ASSERT_EQ(2 + tuple.get_int(0) % 3, task);
  }
}

TEST(Groupings, LocalOrShuffleSpreadsOverLocalTasks) {
  auto ledger = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(ledger, 9000, false));
  b.set_bolt("sink", recording_bolt(ledger), 3).local_or_shuffle_grouping("numbers");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  run_until(*t, *ledger, 9000);
  ASSERT_EQ(ledger->received.size(), 3u);
  for (const auto& [task, tuples] : ledger->received) EXPECT_EQ(tuples.size(), 3000u);
}

TEST(Groupings, NoneGroupingDeliversEveryTupleOnce) {
  auto ledger = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(ledger, 5000, false));
  b.set_bolt("sink", recording_bolt(ledger), 2).none_grouping("numbers");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  run_until(*t, *ledger, 5000);
  std::set<std::int64_t> seen;
  for (const auto& [task, tuples] : ledger->received) {
    for (const auto& tuple : tuples) seen.insert(tuple.get_int(0));
  }
  EXPECT_EQ(seen.size(), 5000u);
}

// Emits {n} for n < 1000, and after every tenth a wrong emit: one value too
// many, or (`direct_mistake`) emit_direct on a stream that is not direct.
class SometimesWrongSpout : public Spout {
 public:
  explicit SometimesWrongSpout(bool direct_mistake) : direct_mistake_(direct_mistake) {}
  void open(const Config&, const TopologyContext&, SpoutOutputCollector& c) override { out_ = &c; }
  void next_tuple() override {
    if (n_ >= 1000) return;
    const std::int64_t n = n_++;
    out_->emit({n});
    if (n % 10 != 5) return;
    // The error ends this call (the executor catches it, counts and logs it).
    if (direct_mistake_) {
      out_->emit_direct(TaskId(2), {n});
    } else {
      out_->emit({n, n});
    }
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields{"n"}); }

 private:
  bool direct_mistake_;
  SpoutOutputCollector* out_ = nullptr;
  std::int64_t n_ = 0;
};

// A stream whose targets do not depend on the tuple (one task, all, global)
// is routed once at start; what it delivers and the errors of wrong emits
// are those of routing each tuple.
TEST(Groupings, StreamRoutedOnceDeliversToEveryFixedTargetAndStillRefusesWrongEmits) {
  for (bool direct_mistake : {false, true}) {
    SCOPED_TRACE(direct_mistake ? "emit_direct" : "wrong arity");
    auto one = std::make_shared<Ledger>();
    auto all = std::make_shared<Ledger>();
    auto global = std::make_shared<Ledger>();
    TopologyBuilder b;
    b.set_spout("numbers", [=] { return std::make_unique<SometimesWrongSpout>(direct_mistake); });
    b.set_bolt("one", recording_bolt(one), 1).shuffle_grouping("numbers");
    b.set_bolt("all", recording_bolt(all), 3).all_grouping("numbers");
    b.set_bolt("global", recording_bolt(global), 2).global_grouping("numbers");
    auto t = b.build();
    ASSERT_TRUE(t.ok());
    CapturedLog log;
    LocalCluster cluster(LocalClusterOptions{log.logger, 7});
    ASSERT_TRUE(cluster.submit("t", Config(), *t).is_ok());
    ASSERT_TRUE(eventually([&] {
      return one->received_total() == 1000 && all->received_total() == 3000 &&
             global->received_total() == 1000;
    }));
    auto stats = cluster.stats("t");
    ASSERT_TRUE(cluster.kill("t").is_ok());
    EXPECT_EQ(one->received_total(), 1000u);
    EXPECT_EQ(all->received.size(), 3u);
    for (const auto& [task, tuples] : all->received) EXPECT_EQ(tuples.size(), 1000u);
    EXPECT_EQ(global->received.size(), 1u);
    EXPECT_EQ(stats->component("numbers")->errors, 100u);
    const std::string expected =
        direct_mistake ? "used emit_direct on stream 'default', which is not declared direct"
                       : "emitted 2 values on stream 'default', which declares 1 fields (n)";
    EXPECT_NE(log.all().find(expected), std::string::npos) << log.all();
  }
}

// A stream whose targets depend on the tuple (fields, shuffle over several
// tasks) is routed per emit, from the emitted list itself: each value is
// delivered once, a key always to the same task, and a wrong emit is still
// refused naming the stream and its fields.
TEST(Groupings, StreamRoutedPerEmitFromAListDeliversByKeyAndStillRefusesWrongEmits) {
  for (bool direct_mistake : {false, true}) {
    SCOPED_TRACE(direct_mistake ? "emit_direct" : "wrong arity");
    auto by_key = std::make_shared<Ledger>();
    auto shuffled = std::make_shared<Ledger>();
    TopologyBuilder b;
    b.set_spout("numbers", [=] { return std::make_unique<SometimesWrongSpout>(direct_mistake); });
    b.set_bolt("by_key", recording_bolt(by_key), 3).fields_grouping("numbers", Fields{"n"});
    b.set_bolt("shuffled", recording_bolt(shuffled), 2).shuffle_grouping("numbers");
    auto t = b.build();
    ASSERT_TRUE(t.ok());
    CapturedLog log;
    LocalCluster cluster(LocalClusterOptions{log.logger, 7});
    ASSERT_TRUE(cluster.submit("t", Config(), *t).is_ok());
    ASSERT_TRUE(eventually(
        [&] { return by_key->received_total() == 1000 && shuffled->received_total() == 1000; }));
    auto stats = cluster.stats("t");
    ASSERT_TRUE(cluster.kill("t").is_ok());
    std::map<std::int64_t, std::int32_t> task_of;
    for (const auto& [task, tuples] : by_key->received) {
      for (const auto& tuple : tuples) {
        ASSERT_EQ(tuple.values().size(), 1u);
        const std::int64_t n = tuple.get_int(0);  // by index: the plan is gone
        EXPECT_TRUE(task_of.emplace(n, task).second) << n << " delivered twice";
        const int key[] = {0};
        const auto tasks = static_cast<std::uint64_t>(by_key->received.size());
        EXPECT_EQ(static_cast<std::uint64_t>(task - by_key->received.begin()->first),
                  worker::fields_hash(Values{n}, key) % tasks)
            << n;
      }
    }
    EXPECT_EQ(task_of.size(), 1000u);
    EXPECT_EQ(by_key->received.size(), 3u);
    EXPECT_EQ(shuffled->received.size(), 2u);
    EXPECT_EQ(stats->component("numbers")->errors, 100u);
    const std::string expected =
        direct_mistake ? "used emit_direct on stream 'default', which is not declared direct"
                       : "emitted 2 values on stream 'default', which declares 1 fields (n)";
    EXPECT_NE(log.all().find(expected), std::string::npos) << log.all();
  }
}

// emit({...}) and emit of a Values kept by the caller copy the values
// straight into the tuple sent; emit of a temporary Values moves them. Every
// overload, every way, must deliver the same tuple, on the right stream, in
// the right tree: a spout emits {n, text} reliably and not, from a list and
// from a Values, on two streams (its "side" stream to the sink directly); a
// bolt, fused with the spout or not, forwards each input with another
// overload (anchored, on a stream, to a vector of anchors, unanchored, a
// temporary Values, a wrong arity, a Values it keeps, a const one); a sink
// records.
// Which Values an emit moves from: temporaries and std::move'd ones only.
static_assert(detail::kMovable<Values>);
static_assert(detail::kMovable<Values&&>);
static_assert(!detail::kMovable<Values&>);
static_assert(!detail::kMovable<const Values&>);
static_assert(!detail::kMovable<const Values>);

class OverloadSpout : public Spout {
 public:
  explicit OverloadSpout(std::shared_ptr<Ledger> ledger) : ledger_(std::move(ledger)) {}
  void open(const Config&, const TopologyContext&, SpoutOutputCollector& c) override { out_ = &c; }
  void next_tuple() override {
    if (n_ >= kTuples) return;
    const std::string text = text_of(n_);
    switch (n_ % 5) {
      case 0:
        out_->emit({n_, text}, n_);
        break;
      case 1:
        out_->emit(Values{n_, text}, n_);
        break;
      case 2:
        out_->emit("side", {n_, text}, n_);
        break;
      case 3:
        out_->emit({n_, text});
        break;
      case 4:
        out_->emit("side", {n_, text});
        break;
    }
    ++n_;
  }
  void ack(const Value& id) override { ledger_->record_ack(id); }
  void fail(const Value& id) override { ledger_->record_fail(id); }
  void declare_output_fields(OutputFieldsDeclarer& d) override {
    d.declare(Fields{"n", "text"});
    d.declare_stream("side", Fields{"n", "text"});
  }
  static std::string text_of(std::int64_t n) {
    // Short (inline in the string) and long (on the heap) alike.
    return n % 2 ? "n" + std::to_string(n) : std::string(40, 'x') + std::to_string(n);
  }
  static constexpr std::int64_t kTuples = 2000;

 private:
  std::shared_ptr<Ledger> ledger_;
  SpoutOutputCollector* out_ = nullptr;
  std::int64_t n_ = 0;
};

class OverloadBolt : public Bolt {
 public:
  void prepare(const Config&, const TopologyContext&, OutputCollector& c) override { out_ = &c; }
  void execute(const Tuple& in) override {
    const std::int64_t n = in.get_int("n");
    const std::string& text = in.get_string("text");
    const std::int64_t overload = n % 9;  // the third value says which overload sent it
    const std::vector<const Tuple*> anchors{&in};
    switch (overload) {
      case 0:
        out_->emit(in, {n, text, overload});
        break;
      case 1:
        out_->emit("side", in, {n, text, overload});
        break;
      case 2:
        out_->emit(anchors, {n, text, overload});
        break;
      case 3:
        out_->emit("side", anchors, {n, text, overload});
        break;
      case 4:
        out_->emit({n, text, overload});
        break;
      case 5:
        out_->emit(in, Values{n, text, overload});
        break;
      case 6:
        try {
          out_->emit(in, {n, text});  // two values where three are declared
        } catch (const std::invalid_argument&) {
          out_->emit("side", in, {n, text, overload});
        }
        break;
      case 7: {
        Values kept{n, text, overload};  // copied, not moved from
        out_->emit(in, kept);
        if (kept != Values{n, text, overload}) out_->emit("side", in, {n, text, -1});
        break;
      }
      case 8: {
        const Values kept{n, text, overload};
        out_->emit("side", anchors, kept);
        break;
      }
    }
    out_->ack(in);
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override {
    d.declare(Fields{"n", "text", "overload"});
    d.declare_stream("side", Fields{"n", "text", "overload"});
  }

 private:
  OutputCollector* out_ = nullptr;
};

TEST(Groupings, EveryEmitOverloadDeliversTheSameTupleInTheSameTree) {
  for (bool fuse : {false, true}) {
    SCOPED_TRACE(fuse ? "fused" : "not fused");
    auto spout = std::make_shared<Ledger>();
    auto sink = std::make_shared<Ledger>();
    TopologyBuilder b;
    b.set_spout("src", [=] { return std::make_unique<OverloadSpout>(spout); });
    b.set_bolt("fwd", [] {
       return std::make_unique<OverloadBolt>();
     }).local_or_shuffle_grouping("src");
    b.set_bolt("sink", recording_bolt(sink))
        .shuffle_grouping("fwd")
        .shuffle_grouping("fwd", "side")
        .shuffle_grouping("src", "side");
    auto t = b.build();
    ASSERT_TRUE(t.ok());
    Config config;
    config.set(std::string(keys::kTopologyFuseExecutors), fuse, "test");
    CapturedLog log;
    LocalCluster cluster(LocalClusterOptions{log.logger, 11});
    ASSERT_TRUE(cluster.submit("t", config, *t).is_ok());
    const std::size_t reliable = 3 * OverloadSpout::kTuples / 5;
    ASSERT_TRUE(eventually([&] {
      return sink->received_total() == OverloadSpout::kTuples && spout->acked_total() == reliable;
    })) << sink->received_total()
        << " received, " << spout->acked_total() << " acked";
    // Checked before the kill: a tuple's stream names belong to the topology.
    std::unique_lock lock(sink->mutex);
    std::map<std::int64_t, int> seen;
    for (const auto& [task, tuples] : sink->received) {
      for (const Tuple& in : tuples) {
        const std::int64_t n = in.get_int(0);
        ++seen[n];
        EXPECT_EQ(in.get_string(1), OverloadSpout::text_of(n)) << n;
        if (n % 5 == 2 || n % 5 == 4) {  // the spout's "side" stream, straight to the sink
          EXPECT_EQ(in.source_component(), "src") << n;
          EXPECT_EQ(in.source_stream(), "side") << n;
          EXPECT_EQ(in.size(), 2u) << n;
          continue;
        }
        EXPECT_EQ(in.source_component(), "fwd") << n;
        if (in.size() != 3u) {
          ADD_FAILURE() << n << " has " << in.size() << " values";
          continue;
        }
        EXPECT_EQ(in.get_int(2), n % 9) << n;
        const bool to_side = n % 9 == 1 || n % 9 == 3 || n % 9 == 6 || n % 9 == 8;
        EXPECT_EQ(in.source_stream(), to_side ? "side" : "default") << n;
      }
    }
    lock.unlock();
    ASSERT_TRUE(cluster.kill("t").is_ok());
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(OverloadSpout::kTuples));
    for (const auto& [n, times] : seen) EXPECT_EQ(times, 1) << n;
    for (const auto& [n, times] : spout->acks) {
      EXPECT_EQ(times, 1) << n;
      EXPECT_LT(n % 5, 3) << n;
    }
    EXPECT_TRUE(spout->fails.empty());
  }
}

// Emits even numbers on "even" and odd ones on "odd".
class TwoStreamSpout : public Spout {
 public:
  void open(const Config&, const TopologyContext&, SpoutOutputCollector& c) override { out_ = &c; }
  void next_tuple() override {
    if (n_ >= 1000) return;
    out_->emit(n_ % 2 ? "odd" : "even", {n_});
    ++n_;
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override {
    d.declare_stream("even", Fields{"n"});
    d.declare_stream("odd", Fields{"n"});
  }

 private:
  SpoutOutputCollector* out_ = nullptr;
  std::int64_t n_ = 0;
};

TEST(Groupings, NamedStreamsReachOnlyTheirSubscribers) {
  auto evens = std::make_shared<Ledger>();
  auto odds = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("numbers", [] { return std::make_unique<TwoStreamSpout>(); });
  b.set_bolt("evens", recording_bolt(evens)).shuffle_grouping("numbers", "even");
  b.set_bolt("odds", recording_bolt(odds)).shuffle_grouping("numbers", "odd");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", Config(), *t).is_ok());
  ASSERT_TRUE(eventually(
      [&] { return evens->received_total() == 500 && odds->received_total() == 500; }));
  ASSERT_TRUE(cluster.kill("t").is_ok());
  for (const auto& [task, tuples] : evens->received) {
    for (const auto& tuple : tuples) ASSERT_EQ(tuple.get_int(0) % 2, 0);
  }
  for (const auto& [task, tuples] : odds->received) {
    for (const auto& tuple : tuples) ASSERT_EQ(tuple.get_int(0) % 2, 1);
  }
}

}  // namespace
}  // namespace rstorm
