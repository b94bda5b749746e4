// Fused executors (topology.fuse.executors): a bolt whose only input is one
// producer by local-or-shuffle, with the producer's parallelism, runs on the
// producer's thread. Counts stay exact per component, acking and errors keep
// their meaning, and a bolt that does not qualify keeps its own thread.
#include <gtest/gtest.h>
#include <pthread.h>

#include <optional>
#include <set>

#include "test_helpers.hpp"

namespace rstorm {
namespace {

using testing::counting_spout;
using testing::eventually;
using testing::Ledger;
using testing::recording_bolt;

// The names of the threads a bolt's execute ran on.
struct Threads {
  std::mutex mutex;
  std::set<std::string> names;
  void record() {
    char name[32] = {};
    pthread_getname_np(pthread_self(), name, sizeof name);
    std::lock_guard lock(mutex);
    names.insert(name);
  }
};

// Forwards its input anchored, then acks it.
BoltFactory forwarding_bolt(std::shared_ptr<Ledger> ledger, std::shared_ptr<Threads> threads) {
  return recording_bolt(ledger, [threads](const Tuple& t, OutputCollector& out) {
    threads->record();
    out.emit(t, {t.get_int(0)});
    out.ack(t);
  });
}

Config fused() {
  Config c;
  c.set("topology.fuse.executors", true);
  return c;
}

const ComponentStats& component(const TopologyStats& s, const std::string& id) {
  const ComponentStats* c = s.component(id);
  EXPECT_NE(c, nullptr) << id;
  return *c;
}

// spout(2) -> a(2) -> b(2) by local-or-shuffle, b -> sink(1) by shuffle: a
// and b run on the spout's threads, the sink on its own; every value reaches
// the sink once and every tree is acked.
TEST(Fusion, ChainRunsOnTheSpoutsThreadsWithExactCountsAndAcks) {
  constexpr std::int64_t kN = 20000;
  auto spout = std::make_shared<Ledger>(), a = std::make_shared<Ledger>(),
       b = std::make_shared<Ledger>(), sink = std::make_shared<Ledger>();
  auto a_threads = std::make_shared<Threads>(), b_threads = std::make_shared<Threads>();
  TopologyBuilder builder;
  builder.set_spout("spout", counting_spout(spout, kN, true), 2);
  builder.set_bolt("a", forwarding_bolt(a, a_threads), 2).local_or_shuffle_grouping("spout");
  builder.set_bolt("b", forwarding_bolt(b, b_threads), 2).local_or_shuffle_grouping("a");
  builder.set_bolt("sink", recording_bolt(sink)).shuffle_grouping("b");
  auto t = builder.build();
  ASSERT_TRUE(t.ok());
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", fused(), *t).is_ok());
  // Two spout tasks each count 0..kN-1.
  // acks: message id -> times acked (once by each spout task).
  auto acks = [&] {
    std::lock_guard lock(spout->mutex);
    std::int64_t n = 0;
    for (const auto& [id, times] : spout->acks) n += times;
    return n;
  };
  ASSERT_TRUE(eventually([&] { return acks() == 2 * kN; })) << acks();
  EXPECT_EQ(spout->acked_total(), static_cast<std::size_t>(kN));
  EXPECT_EQ(spout->failed_total(), 0u);
  auto stats = cluster.stats("t");
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(component(*stats, "a").fused_into, "spout");
  EXPECT_EQ(component(*stats, "b").fused_into, "a");
  EXPECT_EQ(component(*stats, "sink").fused_into, "");
  EXPECT_EQ(component(*stats, "a").executed, 2u * kN);
  EXPECT_EQ(component(*stats, "b").executed, 2u * kN);
  EXPECT_EQ(component(*stats, "sink").executed, 2u * kN);
  EXPECT_EQ(a_threads->names, std::set<std::string>{"rs:spout"});
  EXPECT_EQ(b_threads->names, std::set<std::string>{"rs:spout"});
  std::map<std::int64_t, int> seen;
  {
    std::lock_guard lock(sink->mutex);
    for (const auto& [task, tuples] : sink->received) {
      for (const Tuple& tuple : tuples) ++seen[tuple.get_int(0)];
    }
  }
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(kN));
  for (const auto& [value, count] : seen) ASSERT_EQ(count, 2) << value;
  // Each member task got the input of one producer executor only.
  {
    std::lock_guard lock(a->mutex);
    ASSERT_EQ(a->received.size(), 2u);
    for (const auto& [task, tuples] : a->received)
      EXPECT_EQ(tuples.size(), static_cast<std::size_t>(kN));
  }
  ASSERT_TRUE(cluster.kill("t").is_ok());
  EXPECT_EQ(a->cleaned_up.load(), 2);
  EXPECT_EQ(b->cleaned_up.load(), 2);
}

// An exception in a fused bolt fails that input's tree (the spout replays it)
// and is counted as the bolt's error; nothing else is lost.
TEST(Fusion, ThrowingMemberFailsItsInputAndTheReplayCompletes) {
  constexpr std::int64_t kN = 2000;
  auto spout = std::make_shared<Ledger>(), a = std::make_shared<Ledger>(),
       sink = std::make_shared<Ledger>();
  auto threads = std::make_shared<Threads>();
  TopologyBuilder builder;
  builder.set_spout("spout", counting_spout(spout, kN, true, /*replay=*/true));
  // Throws the first time it sees a multiple of 100, then passes it.
  auto once = std::make_shared<std::set<std::int64_t>>();
  builder
      .set_bolt("a",
                recording_bolt(a,
                               [once, threads](const Tuple& t, OutputCollector& out) {
                                 threads->record();
                                 const std::int64_t n = t.get_int(0);
                                 if (n % 100 == 0 && once->insert(n).second) {
                                   throw std::runtime_error("first sight of " + std::to_string(n));
                                 }
                                 out.emit(t, {n});
                                 out.ack(t);
                               }))
      .local_or_shuffle_grouping("spout");
  builder.set_bolt("sink", recording_bolt(sink)).shuffle_grouping("a");
  auto t = builder.build();
  ASSERT_TRUE(t.ok());
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", fused(), *t).is_ok());
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(spout->mutex);
    return spout->acks.size() == static_cast<std::size_t>(kN);
  }));
  auto stats = cluster.stats("t");
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(component(*stats, "a").fused_into, "spout");
  EXPECT_EQ(component(*stats, "a").errors, static_cast<std::uint64_t>(kN / 100));
  EXPECT_EQ(spout->failed_total(), static_cast<std::size_t>(kN / 100));
  EXPECT_EQ(threads->names, std::set<std::string>{"rs:spout"});
}

// With acking, a tree that runs wholly inside its fused spout's emit is
// completed by the spout itself: spout -> a -> b, all fused, and the acker
// sees nothing of the trees a and b ack at once. A tree a fails, or whose
// input a holds and acks on a later execute, still goes through the acker:
// it fails, or completes, as without fusion.
TEST(Fusion, TreesAckedInsideTheSpoutsEmitCompleteWithoutTheAcker) {
  constexpr std::int64_t kN = 5000;
  for (bool mixed : {false, true}) {
    SCOPED_TRACE(mixed ? "some failed or acked later" : "all acked at once");
    auto spout = std::make_shared<Ledger>(), a = std::make_shared<Ledger>(),
         b = std::make_shared<Ledger>();
    auto threads = std::make_shared<Threads>();
    auto held = std::make_shared<std::optional<Tuple>>();
    TopologyBuilder builder;
    builder.set_spout("spout", counting_spout(spout, kN, true));
    builder
        .set_bolt("a", recording_bolt(a,
                                      [=](const Tuple& t, OutputCollector& out) {
                                        threads->record();
                                        if (held->has_value()) {
                                          out.ack(**held);  // acked one execute late
                                          held->reset();
                                        }
                                        const std::int64_t n = t.get_int(0);
                                        if (mixed && n % 10 == 3) {
                                          out.fail(t);
                                        } else if (mixed && n % 10 == 7) {
                                          *held = t;
                                        } else {
                                          out.emit(t, {n});
                                          out.ack(t);
                                        }
                                      }))
        .local_or_shuffle_grouping("spout");
    builder.set_bolt("b", recording_bolt(b)).local_or_shuffle_grouping("a");
    auto t = builder.build();
    ASSERT_TRUE(t.ok());
    LocalCluster cluster;
    ASSERT_TRUE(cluster.submit("t", fused(), *t).is_ok());
    const std::size_t failed = mixed ? kN / 10 : 0;
    ASSERT_TRUE(eventually([&] {
      return spout->acked_total() + spout->failed_total() == static_cast<std::size_t>(kN);
    })) << spout->acked_total()
        << " acked, " << spout->failed_total() << " failed";
    EXPECT_EQ(spout->failed_total(), failed);
    {
      std::lock_guard lock(spout->mutex);
      for (std::int64_t n = 0; n < kN; ++n) {
        const bool fails = mixed && n % 10 == 3;
        ASSERT_EQ(spout->acks.count(n), fails ? 0u : 1u) << n;
        ASSERT_EQ(spout->fails.count(n), fails ? 1u : 0u) << n;
      }
    }
    auto stats = cluster.stats("t");
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(component(*stats, "a").fused_into, "spout");
    EXPECT_EQ(component(*stats, "b").fused_into, "a");
    EXPECT_EQ(component(*stats, "spout").acked, static_cast<std::uint64_t>(kN) - failed);
    EXPECT_EQ(component(*stats, "b").executed, static_cast<std::uint64_t>(kN) - kN / 5 * mixed);
    // The acker saw only the trees that left the emit unfinished: each of
    // those sent it an init and an ack or a fail.
    EXPECT_EQ(component(*stats, "__acker").executed, mixed ? 2u * (kN / 5) : 0u);
    EXPECT_EQ(threads->names, std::set<std::string>{"rs:spout"});
  }
}

// What does not qualify keeps its own thread: fusion off; two inputs; a
// shuffle grouping; another parallelism; tick tuples.
TEST(Fusion, OnlyASingleLocalOrShuffleInputWithEqualParallelismAndNoTicksIsFused) {
  auto l = std::make_shared<Ledger>();
  auto threads = std::make_shared<Threads>();
  TopologyBuilder builder;
  builder.set_spout("s1", counting_spout(l, 100, true));
  builder.set_spout("s2", counting_spout(l, 100, true));
  builder.set_bolt("two_inputs", forwarding_bolt(l, threads))
      .local_or_shuffle_grouping("s1")
      .local_or_shuffle_grouping("s2");
  builder.set_bolt("shuffled", forwarding_bolt(l, threads)).shuffle_grouping("two_inputs");
  builder.set_bolt("wider", forwarding_bolt(l, threads), 2).local_or_shuffle_grouping("shuffled");
  builder.set_bolt("ticked", forwarding_bolt(l, threads))
      .add_configuration("topology.tick.tuple.freq.secs", 1)
      .local_or_shuffle_grouping("s1");
  builder.set_bolt("fused", recording_bolt(l)).local_or_shuffle_grouping("shuffled");
  auto t = builder.build();
  ASSERT_TRUE(t.ok());
  for (bool fuse : {false, true}) {
    LocalCluster cluster;
    Config conf;
    conf.set("topology.fuse.executors", fuse);
    ASSERT_TRUE(cluster.submit("t", conf, *t).is_ok());
    auto stats = cluster.stats("t");
    ASSERT_TRUE(stats.ok());
    for (const char* id : {"two_inputs", "shuffled", "wider", "ticked"}) {
      EXPECT_EQ(component(*stats, id).fused_into, "") << id << " fuse " << fuse;
    }
    EXPECT_EQ(component(*stats, "fused").fused_into, fuse ? "shuffled" : "") << "fuse " << fuse;
    ASSERT_TRUE(cluster.kill("t").is_ok());
  }
}

// A bolt fed by a global grouping gets everything in one executor. Its
// local-or-shuffle consumer is not fused into it: fused, executor i of the
// consumer would get only what executor i of the producer got, so one of
// them would do all the work on one thread. Unfused, the producer's one
// busy executor spreads its output over both; below it, fed evenly, the
// next bolt is fused again.
TEST(Fusion, NoBoltIsFusedIntoAProducerFedByAGlobalGrouping) {
  constexpr std::int64_t kN = 2000;
  auto spout = std::make_shared<Ledger>(), a = std::make_shared<Ledger>(),
       b = std::make_shared<Ledger>(), c = std::make_shared<Ledger>();
  auto threads = std::make_shared<Threads>();
  TopologyBuilder builder;
  builder.set_spout("spout", counting_spout(spout, kN, true));
  builder.set_bolt("a", forwarding_bolt(a, threads), 2).global_grouping("spout");
  builder.set_bolt("b", forwarding_bolt(b, threads), 2).local_or_shuffle_grouping("a");
  builder.set_bolt("c", recording_bolt(c), 2).local_or_shuffle_grouping("b");
  auto t = builder.build();
  ASSERT_TRUE(t.ok());
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", fused(), *t).is_ok());
  ASSERT_TRUE(eventually([&] { return spout->acked_total() == static_cast<std::size_t>(kN); }))
      << spout->acked_total();
  auto stats = cluster.stats("t");
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(component(*stats, "b").fused_into, "");
  EXPECT_EQ(component(*stats, "c").fused_into, "b");
  {
    std::lock_guard lock(a->mutex);
    EXPECT_EQ(a->received.size(), 1u);  // global: one task has it all
  }
  std::lock_guard lock(b->mutex);
  ASSERT_EQ(b->received.size(), 2u);  // local-or-shuffle spread it over both
  for (const auto& [task, tuples] : b->received) EXPECT_GT(tuples.size(), 0u) << task;
  EXPECT_EQ(c->received_total(), static_cast<std::size_t>(kN));
  ASSERT_TRUE(cluster.kill("t").is_ok());
}

// A fused chain feeding a slow bolt through a small queue waits (backpressure)
// instead of dropping: every tuple arrives, every tree is acked.
TEST(Fusion, ChainIntoASlowBoltWaitsAndLosesNothing) {
  constexpr std::int64_t kN = 3000;
  auto spout = std::make_shared<Ledger>(), a = std::make_shared<Ledger>(),
       slow = std::make_shared<Ledger>();
  auto threads = std::make_shared<Threads>();
  TopologyBuilder builder;
  builder.set_spout("spout", counting_spout(spout, kN, true));
  builder.set_bolt("a", forwarding_bolt(a, threads)).local_or_shuffle_grouping("spout");
  builder
      .set_bolt("slow", recording_bolt(slow,
                                       [](const Tuple& t, OutputCollector& out) {
                                         std::this_thread::sleep_for(std::chrono::microseconds(50));
                                         out.ack(t);
                                       }))
      .shuffle_grouping("a");
  auto t = builder.build();
  ASSERT_TRUE(t.ok());
  Config conf = fused();
  conf.set("topology.executor.receive.buffer.size", 64);
  conf.set("topology.transfer.batch.size", 8);
  conf.set("topology.max.spout.pending", 100000);
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", conf, *t).is_ok());
  ASSERT_TRUE(eventually([&] { return spout->acked_total() == kN; }));
  EXPECT_EQ(spout->failed_total(), 0u);
  EXPECT_EQ(slow->received_total(), static_cast<std::size_t>(kN));
  auto stats = cluster.stats("t");
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(component(*stats, "a").fused_into, "spout");
  EXPECT_GT(component(*stats, "a").backpressure_waits, 0u);
}

// The values of tuple `seq` of MixedSpout: every kind a value can be, so
// that a fused hop copies scalars in place and hands the rest (strings on
// the heap or not, bytes) to the routed path, alternating.
Value mixed_payload(std::int64_t seq) {
  switch (seq % 7) {
    case 0:
      return Value(seq * 3);
    case 1:
      return Value(0.5 * static_cast<double>(seq));
    case 2:
      return Value(seq % 2 == 0);
    case 3:
      return Value();
    case 4:
      return Value("w" + std::to_string(seq));  // stored inline
    case 5:
      return Value("a string too long to be stored inline " + std::to_string(seq));
    default:
      return Value(Bytes{1, 2, static_cast<std::uint8_t>(seq & 0xff)});
  }
}

// Emits {seq, mixed_payload(seq)} unreliably for seq < limit; after every
// 500th, an emit of one value too few (refused: next_tuple throws).
class MixedSpout : public Spout {
 public:
  explicit MixedSpout(std::int64_t limit) : limit_(limit) {}
  void open(const Config&, const TopologyContext&, SpoutOutputCollector& c) override { out_ = &c; }
  void next_tuple() override {
    if (next_ >= limit_) return;
    const std::int64_t seq = next_++;
    out_->emit({seq, mixed_payload(seq)});
    if (seq % 500 == 0) out_->emit({seq});
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override {
    d.declare(Fields{"seq", "payload"});
  }

 private:
  std::int64_t limit_;
  SpoutOutputCollector* out_ = nullptr;
  std::int64_t next_ = 0;
};

// Forwards its input's values; with `braced`, as a braced list of the two.
// After every 700th, an emit of one value too many (refused: execute throws).
class ForwardBolt : public BasicBolt {
 public:
  explicit ForwardBolt(bool braced) : braced_(braced) {}
  void execute(const Tuple& t, BasicOutputCollector& out) override {
    if (braced_) {
      out.emit({t.get_int(0), t.values()[1]});
    } else {
      out.emit(t.values());
    }
    if (t.get_int(0) % 700 == 0) out.emit({t.get_int(0), t.values()[1], Value(1)});
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override {
    d.declare(Fields{"seq", "payload"});
  }

 private:
  bool braced_;
};

// source (MixedSpout of `n` tuples a task) -> stage1 -> stage2 -> sink, two
// executors each: the stages by local-or-shuffle (a fused chain), the sink
// (recording into `sink`) by shuffle.
api::Result<Topology> mixed_chain(std::int64_t n, BasicBoltFactory stage1, BasicBoltFactory stage2,
                                  std::shared_ptr<Ledger> sink) {
  TopologyBuilder builder;
  builder.set_spout(
      "source", [n] { return std::make_unique<MixedSpout>(n); }, 2);
  builder.set_bolt("stage1", std::move(stage1), 2).local_or_shuffle_grouping("source");
  builder.set_bolt("stage2", std::move(stage2), 2).local_or_shuffle_grouping("stage1");
  builder.set_bolt("sink", recording_bolt(std::move(sink))).shuffle_grouping("stage2");
  return builder.build();
}

// Acking off, the chain's emits pass by the fused hop: the values of every
// kind reach the sink exactly, once each, the per-component counts are
// exact, and an emit of the wrong arity is still refused and counted as
// its component's error, losing nothing else. The head's name sorts before
// its members' (executors are made in name order), so its thread would run
// before their start() if they were started in that order.
TEST(Fusion, UnackedChainDeliversEveryKindOfValueExactlyAndStillRefusesWrongEmits) {
  static constexpr std::int64_t kN = 14000;
  auto sink = std::make_shared<Ledger>();
  auto t = mixed_chain(
      kN, [] { return std::make_unique<ForwardBolt>(false); },
      [] { return std::make_unique<ForwardBolt>(true); }, sink);
  ASSERT_TRUE(t.ok());
  Config conf = fused();
  conf.set("topology.acker.executors", 0);
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", conf, *t).is_ok());
  ASSERT_TRUE(eventually([&] { return sink->received_total() == 2 * kN; }))
      << sink->received_total();
  auto stats = cluster.stats("t");
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(component(*stats, "stage1").fused_into, "source");
  EXPECT_EQ(component(*stats, "stage2").fused_into, "stage1");
  // Two spout tasks, each seq once per task; refused emits counted apart.
  constexpr std::uint64_t kRefusedBySpout = 2 * ((kN - 1) / 500 + 1);
  constexpr std::uint64_t kRefusedByEach = 2 * ((kN - 1) / 700 + 1);
  EXPECT_EQ(component(*stats, "source").emitted, 2u * kN);
  EXPECT_EQ(component(*stats, "source").errors, kRefusedBySpout);
  EXPECT_EQ(component(*stats, "stage1").executed, 2u * kN);
  EXPECT_EQ(component(*stats, "stage1").emitted, 2u * kN);
  EXPECT_EQ(component(*stats, "stage1").transferred, 2u * kN);
  EXPECT_EQ(component(*stats, "stage1").errors, kRefusedByEach);
  EXPECT_EQ(component(*stats, "stage2").executed, 2u * kN);
  EXPECT_EQ(component(*stats, "stage2").errors, kRefusedByEach);
  EXPECT_EQ(component(*stats, "sink").executed, 2u * kN);
  std::map<std::int64_t, int> seen;
  {
    std::lock_guard lock(sink->mutex);
    for (const auto& [task, tuples] : sink->received) {
      for (const Tuple& tuple : tuples) {
        ASSERT_EQ(tuple.size(), 2u) << tuple.to_string();
        const std::int64_t seq = tuple.get_int(0);
        ASSERT_EQ(tuple.values()[1], mixed_payload(seq)) << tuple.to_string();
        ++seen[seq];
      }
    }
  }
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(kN));
  for (const auto& [seq, count] : seen) ASSERT_EQ(count, 2) << seq;
  ASSERT_TRUE(cluster.kill("t").is_ok());
}

// Fails its input the first time it sees a value `n` with n % `every` == 0;
// otherwise forwards it anchored and acks it.
BoltFactory failing_once_bolt(std::shared_ptr<Ledger> ledger, std::int64_t every) {
  auto seen = std::make_shared<std::set<std::int64_t>>();
  return recording_bolt(ledger, [seen, every](const Tuple& t, OutputCollector& out) {
    const std::int64_t n = t.get_int(0);
    if (n % every == 0 && seen->insert(n).second) {
      out.fail(t);
      return;
    }
    out.emit(t, {n});
    out.ack(t);
  });
}

// A fused member's anchored emits carry its input's tree: a fail further
// down, in a member fused after it or in a bolt on its own thread, fails
// the spout's tuple, which is replayed until it passes, exactly as often as
// it failed.
TEST(Fusion, AFusedMembersEmitsCarryTheTreeSoAFailDownstreamReplaysIt) {
  constexpr std::int64_t kN = 2000;
  auto spout = std::make_shared<Ledger>(), a = std::make_shared<Ledger>(),
       b = std::make_shared<Ledger>(), c = std::make_shared<Ledger>();
  auto threads = std::make_shared<Threads>();
  TopologyBuilder builder;
  builder.set_spout("spout", counting_spout(spout, kN, true, /*replay=*/true));
  builder.set_bolt("a", forwarding_bolt(a, threads)).local_or_shuffle_grouping("spout");
  builder.set_bolt("b", failing_once_bolt(b, 10)).local_or_shuffle_grouping("a");
  builder.set_bolt("c", failing_once_bolt(c, 7)).shuffle_grouping("b");
  auto t = builder.build();
  ASSERT_TRUE(t.ok());
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", fused(), *t).is_ok());
  ASSERT_TRUE(eventually([&] { return spout->acked_total() == kN; })) << spout->acked_total();
  auto stats = cluster.stats("t");
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(component(*stats, "a").fused_into, "spout");
  EXPECT_EQ(component(*stats, "b").fused_into, "a");
  EXPECT_EQ(component(*stats, "c").fused_into, "");
  // n % 10 == 0 fails at b; on its replay, n % 7 == 0 too fails at c.
  std::map<std::int64_t, int> want;
  for (std::int64_t n = 0; n < kN; ++n) {
    const int fails = (n % 10 == 0 ? 1 : 0) + (n % 7 == 0 ? 1 : 0);
    if (fails > 0) want[n] = fails;
  }
  std::lock_guard lock(spout->mutex);
  EXPECT_EQ(spout->fails, want);
  for (const auto& [id, times] : spout->acks) ASSERT_EQ(times, 1) << id;
}

// Forwards its input's values, in order: throws (failing the input) on a
// seq that is a multiple of `throw_every`, and on an input out of order.
class OrderedForwardBolt : public BasicBolt {
 public:
  explicit OrderedForwardBolt(std::int64_t throw_every) : throw_every_(throw_every) {}
  void execute(const Tuple& t, BasicOutputCollector& out) override {
    const std::int64_t seq = t.get_int(0);
    if (seq <= last_) throw std::runtime_error("out of order: " + std::to_string(seq));
    last_ = seq;
    if (seq % throw_every_ == 0) throw std::runtime_error("refusing " + std::to_string(seq));
    out.emit(t.values());
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override {
    d.declare(Fields{"seq", "payload"});
  }

 private:
  std::int64_t throw_every_;
  std::int64_t last_ = -1;
};

// A fused hop runs its member's inputs a batch at a time: every input still
// arrives in the order it was emitted (values of every kind), each is
// executed once, and a BasicBolt's inputs are counted acked, or failed when
// execute threw, exactly, with acking off and with acking on (the spout's
// emits unreliable).
TEST(Fusion, BatchedHopKeepsOrderAndCountsAThrowingBasicBoltExactly) {
  static constexpr std::int64_t kN = 30000;
  for (const bool acking : {false, true}) {
    SCOPED_TRACE(acking ? "acking on" : "acking off");
    auto sink = std::make_shared<Ledger>();
    auto t = mixed_chain(
        kN, [] { return std::make_unique<OrderedForwardBolt>(1000); },
        [] { return std::make_unique<OrderedForwardBolt>(999); }, sink);
    ASSERT_TRUE(t.ok());
    Config conf = fused();
    if (!acking) conf.set("topology.acker.executors", 0);
    // Thrown by `stage1` (seq % 1000 == 0), then by `stage2` of what passed.
    constexpr std::uint64_t kFirstThrew = 2 * ((kN - 1) / 1000 + 1);
    std::uint64_t second_threw = 0;
    for (std::int64_t seq = 0; seq < kN; ++seq) {
      if (seq % 1000 != 0 && seq % 999 == 0) second_threw += 2;
    }
    const std::uint64_t passed = 2 * kN - kFirstThrew - second_threw;
    LocalCluster cluster;
    ASSERT_TRUE(cluster.submit("t", conf, *t).is_ok());
    ASSERT_TRUE(eventually([&] { return sink->received_total() == passed; }))
        << sink->received_total() << " of " << passed;
    auto stats = cluster.stats("t");
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(component(*stats, "stage1").fused_into, "source");
    EXPECT_EQ(component(*stats, "stage2").fused_into, "stage1");
    EXPECT_EQ(component(*stats, "source").emitted, 2u * kN);
    EXPECT_EQ(component(*stats, "source").transferred, 2u * kN);
    EXPECT_EQ(component(*stats, "stage1").executed, 2u * kN);
    EXPECT_EQ(component(*stats, "stage1").acked, 2u * kN - kFirstThrew);
    EXPECT_EQ(component(*stats, "stage1").failed, kFirstThrew);
    EXPECT_EQ(component(*stats, "stage1").errors, kFirstThrew);
    EXPECT_EQ(component(*stats, "stage1").emitted, 2u * kN - kFirstThrew);
    EXPECT_EQ(component(*stats, "stage2").executed, 2u * kN - kFirstThrew);
    EXPECT_EQ(component(*stats, "stage2").acked, passed);
    EXPECT_EQ(component(*stats, "stage2").failed, second_threw);
    EXPECT_EQ(component(*stats, "stage2").errors, second_threw);
    // What each `stage2` task sent reached the sink in order, every value
    // as emitted.
    std::set<std::int64_t> order_broken;
    std::map<std::int64_t, int> seen;
    {
      std::lock_guard lock(sink->mutex);
      for (const auto& [task, tuples] : sink->received) {
        std::map<std::int32_t, std::int64_t> last;  // sender -> last seq
        for (const Tuple& tuple : tuples) {
          const std::int64_t seq = tuple.get_int(0);
          auto [it, fresh] = last.emplace(tuple.source_task().value, seq);
          if (!fresh) {
            if (seq <= it->second) order_broken.insert(seq);
            it->second = seq;
          }
          ASSERT_EQ(tuple.values()[1], mixed_payload(seq)) << tuple.to_string();
          ++seen[seq];
        }
      }
    }
    EXPECT_TRUE(order_broken.empty()) << *order_broken.begin();
    for (const auto& [seq, count] : seen) {
      const int want = seq % 1000 == 0 ? 0 : seq % 999 == 0 ? 0 : 2;
      ASSERT_EQ(count, want) << seq;
    }
    ASSERT_TRUE(cluster.kill("t").is_ok());
  }
}

}  // namespace
}  // namespace rstorm
