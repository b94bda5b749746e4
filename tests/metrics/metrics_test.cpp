// rstorm::metrics: registry, scrape-time collectors, the /metrics server, file SD.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/metrics/exposer.hpp"
#include "common/metrics/file_sd.hpp"
#include "common/metrics/http_get.hpp"
#include "common/metrics/metrics.hpp"
#include "common/metrics/process_metrics.hpp"
#include "common/metrics/prometheus_server.hpp"
#include "exposition.hpp"

namespace rstorm::metrics {
namespace {

using testing::count_series;
using testing::sum_series;

TEST(MetricsRegistry, CountersGaugesAndHistogramsAreRenderedWithLabels) {
  Registry r;
  r.counter("rstorm_test_events_total", "events", {{"kind", "a"}}).increment(3);
  r.counter("rstorm_test_events_total", "events", {{"kind", "a"}}).increment(2);
  r.counter("rstorm_test_events_total", "events", {{"kind", "b"}}).increment();
  r.gauge("rstorm_test_level", "level").set(7.5);
  auto& h = r.histogram("rstorm_test_seconds", "latency", {0.1, 1.0});
  h.observe(0.05);
  h.observe(0.5);
  h.observe(5);
  const std::string text = r.render();
  EXPECT_EQ(sum_series(text, "rstorm_test_events_total", {{"kind", "a"}}), 5);
  EXPECT_EQ(sum_series(text, "rstorm_test_events_total", {{"kind", "b"}}), 1);
  EXPECT_EQ(sum_series(text, "rstorm_test_level"), 7.5);
  EXPECT_EQ(sum_series(text, "rstorm_test_seconds_bucket", {{"le", "0.1"}}), 1);
  EXPECT_EQ(sum_series(text, "rstorm_test_seconds_bucket", {{"le", "1"}}), 2);
  EXPECT_EQ(sum_series(text, "rstorm_test_seconds_count"), 3);
  EXPECT_DOUBLE_EQ(sum_series(text, "rstorm_test_seconds_sum"), 5.55);
}

TEST(MetricsRegistry, CollectorsRunOnlyWhenScrapedAndStopWhenRemoved) {
  Registry r;
  std::atomic<int> calls{0};
  std::uint64_t counts[3] = {1, 2, 3};  // not cumulative
  {
    CollectorHandle handle(r, [&](Snapshot& s) {
      ++calls;
      s.counter("rstorm_test_read_total", "read at scrape", {{"x", "1"}}, 42);
      s.gauge("rstorm_test_depth", "depth", {}, 4);
      s.histogram("rstorm_test_latency_seconds", "h", {{"c", "a"}}, {0.1, 1.0}, counts, 2.5);
    });
    EXPECT_EQ(calls.load(), 0);
    const std::string text = r.render();
    EXPECT_EQ(calls.load(), 1);
    EXPECT_EQ(sum_series(text, "rstorm_test_read_total", {{"x", "1"}}), 42);
    EXPECT_EQ(sum_series(text, "rstorm_test_depth"), 4);
    EXPECT_EQ(sum_series(text, "rstorm_test_latency_seconds_bucket", {{"le", "1"}}), 3);
    EXPECT_EQ(sum_series(text, "rstorm_test_latency_seconds_bucket", {{"le", "+Inf"}}), 6);
    EXPECT_EQ(sum_series(text, "rstorm_test_latency_seconds_count"), 6);
  }
  const std::string after = r.render();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(count_series(after, "rstorm_test_read_total"), 0u);
}

TEST(MetricsRegistry, TwoCollectorsShareOneFamily) {
  Registry r;
  CollectorHandle a(r, [](Snapshot& s) { s.counter("rstorm_test_x_total", "x", {{"t", "a"}}, 1); });
  CollectorHandle b(r, [](Snapshot& s) { s.counter("rstorm_test_x_total", "x", {{"t", "b"}}, 2); });
  const std::string text = r.render();
  EXPECT_EQ(text.find("# TYPE rstorm_test_x_total counter"),
            text.rfind("# TYPE rstorm_test_x_total counter"));
  EXPECT_EQ(sum_series(text, "rstorm_test_x_total"), 3);
}

// One server for the whole file: prometheus-cpp's exposer takes ~2 s to stop.
Registry& shared_registry() {
  static Registry registry;
  return registry;
}

MetricsServer& shared_server() {
  static std::unique_ptr<MetricsServer> server = [] {
    auto s = MetricsServer::start("127.0.0.1", 0, shared_registry());
    EXPECT_TRUE(s.ok()) << s.status().message();
    return std::move(s).value();
  }();
  return *server;
}

TEST(MetricsServer, ServesTheRegistryOverHttp) {
  MetricsServer& server = shared_server();
  EXPECT_GT(server.port(), 0);
  EXPECT_EQ(server.url(), "http://127.0.0.1:" + std::to_string(server.port()) + "/metrics");
  shared_registry().counter("rstorm_test_served_total", "served").increment(9);
  auto r = http_get("127.0.0.1", server.port(), "/metrics");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(sum_series(r->body, "rstorm_test_served_total"), 9);
}

TEST(MetricsServer, PortAlreadyInUseIsAClearError) {
  MetricsServer& server = shared_server();
  auto second = MetricsServer::start("127.0.0.1", server.port(), shared_registry());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("cannot serve metrics on 127.0.0.1:" +
                                           std::to_string(server.port())),
            std::string::npos)
      << second.status().message();
}

TEST(ProcessMetrics, ReportsCpuTimeAndResidentMemoryOfThisProcess) {
  Registry r;
  auto handle = add_process_metrics(r, {{"role", "test"}});
  volatile double x = 0;
  for (int i = 0; i < 20'000'000; ++i) x = x + i;  // some CPU time
  const std::string text = r.render();
  EXPECT_GT(sum_series(text, "rstorm_process_cpu_seconds_total", {{"role", "test"}}), 0);
  // At least a few MB, less than 64 GB: bytes, not pages or kB.
  const double rss = sum_series(text, "rstorm_process_resident_memory_bytes");
  EXPECT_GT(rss, 1 << 20);
  EXPECT_LT(rss, 64.0 * (1ull << 30));
}

TEST(FileServiceDiscovery, WritesTargetsWithLabelsAtomically) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("rstorm-sd-" + std::to_string(::getpid()));
  const auto path = (dir / "sub" / "workers-s1.json").string();
  auto st = write_file_sd(path, {{"127.0.0.1:7700", {{"topology", "wc"}, {"node", "s1"}}},
                                 {"127.0.0.1:7701", {{"topology", "x"}, {"rack", "r2"}}}});
  ASSERT_TRUE(st.is_ok()) << st.message();
  std::ifstream in(path);
  auto json = nlohmann::json::parse(in);
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0]["targets"][0], "127.0.0.1:7700");
  EXPECT_EQ(json[0]["labels"]["topology"], "wc");
  EXPECT_EQ(json[0]["labels"]["node"], "s1");
  EXPECT_EQ(json[1]["labels"]["rack"], "r2");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  ASSERT_TRUE(write_file_sd(path, {}).is_ok());
  std::ifstream again(path);
  EXPECT_EQ(nlohmann::json::parse(again).size(), 0u);
  remove_file_sd(path);
  EXPECT_FALSE(std::filesystem::exists(path));
  std::filesystem::remove_all(dir);
}

TEST(FileServiceDiscovery, UnwritableDirectoryIsAClearError) {
  auto st = write_file_sd("/proc/rstorm-no/workers.json", {});
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("/proc/rstorm-no"), std::string::npos) << st.message();
}

TEST(PrometheusConfig, ShippedConfigIsValidForPromtool) {
  // conf/prometheus/prometheus.yml with its SD directory next to it.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("rstorm-promtool-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string cmd = "/usr/bin/promtool check config " RSTORM_SOURCE_DIR
                          "/conf/prometheus/prometheus.yml > " +
                          (dir / "out.txt").string() + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  PrometheusServerOptions o;
  o.work_dir = dir;
  o.sd_dir = dir.string();
  o.static_targets = {"127.0.0.1:1"};
  std::ofstream(dir / "generated.yml") << prometheus_config(o);
  const std::string cmd2 = "/usr/bin/promtool check config " + (dir / "generated.yml").string() +
                           " >> " + (dir / "out.txt").string() + " 2>&1";
  EXPECT_EQ(std::system(cmd2.c_str()), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rstorm::metrics
