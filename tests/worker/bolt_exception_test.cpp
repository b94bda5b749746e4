// A bolt that throws: the input fails, the error is counted and logged with
// its context, and the rest of the topology is unaffected.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "test_helpers.hpp"

namespace rstorm {
namespace {

using testing::CapturedLog;
using testing::counting_spout;
using testing::eventually;
using testing::Ledger;
using testing::recording_bolt;

// Runs `topology` as `name` until each of the spout's `trees` was acked or
// failed; returns its stats from then, the topology killed.
api::Result<TopologyStats> run_until_every_tree_ends(const Topology& topology,
                                                     const std::string& name, Ledger& ledger,
                                                     std::uint64_t trees, CapturedLog& log) {
  Config conf;
  conf.set("topology.message.timeout.secs", 120);
  LocalCluster cluster(LocalClusterOptions{log.logger, 7});
  if (auto s = cluster.submit(name, conf, topology); !s.is_ok()) return s;
  if (!eventually([&] { return ledger.acked_total() + ledger.failed_total() == trees; })) {
    return api::Status::error("the trees did not all end");
  }
  auto stats = cluster.stats(name);
  if (auto s = cluster.kill(name); !s.is_ok()) return s;
  return stats;
}

TEST(BoltException, ThrowingBoltFailsInputCountsErrorAndOthersCarryOn) {
  auto ledger = std::make_shared<Ledger>();
  auto thrower_seen = std::make_shared<Ledger>();
  auto bystander = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(ledger, 100, true));
  b.set_bolt("thrower", recording_bolt(thrower_seen, [](const Tuple& t, OutputCollector& out) {
               if (t.get_int(0) % 10 == 3) throw std::runtime_error("bad input");
               out.ack(t);
             }))
      .shuffle_grouping("numbers");
  b.set_bolt("bystander", recording_bolt(bystander)).shuffle_grouping("numbers");
  auto t = b.build();
  ASSERT_TRUE(t.ok());

  CapturedLog log;
  auto stats = run_until_every_tree_ends(*t, "errs", *ledger, 100, log);
  ASSERT_TRUE(stats.ok()) << stats.status().message();

  EXPECT_EQ(ledger->failed_total(), 10u);
  EXPECT_EQ(ledger->acked_total(), 90u);
  for (const auto& [id, n] : ledger->fails) ASSERT_EQ(id % 10, 3);
  EXPECT_EQ(stats->component("thrower")->errors, 10u);
  EXPECT_EQ(stats->component("thrower")->failed, 10u);
  EXPECT_EQ(stats->component("thrower")->executed, 100u);
  EXPECT_EQ(stats->component("bystander")->errors, 0u);
  EXPECT_EQ(stats->component("bystander")->executed, 100u);
  EXPECT_EQ(bystander->received_total(), 100u);
  EXPECT_NE(log.all().find("[topology=errs component=thrower task=3] execute threw: bad input"),
            std::string::npos)
      << log.all();
  // At most one error a second is logged; the log accounts for the others,
  // also when the burst ends with no error after it.
  const std::string text = log.all();
  std::size_t accounted = 0;
  for (std::size_t at = text.find("execute threw: bad input"); at != std::string::npos;
       at = text.find("execute threw: bad input", at + 1)) {
    ++accounted;
  }
  static const std::regex kHeldBack("(\\d+) more errors? (in the last second )?not logged");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kHeldBack);
       it != std::sregex_iterator(); ++it) {
    accounted += std::stoul((*it)[1].str());
  }
  EXPECT_EQ(accounted, 10u) << text;
}

TEST(BoltException, EmitOnUndeclaredStreamFailsInputNamingStream) {
  auto ledger = std::make_shared<Ledger>();
  auto sink = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(ledger, 5, true));
  b.set_bolt("wrong", recording_bolt(sink, [](const Tuple& t, OutputCollector& out) {
               out.emit("nowhere", t, {1});
             }))
      .shuffle_grouping("numbers");
  auto t = b.build();
  ASSERT_TRUE(t.ok());
  CapturedLog log;
  LocalCluster cluster(LocalClusterOptions{log.logger, 7});
  ASSERT_TRUE(cluster.submit("t", Config(), *t).is_ok());
  ASSERT_TRUE(eventually([&] { return ledger->failed_total() == 5; }));
  ASSERT_TRUE(cluster.kill("t").is_ok());
  EXPECT_NE(log.all().find("component 'wrong' emitted to stream 'nowhere', which it does not "
                           "declare (streams: default)"),
            std::string::npos)
      << log.all();
}

// A BasicBolt is called by the executor directly (not through its adapter):
// the same contract. An input whose execute throws, a std::exception or
// anything else, is failed and reported naming what was thrown; every other
// input is acked once execute returns, its emits anchored to it, and every
// execute is counted.
TEST(BoltException, ThrowingBasicBoltFailsThoseInputsAndAcksTheRest) {
  class Picky : public BasicBolt {
   public:
    void execute(const Tuple& t, BasicOutputCollector& out) override {
      const std::int64_t n = t.get_int(0);
      if (n % 10 == 3) throw 3;  // not a std::exception
      if (n % 10 == 7) throw std::runtime_error("bad input " + std::to_string(n));
      out.emit({n});
    }
    void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields{"n"}); }
  };
  auto ledger = std::make_shared<Ledger>();
  auto sink = std::make_shared<Ledger>();
  TopologyBuilder b;
  b.set_spout("numbers", counting_spout(ledger, 100, true));
  b.set_bolt("picky", [] { return std::make_unique<Picky>(); }).shuffle_grouping("numbers");
  b.set_bolt("sink", recording_bolt(sink)).shuffle_grouping("picky");
  auto t = b.build();
  ASSERT_TRUE(t.ok());

  CapturedLog log;
  auto stats = run_until_every_tree_ends(*t, "basic", *ledger, 100, log);
  ASSERT_TRUE(stats.ok()) << stats.status().message();

  EXPECT_EQ(ledger->failed_total(), 20u);
  EXPECT_EQ(ledger->acked_total(), 80u);
  for (const auto& [id, n] : ledger->fails) ASSERT_TRUE(id % 10 == 3 || id % 10 == 7) << id;
  EXPECT_EQ(sink->received_total(), 80u);
  EXPECT_EQ(stats->component("picky")->executed, 100u);
  EXPECT_EQ(stats->component("picky")->errors, 20u);
  EXPECT_EQ(stats->component("picky")->failed, 20u);
  EXPECT_EQ(stats->component("picky")->acked, 80u);
  // Errors are logged at most once a second: the first one (input 3).
  EXPECT_NE(log.all().find("[topology=basic component=picky task=2] execute threw a "
                           "non-standard exception; input from numbers failed"),
            std::string::npos)
      << log.all();
}

}  // namespace
}  // namespace rstorm
