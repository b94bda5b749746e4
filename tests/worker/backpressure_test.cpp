// Backpressure: a slow bolt makes its producers wait; queues stay bounded and
// nothing is lost.
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

// Forwards each input unanchored (a fast middle stage).
class RelayBolt : public Bolt {
 public:
  void prepare(const Config&, const TopologyContext&, OutputCollector& c) override { out_ = &c; }
  void execute(const Tuple& t) override { out_->emit({t.get_int(0)}); }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields{"n"}); }

 private:
  OutputCollector* out_ = nullptr;
};

TEST(Backpressure, SlowBoltBoundsQueuedTuplesAndLosesNothing) {
  constexpr std::int64_t kTuples = 20000;
  auto spout_ledger = std::make_shared<Ledger>();
  auto sink = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(spout_ledger, kTuples, false));
  b.set_bolt("relay", [] { return std::make_unique<RelayBolt>(); }).shuffle_grouping("numbers");
  // About 50 us per tuple: far slower than the spout and the relay.
  b.set_bolt("slow", recording_bolt(sink, [](const Tuple&, OutputCollector&) {
               const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
               while (std::chrono::steady_clock::now() < until) {
               }
             }))
      .shuffle_grouping("relay");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  Config conf;
  conf.set("topology.executor.receive.buffer.size", 1024);
  conf.set("topology.transfer.batch.size", 64);
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", conf, *t).is_ok());
  // Queued work = what was emitted upstream and not yet executed downstream.
  // Bound: two receive queues of 1024 plus a few batches held by producers.
  constexpr std::uint64_t kBound = 2 * 1024 + 8 * 64;
  std::uint64_t max_queued = 0;
  std::uint64_t waits = 0;
  ASSERT_TRUE(eventually([&] {
    auto s = cluster.stats("t");
    const std::uint64_t emitted = s->component("numbers")->emitted;
    const std::uint64_t executed = s->component("slow")->executed;
    max_queued = std::max(max_queued, emitted - std::min(emitted, executed));
    waits = s->component("relay")->backpressure_waits;
    return executed == static_cast<std::uint64_t>(kTuples);
  }, std::chrono::seconds(120)));
  ASSERT_TRUE(cluster.kill("t").is_ok());
  EXPECT_LE(max_queued, kBound);
  EXPECT_GT(waits, 0u);  // the relay did wait on the slow bolt's full queue
  std::set<std::int64_t> seen;
  for (const auto& [task, tuples] : sink->received) {
    for (const auto& tuple : tuples) seen.insert(tuple.get_int(0));
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kTuples));
  EXPECT_EQ(*seen.rbegin(), kTuples - 1);
}

TEST(Backpressure, SlowBoltDoesNotMakeEveryTreeTimeOutWithMaxSpoutPendingUnset) {
  // 2 ms per tuple and a queue that holds 8192 tuples (16 s of work) against
  // a 2 s message timeout: with nothing bounding the trees in flight, every
  // tree would wait past its timeout, fail and be replayed, for ever. The
  // spout's adaptive bound halves what it keeps in flight until trees
  // complete within the timeout.
  auto spout_ledger = std::make_shared<Ledger>();
  auto sink = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(spout_ledger, 1'000'000'000, true));
  b.set_bolt("slow", recording_bolt(sink, [](const Tuple& t, OutputCollector& out) {
               std::this_thread::sleep_for(std::chrono::milliseconds(2));
               out.ack(t);
             }))
      .shuffle_grouping("numbers");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  Config conf;
  conf.set("topology.message.timeout.secs", 2);
  conf.set("topology.executor.receive.buffer.size", 8192);
  conf.set("topology.max.spout.pending", nullptr, "conf/defaults.yaml");
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("t", conf, *t).is_ok());
  auto counts = [&] {
    auto s = cluster.stats("t");
    return std::pair{s->component("numbers")->acked, s->component("numbers")->failed};
  };
  // Once 3000 trees have completed or failed (over three timeouts' worth of
  // this bolt's work), some window of 200 acked trees with none failing.
  std::pair<std::uint64_t, std::uint64_t> start{0, 0}, now;
  bool started = false;
  const bool settled = eventually(
      [&] {
        now = counts();
        if (!started) {
          started = now.first + now.second >= 3000;
          start = now;
          return false;
        }
        if (now.first < start.first + 200) return false;
        if (now.second == start.second) return true;
        start = now;  // trees failed in this window: look at the next one
        return false;
      },
      std::chrono::seconds(90));
  EXPECT_TRUE(cluster.kill("t").is_ok());
  EXPECT_TRUE(settled) << now.first << " acked, " << now.second << " failed";
}

}  // namespace
}  // namespace rstorm
