// Acking: tuple trees complete, time out, fail explicitly, and are replayed.
#include <gtest/gtest.h>

#include <set>

#include "test_helpers.hpp"

namespace rstorm {
namespace {

using testing::counting_spout;
using testing::eventually;
using testing::Ledger;
using testing::recording_bolt;

// Emits three children anchored to each input, then acks the input.
class FanOutBolt : public Bolt {
 public:
  void prepare(const Config&, const TopologyContext&, OutputCollector& c) override { out_ = &c; }
  void execute(const Tuple& t) override {
    for (int i = 0; i < 3; ++i) out_->emit(t, {t.get_int(0) * 10 + i});
    out_->ack(t);
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields{"n"}); }

 private:
  OutputCollector* out_ = nullptr;
};

Config short_timeout(int secs) {
  Config c;
  c.set("topology.message.timeout.secs", secs);
  return c;
}

TEST(Acker, TreeCompletesOnlyWhenEveryBranchIsAcked) {
  auto ledger = std::make_shared<Ledger>();
  auto leaves = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(ledger, 2000, true));
  b.set_bolt("fan", [] { return std::make_unique<FanOutBolt>(); }, 2).shuffle_grouping("numbers");
  b.set_bolt("leaf", recording_bolt(leaves), 2).shuffle_grouping("fan");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", short_timeout(120), *t).is_ok());
  ASSERT_TRUE(eventually([&] { return ledger->acked_total() == 2000; }));
  auto stats = cluster.stats("t");
  ASSERT_TRUE(cluster.kill("t").is_ok());
  EXPECT_EQ(leaves->received_total(), 6000u);
  EXPECT_EQ(ledger->failed_total(), 0u);
  for (const auto& [id, n] : ledger->acks) ASSERT_EQ(n, 1) << id;
  EXPECT_EQ(stats->component("numbers")->acked, 2000u);
  EXPECT_EQ(stats->component("__acker")->acked, 2000u);
  EXPECT_EQ(stats->in_flight, 0u);
}

TEST(Acker, TreeWithAnUnackedLeafTimesOutAndFailsAtTheSpout) {
  auto ledger = std::make_shared<Ledger>();
  auto leaves = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(ledger, 20, true));
  b.set_bolt("fan", [] { return std::make_unique<FanOutBolt>(); }).shuffle_grouping("numbers");
  // Acks every leaf except those of n == 7 (its children are 70, 71 and 72).
  b.set_bolt("leaf", recording_bolt(leaves, [](const Tuple& t, OutputCollector& out) {
               if (t.get_int(0) / 10 != 7) out.ack(t);
             }))
      .shuffle_grouping("fan");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  LocalCluster cluster;
  // 3 s: long enough for the complete trees even on a loaded machine.
  ASSERT_TRUE(cluster.submit("t", short_timeout(3), *t).is_ok());
  ASSERT_TRUE(eventually(
      [&] { return ledger->acked_total() == 19 && ledger->failed_total() == 1; }));
  ASSERT_TRUE(cluster.kill("t").is_ok());
  std::lock_guard lock(ledger->mutex);
  EXPECT_EQ(ledger->fails.begin()->first, 7);
  EXPECT_EQ(ledger->acks.count(7), 0u);
}

TEST(Acker, ExplicitFailCallsSpoutFailForThatTupleOnly) {
  auto ledger = std::make_shared<Ledger>();
  auto sink = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(ledger, 1000, true));
  b.set_bolt("judge", recording_bolt(sink, [](const Tuple& t, OutputCollector& out) {
               if (t.get_int(0) % 4 == 0) {
                 out.fail(t);
               } else {
                 out.ack(t);
               }
             }), 2)
      .shuffle_grouping("numbers");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", short_timeout(120), *t).is_ok());
  ASSERT_TRUE(eventually(
      [&] { return ledger->acked_total() == 750 && ledger->failed_total() == 250; }));
  auto stats = cluster.stats("t");
  ASSERT_TRUE(cluster.kill("t").is_ok());
  std::lock_guard lock(ledger->mutex);
  for (const auto& [id, n] : ledger->fails) {
    ASSERT_EQ(id % 4, 0);
    ASSERT_EQ(n, 1);
  }
  EXPECT_EQ(stats->component("numbers")->failed, 250u);
  EXPECT_EQ(stats->component("judge")->failed, 250u);
  EXPECT_EQ(stats->component("judge")->acked, 750u);
}

TEST(Acker, FailedTupleIsReplayedUntilAckedExactlyOnce) {
  auto ledger = std::make_shared<Ledger>();
  auto sink = std::make_shared<Ledger>();
  auto seen = std::make_shared<std::set<std::int64_t>>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(ledger, 500, true, /*replay=*/true));
  // Fails the first delivery of every tuple, acks the replay.
  b.set_bolt("flaky", recording_bolt(sink, [seen](const Tuple& t, OutputCollector& out) {
               if (seen->insert(t.get_int(0)).second) {
                 out.fail(t);
               } else {
                 out.ack(t);
               }
             }))
      .shuffle_grouping("numbers");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", short_timeout(120), *t).is_ok());
  ASSERT_TRUE(eventually([&] { return ledger->acked_total() == 500; }));
  ASSERT_TRUE(cluster.kill("t").is_ok());
  std::lock_guard lock(ledger->mutex);
  EXPECT_EQ(ledger->fails.size(), 500u);
  for (const auto& [id, n] : ledger->fails) ASSERT_EQ(n, 1) << id;
  for (const auto& [id, n] : ledger->acks) ASSERT_EQ(n, 1) << id;
}

// A slow bolt's acks go out every flush interval while it works through a
// long queue, not once the queue is empty: the spout hands it 500 tuples at
// once; the bolt takes up to 5 ms over each until the spout has its first
// ack. Held back to the end of the burst, that ack would come only once a
// whole transfer batch (256) was executed, and with a message timeout
// shorter than the queue, every tree would have timed out.
struct SlowQueue {
  std::atomic<int> executed{0};
  std::atomic<int> acked{0};
  std::atomic<int> executed_at_first_ack{-1};
};

class BurstSpout : public Spout {
 public:
  explicit BurstSpout(std::shared_ptr<SlowQueue> q) : q_(std::move(q)) {}
  void open(const Config&, const TopologyContext&, SpoutOutputCollector& c) override { out_ = &c; }
  void next_tuple() override {
    if (emitted_) return;
    emitted_ = true;
    for (int i = 0; i < 500; ++i) out_->emit({i}, Value(i));
  }
  void ack(const Value&) override {
    if (q_->acked.fetch_add(1) == 0) q_->executed_at_first_ack = q_->executed.load();
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields{"n"}); }

 private:
  std::shared_ptr<SlowQueue> q_;
  SpoutOutputCollector* out_ = nullptr;
  bool emitted_ = false;
};

class SlowUntilAckedBolt : public Bolt {
 public:
  explicit SlowUntilAckedBolt(std::shared_ptr<SlowQueue> q) : q_(std::move(q)) {}
  void prepare(const Config&, const TopologyContext&, OutputCollector& c) override { out_ = &c; }
  void execute(const Tuple& t) override {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(5);
    while (q_->acked.load() == 0 && std::chrono::steady_clock::now() < until) {
      std::this_thread::yield();
    }
    out_->ack(t);
    q_->executed.fetch_add(1);
  }
  void declare_output_fields(OutputFieldsDeclarer&) override {}

 private:
  std::shared_ptr<SlowQueue> q_;
  OutputCollector* out_ = nullptr;
};

TEST(Acker, SlowBoltsAcksLeaveWhileItsQueueIsStillLong) {
  auto q = std::make_shared<SlowQueue>();
  TopologyBuilder b;
  b.set_spout("burst", [q] { return std::make_unique<BurstSpout>(q); });
  b.set_bolt("slow", [q] { return std::make_unique<SlowUntilAckedBolt>(q); })
      .shuffle_grouping("burst");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", short_timeout(120), *t).is_ok());
  ASSERT_TRUE(eventually([&] { return q->acked.load() == 500; }));
  ASSERT_TRUE(cluster.kill("t").is_ok());
  EXPECT_GE(q->executed_at_first_ack.load(), 1);
  EXPECT_LT(q->executed_at_first_ack.load(), 256) << "acks held until a whole batch was executed";
}

TEST(Acker, MaxSpoutPendingBoundsTuplesInFlight) {
  auto ledger = std::make_shared<Ledger>();
  auto sink = std::make_shared<Ledger>();
  auto held = std::make_shared<std::vector<Tuple>>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(ledger, 1000, true));
  // Holds inputs and acks them ten at a time: the spout must wait for them.
  b.set_bolt("batcher", recording_bolt(sink, [held](const Tuple& t, OutputCollector& out) {
               held->push_back(t);
               if (held->size() == 10) {
                 for (const auto& h : *held) out.ack(h);
                 held->clear();
               }
             }))
      .shuffle_grouping("numbers");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  Config conf = short_timeout(120);
  conf.set("topology.max.spout.pending", 10);
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", conf, *t).is_ok());
  ASSERT_TRUE(eventually([&] { return ledger->acked_total() == 1000; }));
  ASSERT_TRUE(cluster.kill("t").is_ok());
  EXPECT_EQ(ledger->max_in_flight.load(), 10);
  EXPECT_EQ(ledger->failed_total(), 0u);
}

// A spout's own topology.max.spout.pending (set_max_spout_pending, as
// Storm's setMaxSpoutPending) bounds it over the topology's (none here).
TEST(Acker, MaxSpoutPendingOfOneSpoutBoundsItsTuplesInFlight) {
  auto ledger = std::make_shared<Ledger>();
  auto sink = std::make_shared<Ledger>();
  auto held = std::make_shared<std::vector<Tuple>>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(ledger, 1000, true)).set_max_spout_pending(7);
  b.set_bolt("batcher", recording_bolt(sink, [held](const Tuple& t, OutputCollector& out) {
               held->push_back(t);
               if (held->size() == 7) {
                 for (const auto& h : *held) out.ack(h);
                 held->clear();
               }
             }))
      .shuffle_grouping("numbers");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", short_timeout(120), *t).is_ok());
  ASSERT_TRUE(eventually([&] { return ledger->acked_total() == 994; }));  // 142 batches of 7
  ASSERT_TRUE(cluster.kill("t").is_ok());
  EXPECT_EQ(ledger->max_in_flight.load(), 7);
  EXPECT_EQ(ledger->failed_total(), 0u);
}

TEST(Acker, WithoutAckersReliableEmitsAreAckedAtOnce) {
  auto ledger = std::make_shared<Ledger>();
  auto sink = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(ledger, 300, true));
  b.set_bolt("sink", recording_bolt(sink, [](const Tuple&, OutputCollector&) {}))
      .shuffle_grouping("numbers");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  Config conf;
  conf.set("topology.acker.executors", 0);
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", conf, *t).is_ok());
  ASSERT_TRUE(eventually([&] { return ledger->acked_total() == 300; }));
  auto stats = cluster.stats("t");
  ASSERT_TRUE(cluster.kill("t").is_ok());
  EXPECT_EQ(stats->component("__acker"), nullptr);
}

}  // namespace
}  // namespace rstorm
