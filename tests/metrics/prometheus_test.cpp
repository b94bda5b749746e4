// End to end with a real Prometheus server: `rstorm local`'s runtime serves
// /metrics, Prometheus scrapes it, and the values it stores are what the
// topology did.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <sstream>

#include "common/metrics/prometheus_server.hpp"
#include "prometheus_harness.hpp"
#include "rstorm/worker/local_runner.hpp"

namespace rstorm::metrics {
namespace {

using testing::poll_until_equals;
using testing::scalar_value;

TEST(PrometheusLocal, ScrapedValuesOfLocalModeMatchTheFiniteInput) {
  const auto dir = testing::temp_dir("prom-local");
  std::atomic<bool> stop{false};
  std::promise<std::string> target;
  worker::LocalRunOptions o;
  o.library_path = RSTORM_WORD_COUNT_LIB;
  o.name = "wc";
  o.config.set("wordcount.sentences.limit", 1000);
  o.config.set("wordcount.report.print", false);
  o.report_interval = std::chrono::hours(1);
  o.interrupted = &stop;
  o.end_when_spouts_finish = false;  // /metrics stays up for the scrapes
  o.metrics_port = 0;
  o.on_metrics_ready = [&](const std::string& t) { target.set_value(t); };
  std::ostringstream out;
  auto run = std::async(std::launch::async, [&] { return worker::run_local(o, out); });
  auto ready = target.get_future();
  ASSERT_EQ(ready.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  const std::string endpoint = ready.get();

  PrometheusServerOptions po;
  po.work_dir = dir;
  po.static_targets = {endpoint};
  po.static_topology = "wc";
  po.scrape_interval = std::chrono::seconds(1);
  auto prom = PrometheusServer::start(po);
  ASSERT_TRUE(prom.ok()) << prom.status().message();
  const PrometheusServer& p = **prom;

  // 1000 sentences of 6, 8, 6, 6, 6 words in turn.
  auto emitted = poll_until_equals(
      p, "sum(rstorm_tuples_emitted_total{topology=\"wc\",component=\"sentences\"})", 1000);
  EXPECT_EQ(emitted, std::optional<double>(1000));
  EXPECT_EQ(poll_until_equals(
                p, "sum(rstorm_tuples_acked_total{topology=\"wc\",component=\"sentences\"})", 1000),
            std::optional<double>(1000));
  EXPECT_EQ(poll_until_equals(p, "sum(rstorm_tuples_emitted_total{component=\"split\"})", 6400),
            std::optional<double>(6400));
  EXPECT_EQ(poll_until_equals(p, "sum(rstorm_tuples_executed_total{component=\"report\"})", 6400),
            std::optional<double>(6400));
  EXPECT_EQ(scalar_value(p, "sum(rstorm_tuples_failed_total{component=\"sentences\"})"),
            std::optional<double>(0));
  EXPECT_EQ(poll_until_equals(
                p, "sum(rstorm_complete_latency_seconds_count{component=\"sentences\"})", 1000),
            std::optional<double>(1000));
  // The executors: 1 spout, 2 split, 2 count, 1 report, 1 acker.
  EXPECT_EQ(scalar_value(p, "count(rstorm_receive_queue_capacity_batches{topology=\"wc\"})"),
            std::optional<double>(7));
  auto rss = scalar_value(p, "rstorm_process_resident_memory_bytes{job=\"rstorm-local\"}");
  ASSERT_TRUE(rss.has_value());
  EXPECT_GT(*rss, 1 << 20);

  stop = true;
  EXPECT_TRUE(run.get().is_ok());
  (*prom)->stop();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rstorm::metrics
