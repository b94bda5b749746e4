// Backpressure: a slow bolt makes its producers wait; queues stay bounded and
// nothing is lost.
#include <gtest/gtest.h>

#include <set>

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

}  // namespace
}  // namespace rstorm
