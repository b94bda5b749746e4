// complete_topology: a whole topology run in-process from a test, its spouts
// mocked or bounded, every component's emits and counters returned.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "rstorm/testing.hpp"
#include "word_count.hpp"

namespace rstorm::testing {
namespace {

using namespace std::chrono_literals;

Topology word_count() {
  auto t = examples::build_word_count();
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(t).value();
}

TEST(CompleteTopology, MockedSentencesGiveEveryWordAndCount) {
  CompleteTopologyOptions options;
  options.mocked_sources.add("sentences", {{std::string("the cow")}, {std::string("the moon")}});
  options.config.set("wordcount.report.print", false);
  auto run = complete_topology(word_count(), options);
  ASSERT_TRUE(run.ok()) << run.status().message();

  auto words = run->emitted("split");
  std::vector<std::string> got;
  for (const auto& v : words) got.push_back(v[0].as_string());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"cow", "moon", "the", "the"}));

  // count emits (word, running count): "the" reaches 2 on its one task.
  std::map<std::string, std::int64_t> last;
  for (const auto& v : run->emitted("count")) {
    last[v[0].as_string()] = std::max(last[v[0].as_string()], v[1].as_int());
  }
  EXPECT_EQ(last, (std::map<std::string, std::int64_t>{{"cow", 1}, {"moon", 1}, {"the", 2}}));
  EXPECT_EQ(run->emitted("sentences").size(), 2u);
  EXPECT_EQ(run->acked("sentences"), 2u);
  EXPECT_EQ(run->failed("sentences"), 0u);
  EXPECT_EQ(run->executed("report"), 4u);
  EXPECT_EQ(run->acked("report"), 4u);
  EXPECT_TRUE(run->emitted("report").empty());
  EXPECT_TRUE(run->errors("split").empty());
  // The split bolt's user metrics, summed over its tasks.
  EXPECT_EQ(run->metric("split", "words_split_total"), 4);
  EXPECT_EQ(run->metric("split", "sentence_words"), 2);  // observations
  EXPECT_EQ(run->metric("split", "no_such_metric"), 0);
}

TEST(CompleteTopology, BoundedSpoutThatIsNotMockedRunsToItsEnd) {
  CompleteTopologyOptions options;
  options.config.set("wordcount.sentences.limit", std::int64_t{50});
  options.config.set("wordcount.report.print", false);
  auto run = complete_topology(word_count(), options);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->acked("sentences"), 50u);
  EXPECT_EQ(run->emitted("sentences").size(), 50u);
  // Every word of every sentence the spout emitted went through split and count.
  std::uint64_t words = 0;
  for (const auto& v : run->emitted("sentences")) {
    const std::string& s = v[0].as_string();
    words += static_cast<std::uint64_t>(std::count(s.begin(), s.end(), ' ')) + 1;
  }
  EXPECT_EQ(run->emitted("split").size(), words);
  EXPECT_EQ(run->executed("count"), words);
}

TEST(CompleteTopology, MockedSourceThatNamesNoSpoutOrHasTheWrongArityIsRefused) {
  CompleteTopologyOptions options;
  options.mocked_sources.add("sentence", {{std::string("x")}});
  options.mocked_sources.add("split", {{std::string("x")}});
  options.mocked_sources.add("sentences", {{std::string("x"), std::int64_t{1}}});
  auto run = complete_topology(word_count(), options);
  ASSERT_FALSE(run.ok());
  const std::string m = run.status().message();
  EXPECT_NE(m.find("mocked source 'sentence' names no spout of the topology"), std::string::npos) << m;
  EXPECT_NE(m.find("('split' is a bolt)"), std::string::npos) << m;
  EXPECT_NE(m.find("a tuple of 2 values for stream 'default', which has 1 fields"), std::string::npos) << m;
}

// A bolt that throws on one input: the error is recorded, that tree fails,
// the others complete.
class PickyBolt : public BasicBolt {
 public:
  void execute(const Tuple& input, BasicOutputCollector& out) override {
    if (input.get_string("word") == "moon") throw std::runtime_error("no moons here");
    out.emit({input.get_string("word")});
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields{"word"}); }
};

TEST(CompleteTopology, ABoltThatThrowsFailsItsTreeAndTheErrorIsReturned) {
  TopologyBuilder b;
  b.set_spout("sentences", [] { return std::make_unique<examples::SentenceSpout>(); }, 1);
  b.set_bolt("split", [] { return std::make_unique<examples::SplitSentence>(); }, 1).shuffle_grouping("sentences");
  b.set_bolt("picky", [] { return std::make_unique<PickyBolt>(); }, 1).shuffle_grouping("split");
  auto topology = b.build();
  ASSERT_TRUE(topology.ok()) << topology.status().message();
  CompleteTopologyOptions options;
  options.mocked_sources.add("sentences", {{std::string("the cow")}, {std::string("the moon")}});
  auto run = complete_topology(*topology, options);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->acked("sentences"), 1u);
  EXPECT_EQ(run->failed("sentences"), 1u);
  EXPECT_EQ(run->emitted("picky").size(), 3u);
  ASSERT_EQ(run->errors("picky").size(), 1u);
  EXPECT_NE(run->errors("picky")[0].find("no moons here"), std::string::npos);
}

// Sums the first value of each window's tuples.
class WindowSum : public WindowedBolt {
 public:
  void prepare(const Config&, const TopologyContext&, OutputCollector& out) override {
    out_ = &out;
  }
  void execute(const TupleWindow& window) override {
    std::int64_t sum = 0;
    for (const Tuple* t : window.get()) sum += t->get_int(0);
    out_->emit({sum});
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields{"sum"}); }

 private:
  OutputCollector* out_ = nullptr;
};

// A finite stream that fills its tumbling count windows exactly: every
// tuple is acked once its window was processed, the last window's too,
// with no next window to wait for (its trees used to time out and replay).
TEST(CompleteTopology, AFiniteStreamOfFullTumblingCountWindowsIsAckedWhole) {
  TopologyBuilder b;
  b.set_spout("numbers", [] { return std::make_unique<examples::SentenceSpout>(); }, 1);
  b.set_bolt("sum", [] { return std::make_unique<WindowSum>(); })
      .shuffle_grouping("numbers")
      .with_tumbling_window(Count(10));
  auto topology = b.build();
  ASSERT_TRUE(topology.ok()) << topology.status().message();
  CompleteTopologyOptions options;
  std::vector<Values> numbers;
  for (std::int64_t i = 0; i < 100; ++i) numbers.push_back(Values{i});
  options.mocked_sources.add("numbers", numbers);
  options.config.set("topology.message.timeout.secs", std::int64_t{600});
  options.timeout = 120s;  // well below the message timeout: no tree may wait for it
  auto run = complete_topology(*topology, options);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->acked("numbers"), 100u);
  EXPECT_EQ(run->failed("numbers"), 0u);
  const auto sums = run->emitted("sum");
  ASSERT_EQ(sums.size(), 10u);
  for (std::size_t w = 0; w < sums.size(); ++w) {
    const auto first = static_cast<std::int64_t>(w * 10);
    EXPECT_EQ(sums[w][0].as_int(), 10 * first + 45) << "window " << w;
  }
}

// A time window fires on its bolt's timer, which the harness runs as
// `rstorm local` does: every tuple is in a processed window and acked.
TEST(CompleteTopology, ATimeWindowFiresOnItsTimerAndItsTuplesAreAcked) {
  TopologyBuilder b;
  b.set_spout("numbers", [] { return std::make_unique<examples::SentenceSpout>(); }, 1);
  b.set_bolt("sum", [] { return std::make_unique<WindowSum>(); })
      .shuffle_grouping("numbers")
      .with_tumbling_window(Duration(100));
  auto topology = b.build();
  ASSERT_TRUE(topology.ok()) << topology.status().message();
  CompleteTopologyOptions options;
  std::vector<Values> numbers;
  for (std::int64_t i = 1; i <= 20; ++i) numbers.push_back(Values{i});
  options.mocked_sources.add("numbers", numbers);
  options.config.set("topology.message.timeout.secs", std::int64_t{600});
  options.timeout = 120s;
  auto run = complete_topology(*topology, options);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->acked("numbers"), 20u);
  EXPECT_EQ(run->failed("numbers"), 0u);
  std::int64_t total = 0;
  for (const auto& v : run->emitted("sum")) total += v[0].as_int();
  EXPECT_EQ(total, 20 * 21 / 2);  // each number in exactly one window
}

// Throws a non-standard exception on every input.
class ThrowsAnInt : public BasicBolt {
 public:
  void execute(const Tuple&, BasicOutputCollector&) override { throw 7; }
  void declare_output_fields(OutputFieldsDeclarer&) override {}
};

TEST(CompleteTopology, ANonStandardExceptionIsAnErrorToo) {
  TopologyBuilder b;
  b.set_spout("sentences", [] { return std::make_unique<examples::SentenceSpout>(); }, 1);
  b.set_bolt("thrower", [] { return std::make_unique<ThrowsAnInt>(); }, 1)
      .shuffle_grouping("sentences");
  auto topology = b.build();
  ASSERT_TRUE(topology.ok()) << topology.status().message();
  CompleteTopologyOptions options;
  options.mocked_sources.add("sentences", {{std::string("a")}, {std::string("b")}});
  auto run = complete_topology(*topology, options);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->failed("sentences"), 2u);
  ASSERT_EQ(run->errors("thrower").size(), 2u);
  EXPECT_EQ(run->errors("thrower")[0], "a non-standard exception");
}

TEST(CompleteTopology, AnUnboundedSpoutIsReportedWhenTheTimeoutPasses) {
  CompleteTopologyOptions options;
  options.config.set("wordcount.report.print", false);
  options.timeout = 300ms;
  auto run = complete_topology(word_count(), options);
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("did not complete within 300 ms: spout 'sentences' has not finished"),
            std::string::npos)
      << run.status().message();
}

}  // namespace
}  // namespace rstorm::testing
