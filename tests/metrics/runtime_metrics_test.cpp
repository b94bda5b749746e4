// RuntimeMetrics: a running topology's executors as Prometheus families, with
// exact values from a finite word count, and the size and time of a scrape of
// a runtime with 1,000 tasks.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "common/metrics/exposer.hpp"
#include "common/metrics/http_get.hpp"
#include "exposition.hpp"
#include "rstorm/worker/runtime_metrics.hpp"
#include "rstorm/worker/topology_runtime.hpp"
#include "word_count.hpp"

namespace rstorm::worker {
namespace {

using metrics::testing::count_series;
using metrics::testing::sum_series;

std::unique_ptr<TopologyRuntime> start_runtime(const std::string& name, const Config& config,
                                               const Topology& topology) {
  auto rt = TopologyRuntime::create(name, config, topology, nullptr, 7);
  EXPECT_TRUE(rt.ok()) << rt.status().message();
  auto runtime = std::move(rt).value();
  runtime->start();
  return runtime;
}

ExecutorSource source_of(const TopologyRuntime& rt) {
  return [&rt](const ExecutorVisitor& visit) {
    for (const auto& e : rt.executors()) visit(*e);
  };
}

// Waits (bounded) until the spout has acked `n` trees.
bool wait_acked(const TopologyRuntime& rt, std::uint64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    auto s = rt.stats();
    const auto* c = s.component("sentences");
    if (c != nullptr && c->acked >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

constexpr int kSentences = 1000;
constexpr int kWordsPerCycle = 6 + 8 + 6 + 6 + 6;  // the five sentences
constexpr int kWords = kSentences / 5 * kWordsPerCycle;

TEST(RuntimeMetrics, WordCountCountersMatchWhatTheTopologyDid) {
  auto topology = examples::build_word_count(nullptr);
  ASSERT_TRUE(topology.ok());
  Config config;
  config.set("wordcount.sentences.limit", kSentences);
  config.set("wordcount.report.print", false);
  auto rt = start_runtime("wc", config, *topology);
  metrics::Registry registry;
  RuntimeMetrics m(registry, "wc", source_of(*rt), {{"node", "n1"}});
  ASSERT_TRUE(wait_acked(*rt, kSentences));
  // Bolts finish the last tuples of a tree before the ack reaches the spout,
  // but the report bolt's executed count may trail by a moment.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::string text = registry.render();
  while (sum_series(text, "rstorm_tuples_executed_total", {{"component", "report"}}) < kWords &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    text = registry.render();
  }
  const std::map<std::string, std::string> spout = {{"topology", "wc"}, {"component", "sentences"},
                                                    {"node", "n1"}};
  EXPECT_EQ(sum_series(text, "rstorm_tuples_emitted_total", spout), kSentences);
  EXPECT_EQ(sum_series(text, "rstorm_tuples_acked_total", spout), kSentences);
  EXPECT_EQ(sum_series(text, "rstorm_tuples_failed_total", spout), 0);
  EXPECT_EQ(sum_series(text, "rstorm_tuples_emitted_total", {{"component", "split"}}), kWords);
  EXPECT_EQ(sum_series(text, "rstorm_tuples_executed_total", {{"component", "split"}}), kSentences);
  EXPECT_EQ(sum_series(text, "rstorm_tuples_executed_total", {{"component", "count"}}), kWords);
  EXPECT_EQ(sum_series(text, "rstorm_tuples_executed_total", {{"component", "report"}}), kWords);
  EXPECT_EQ(sum_series(text, "rstorm_tuples_acked_total", {{"component", "count"}}), kWords);
  // One series per executor: 1 spout + 2 split + 2 count + 1 report + 1 acker.
  EXPECT_EQ(count_series(text, "rstorm_tuples_emitted_total"), 7u);
  EXPECT_EQ(count_series(text, "rstorm_receive_queue_capacity_batches"), 7u);
  // Every acked tree is in the complete latency histogram.
  EXPECT_EQ(sum_series(text, "rstorm_complete_latency_seconds_count", {{"component", "sentences"}}),
            kSentences);
  EXPECT_EQ(sum_series(text, "rstorm_complete_latency_seconds_bucket",
                       {{"component", "sentences"}, {"le", "+Inf"}}),
            kSentences);
  EXPECT_GT(sum_series(text, "rstorm_complete_latency_seconds_sum", {{"component", "sentences"}}), 0);
  // Execute latency: exactly the sampled executes (1 in 32) of each bolt.
  std::uint64_t split_samples = 0;
  for (const auto& e : rt->executors()) {
    if (e->plan().component->id == "split") {
      split_samples += e->stats().execute_samples.load();
      EXPECT_EQ(sum_series(text, "rstorm_receive_queue_capacity_batches",
                           {{"executor", std::to_string(e->plan().tasks.front().value)}}),
                static_cast<double>(e->queue().capacity()));
    }
  }
  // Each of the two split executors samples one execute in 32 of its own.
  EXPECT_GE(split_samples, static_cast<std::uint64_t>(kSentences / 32 - 1));
  EXPECT_EQ(sum_series(text, "rstorm_execute_latency_seconds_count", {{"component", "split"}}),
            static_cast<double>(split_samples));
  EXPECT_EQ(count_series(text, "rstorm_execute_latency_seconds_count"), 3u);  // split, count, report
  EXPECT_EQ(sum_series(text, "rstorm_backpressure_active"), 0);
  // The split bolt's user metrics, one series per task with its task label.
  EXPECT_EQ(sum_series(text, "words_split_total", {{"topology", "wc"}, {"component", "split"}, {"node", "n1"}}),
            kWords);
  EXPECT_EQ(count_series(text, "words_split_total"), 2u);
  for (const auto& e : rt->executors()) {
    if (e->plan().component->id != "split") continue;
    EXPECT_GT(sum_series(text, "words_split_total", {{"task", std::to_string(e->plan().tasks.front().value)}}), 0);
  }
  EXPECT_EQ(sum_series(text, "sentence_words_count", {{"component", "split"}}), kSentences);
  EXPECT_EQ(sum_series(text, "sentence_words_sum", {{"component", "split"}}), kWords);
  // 6, 8, 6, 6, 6 words: 800 sentences in the le="6" bucket, all 1000 by le="8".
  EXPECT_EQ(sum_series(text, "sentence_words_bucket", {{"le", "6"}}), kSentences / 5 * 4);
  EXPECT_EQ(sum_series(text, "sentence_words_bucket", {{"le", "8"}}), kSentences);
  rt->stop();
}

TEST(RuntimeMetrics, RemovedWhenTheRuntimeMetricsGoAway) {
  auto topology = examples::build_word_count(nullptr);
  ASSERT_TRUE(topology.ok());
  Config config;
  config.set("wordcount.sentences.limit", 10);
  config.set("wordcount.report.print", false);
  auto rt = start_runtime("wc2", config, *topology);
  metrics::Registry registry;
  {
    RuntimeMetrics m(registry, "wc2", source_of(*rt));
    EXPECT_EQ(count_series(registry.render(), "rstorm_tuples_emitted_total"), 7u);
  }
  EXPECT_EQ(count_series(registry.render(), "rstorm_tuples_emitted_total"), 0u);
  rt->stop();
}

TEST(RuntimeMetricsScale, ScrapeOfARuntimeWith1000Tasks) {
  TopologyBuilder b;
  b.set_spout("sentences", [] { return std::make_unique<examples::SentenceSpout>(); }, 1);
  b.set_bolt("split", [] { return std::make_unique<examples::SplitSentence>(); }, 999)
      .shuffle_grouping("sentences");
  auto topology = b.build();
  ASSERT_TRUE(topology.ok());
  Config config;
  config.set("wordcount.sentences.limit", 5000);
  config.set("topology.executor.receive.buffer.size", 1024);
  // No acker: trees complete at emit, so no timeout replays on a busy machine.
  config.set("topology.acker.executors", 0);
  auto rt = start_runtime("scale", config, *topology);
  ASSERT_EQ(rt->plan().executors.size(), 1000u);  // 1 spout + 999 bolts
  metrics::Registry registry;
  RuntimeMetrics m(registry, "scale", source_of(*rt));
  auto server = metrics::MetricsServer::start("127.0.0.1", 0, registry);
  ASSERT_TRUE(server.ok()) << server.status().message();
  ASSERT_TRUE(wait_acked(*rt, 5000));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (rt->stats().component("split")->executed < 5000 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  double total_ms = 0, max_ms = 0;
  std::size_t bytes = 0;
  constexpr int kScrapes = 5;
  std::string body;
  for (int i = 0; i < kScrapes; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = metrics::http_get("127.0.0.1", (*server)->port(), "/metrics");
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->status, 200);
    total_ms += ms;
    max_ms = std::max(max_ms, ms);
    bytes = r->body.size();
    body = std::move(r->body);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::string rendered = registry.render();
  const double render_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::size_t lines = 0;
  for (char c : body) lines += c == '\n';
  std::printf(
      "[scrape of 1000 tasks] %zu bytes, %zu lines, %zu emitted series; HTTP scrape mean %.1f ms, "
      "max %.1f ms over %d; in-process render %.1f ms\n",
      bytes, lines, count_series(body, "rstorm_tuples_emitted_total"), total_ms / kScrapes, max_ms,
      kScrapes, render_ms);
  RecordProperty("scrape_bytes", static_cast<int>(bytes));
  RecordProperty("scrape_mean_ms", static_cast<int>(total_ms / kScrapes));
  EXPECT_EQ(count_series(body, "rstorm_tuples_emitted_total"), 1000u);
  EXPECT_EQ(sum_series(body, "rstorm_tuples_emitted_total", {{"component", "sentences"}}), 5000);
  EXPECT_EQ(sum_series(body, "rstorm_tuples_executed_total", {{"component", "split"}}), 5000);
  // Histograms stay per component: one for split whatever its parallelism.
  EXPECT_EQ(count_series(body, "rstorm_execute_latency_seconds_count"), 1u);
  rt->stop();
}

}  // namespace
}  // namespace rstorm::worker
