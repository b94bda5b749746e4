// Top words per sliding event-time window, in local mode over a finite stream
// of out-of-order clicks: every window's ranking is the one computed here from
// the clicks themselves (less those that came late, which must have gone to
// the late stream), and every click is acked exactly once.
#include "top_words.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <rstorm/local_cluster.hpp>

#include "tests/common/poll.hpp"
#include "tests/common/temp_dir.hpp"

namespace rstorm::examples {
namespace {

constexpr std::int64_t kClicks = 20000, kWindow = 4000, kSlide = 1000, kDisorder = 400, kTop = 3;

// Runs the topology over kClicks clicks with `extra` config and checks every
// window and every ack.
void check_top_words(const Config& extra) {
  Config conf;
  conf.set("topwords.events.limit", kClicks);
  conf.set("topwords.window.ms", kWindow);
  conf.set("topwords.slide.ms", kSlide);
  conf.set("topwords.disorder.ms", kDisorder);
  conf.set("topwords.top", kTop);
  conf.set("topwords.print", false);
  conf.set("topology.message.timeout.secs", 120);
  // The stream's end: the counters flush their last windows 1 s after it.
  conf.set(std::string(keys::kWatermarkIdleTimeoutMs), 1000);
  conf.merge(extra);
  auto ledger = std::make_shared<TopWordsLedger>();
  auto topology = build_top_words(conf, ledger);
  ASSERT_TRUE(topology.ok()) << topology.status().message();
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("top", conf, *topology).is_ok());
  ASSERT_TRUE(testing::eventually(
      [&] {
        std::lock_guard lock(ledger->mutex);
        return static_cast<std::int64_t>(ledger->acks.size()) == kClicks;
      },
      std::chrono::seconds(120)));
  auto stats = cluster.stats("top");
  ASSERT_TRUE(stats.ok());
  ASSERT_TRUE(cluster.kill("top").is_ok());

  std::lock_guard lock(ledger->mutex);
  EXPECT_TRUE(ledger->fails.empty());
  for (const auto& [id, times] : ledger->acks) ASSERT_EQ(times, 1) << "click " << id;
  // The expected windows: every multiple of the slide whose window
  // [end - length, end) holds an on-time click.
  std::map<std::int64_t, std::map<std::string, std::int64_t>> windows;
  for (std::int64_t id = 0; id < kClicks; ++id) {
    if (ledger->late.count(id)) continue;
    const Click c = click(id, kDisorder);
    for (std::int64_t end = (c.ts / kSlide + 1) * kSlide; end <= c.ts + kWindow; end += kSlide) {
      ++windows[end][c.word];
    }
  }
  std::map<std::int64_t, Ranking> expected;
  for (const auto& [end, counts] : windows) expected[end] = top_of(counts, kTop);
  ASSERT_EQ(ledger->rankings.size(), expected.size());
  EXPECT_EQ(ledger->rankings, expected);
  // Late clicks are few (the lag covers the disorder) and were acked too.
  EXPECT_LT(ledger->late.size(), static_cast<std::size_t>(kClicks / 10));
  const ComponentStats* count = stats->component("count");
  ASSERT_NE(count, nullptr);
  EXPECT_EQ(count->executed, static_cast<std::uint64_t>(kClicks));
  EXPECT_EQ(count->failed, 0u);
}

TEST(TopWords, EveryWindowsRankingMatchesTheClicksAndEveryClickIsAckedOnce) {
  check_top_words(Config());
}

// The same with the counters keeping 100 clicks in memory and spilling the
// rest of their windows (about 4,000 clicks each) to RocksDB.
TEST(TopWords, TheSameWithTheWindowsSpilledToRocksDb) {
  rstorm::testing::TempDir dir;
  Config spill;
  spill.set(std::string(keys::kWindowMaxTuplesInMemory), 100);
  spill.set("topology.state.provider", "rocksdb");
  spill.set("topology.state.rocksdb.dir", dir.path().string());
  check_top_words(spill);
  // The counters' tasks opened their stores: they spilled.
  int stores = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path())) {
    if (entry.is_directory() && entry.path().filename().string().rfind("task-", 0) == 0) ++stores;
  }
  EXPECT_GT(stores, 0) << "no task spilled under " << dir.path();
}

}  // namespace
}  // namespace rstorm::examples
