// Word count in local mode over a finite input: exact counts, acking on, every
// sentence acked exactly once.
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <thread>

#include <rstorm/local_cluster.hpp>

#include "word_count.hpp"

namespace rstorm::examples {
namespace {

constexpr auto kDeadline = std::chrono::seconds(60);

// Polls `done` every 10 ms until it holds or the deadline passes.
template <typename F>
bool eventually(F done) {
  const auto end = std::chrono::steady_clock::now() + kDeadline;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

std::map<std::string, std::int64_t> expected_counts(std::int64_t sentences) {
  std::map<std::string, std::int64_t> counts;
  const auto& all = word_count_sentences();
  for (std::int64_t i = 0; i < sentences; ++i) {
    std::istringstream in(all[static_cast<std::size_t>(i) % all.size()]);
    std::string word;
    while (in >> word) ++counts[word];
  }
  return counts;
}

std::int64_t total_words(std::int64_t sentences) {
  std::int64_t n = 0;
  for (const auto& [w, c] : expected_counts(sentences)) n += c;
  return n;
}

void expect_exact_counts(api::Result<Topology> (*build)(std::shared_ptr<WordCountLedger>)) {
  constexpr std::int64_t kSentences = 5000;
  auto ledger = std::make_shared<WordCountLedger>();
  auto topology = build(ledger);
  ASSERT_TRUE(topology.ok()) << topology.status().message();
  Config conf;
  conf.set("wordcount.sentences.limit", kSentences);
  conf.set("wordcount.report.print", false);
  conf.set("topology.message.timeout.secs", 120);  // no timeout on a slow machine
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("wc", conf, *topology).is_ok());
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(ledger->mutex);
    return static_cast<std::int64_t>(ledger->acks.size()) == kSentences;
  }));
  auto stats = cluster.stats("wc");
  ASSERT_TRUE(stats.ok());
  ASSERT_TRUE(cluster.kill("wc").is_ok());

  std::lock_guard lock(ledger->mutex);
  EXPECT_EQ(ledger->counts, expected_counts(kSentences));
  EXPECT_TRUE(ledger->fails.empty());
  for (const auto& [id, times] : ledger->acks) {
    ASSERT_EQ(times, 1) << "sentence " << id;
    ASSERT_GE(id, 0);
    ASSERT_LT(id, kSentences);
  }
  const ComponentStats* spout = stats->component("sentences");
  ASSERT_NE(spout, nullptr);
  EXPECT_EQ(spout->emitted, static_cast<std::uint64_t>(kSentences));
  EXPECT_EQ(spout->acked, static_cast<std::uint64_t>(kSentences));
  EXPECT_EQ(spout->failed, 0u);
  EXPECT_EQ(stats->component("split")->executed, static_cast<std::uint64_t>(kSentences));
  EXPECT_EQ(stats->component("count")->executed, static_cast<std::uint64_t>(total_words(kSentences)));
}

TEST(WordCount, FiniteInputGivesExactCountsWithEverySentenceAckedOnce) {
  expect_exact_counts(build_word_count);
}

// The counts kept in keyed state (in memory in local mode) are as exact.
TEST(WordCount, StatefulCountsAreExactToo) { expect_exact_counts(build_stateful_word_count); }

TEST(WordCount, LoadedFromItsLibraryRunsToCompletion) {
  constexpr std::int64_t kSentences = 1000;
  auto loaded = load_topology_library(RSTORM_WORD_COUNT_LIB);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->name(), "word_count");
  Config conf;
  conf.set("wordcount.sentences.limit", kSentences);
  conf.set("wordcount.report.print", false);
  conf.set("topology.message.timeout.secs", 120);
  auto topology = loaded->build(conf);
  ASSERT_TRUE(topology.ok()) << topology.status().message();
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("wc", conf, *topology).is_ok());
  const std::uint64_t words = static_cast<std::uint64_t>(total_words(kSentences));
  ASSERT_TRUE(eventually([&] {
    auto s = cluster.stats("wc");
    return s->component("sentences")->acked == static_cast<std::uint64_t>(kSentences) &&
           s->component("report")->executed == words;
  }));
  auto stats = cluster.stats("wc");
  EXPECT_EQ(stats->component("sentences")->failed, 0u);
  EXPECT_EQ(stats->component("count")->executed, words);
  EXPECT_EQ(stats->component("count")->acked, words);
  EXPECT_EQ(stats->in_flight, 0u);
  ASSERT_TRUE(cluster.kill("wc").is_ok());
}

}  // namespace
}  // namespace rstorm::examples
