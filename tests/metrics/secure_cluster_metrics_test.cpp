// A real cluster with guarded /metrics: `DevCluster` (ZooKeeper, nimbus, a
// supervisor, its workers, rstorm-ui) given storm.metrics.tls.* and
// storm.metrics.auth.*, a word count submitted through the `rstorm` CLI, and a
// real Prometheus server that finds every endpoint through the daemons' file
// SD entries and scrapes it over HTTPS with basic authentication.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/metrics/http_get.hpp"
#include "prometheus_harness.hpp"
#include "supervisor/dev_cluster.hpp"
#include "test_certificates.hpp"
#include "tests/cluster/cli_runner.hpp"
#include "tests/common/poll.hpp"

namespace rstorm::metrics {
namespace {

using namespace std::chrono_literals;
using testing::poll_until_equals;

TEST(SecureClusterMetrics, PrometheusScrapesEveryDaemonOverHttpsWithBasicAuthentication) {
  const auto dir = testing::temp_dir("secure-cluster-metrics");
  const auto pki = testing::make_test_pki(dir);
  ASSERT_FALSE(pki.ca_cert.empty());
  const auto password = dir / "metrics.password";
  std::ofstream(password) << "cluster secret\n";

  supervisor::DevClusterOptions o;
  o.supervisors = 1;
  o.racks = 1;
  o.slots = 2;
  o.overrides = rstorm::testing::kFastConfig;
  for (const std::string& kv : {"storm.metrics.tls.cert.path=" + pki.server_cert.string(),
                                "storm.metrics.tls.key.path=" + pki.server_key.string(),
                                "storm.metrics.tls.ca.path=" + pki.ca_cert.string(),
                                std::string("storm.metrics.auth.user=prometheus"),
                                "storm.metrics.auth.password.file=" + password.string(),
                                std::string("ui.sample.interval.secs=1")}) {
    o.overrides.push_back(kv);
  }
  o.ui = true;
  auto started = supervisor::DevCluster::start(o, Logger::to_stderr("secure-metrics-test"));
  ASSERT_TRUE(started) << started.status().to_string();
  auto cluster = std::move(started).value();

  auto r = rstorm::testing::run_cli([&] {
    std::vector<std::string> a = {"submit",
                                  RSTORM_WORD_COUNT_LIB,
                                  "--name",
                                  "wc",
                                  "--wait",
                                  "-c",
                                  "wordcount.sentences.limit=1000",
                                  "-c",
                                  "wordcount.report.print=false"};
    for (const auto& c : cluster->client_overrides(0)) a.push_back(c);
    return a;
  }());
  ASSERT_EQ(r.exit_code, 0) << r.output;

  PrometheusServerOptions po;
  po.work_dir = dir / "prometheus";
  po.sd_dir = cluster->metrics_sd_dir().string();
  po.scrape_interval = 1s;
  po.tls_ca_file = pki.ca_cert.string();
  po.basic_auth_user = "prometheus";
  po.basic_auth_password_file = password.string();
  auto prom = PrometheusServer::start(po);
  ASSERT_TRUE(prom.ok()) << prom.status().message();
  const PrometheusServer& p = **prom;

  EXPECT_EQ(poll_until_equals(p, "sum(up{job=\"rstorm-nimbus\"})", 1), std::optional<double>(1));
  EXPECT_EQ(poll_until_equals(p, "sum(up{job=\"rstorm-supervisor\"})", 1),
            std::optional<double>(1));
  // Word count runs in two workers (cluster_metrics_test says why).
  EXPECT_EQ(poll_until_equals(p, "sum(up{job=\"rstorm-worker\",topology=\"wc\"})", 2),
            std::optional<double>(2));
  EXPECT_EQ(
      poll_until_equals(
          p, "sum(rstorm_tuples_emitted_total{topology=\"wc\",component=\"sentences\"})", 1000),
      std::optional<double>(1000));
  // Every target over https: the __scheme__ of the SD entries.
  auto targets = http_get(p.host(), p.port(), "/api/v1/targets?state=active");
  ASSERT_TRUE(targets.ok()) << targets.status().message();
  const auto answer = nlohmann::json::parse(targets->body);
  ASSERT_EQ(answer["data"]["activeTargets"].size(), 4u) << targets->body;
  for (const auto& t : answer["data"]["activeTargets"]) {
    EXPECT_EQ(t["scrapeUrl"].get<std::string>().rfind("https://127.0.0.1:", 0), 0u) << t.dump();
  }

  // rstorm-ui reads the workers' /metrics with the same keys: its counts appear.
  const std::string ui = cluster->ui_url();
  const int ui_port = std::stoi(ui.substr(ui.rfind(':') + 1));
  double emitted = -1;
  EXPECT_TRUE(rstorm::testing::eventually(
      [&] {
        auto page = http_get("127.0.0.1", ui_port, "/api/v1/topology/wc?window=:all-time");
        if (!page.ok() || page->status != 200) return false;
        const auto body = nlohmann::json::parse(page->body, nullptr, false);
        if (body.is_discarded() || !body.contains("spouts") || body["spouts"].empty()) return false;
        emitted = body["spouts"][0].value("emitted", -1.0);
        return emitted == 1000;
      },
      60s))
      << "rstorm-ui shows " << emitted << " sentences emitted";

  (*prom)->stop();
  cluster->stop();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rstorm::metrics
