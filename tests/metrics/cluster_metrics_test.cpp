// Metrics of a real cluster: `DevCluster` with --prometheus (ZooKeeper, nimbus,
// two supervisors on two racks, the real Prometheus it starts, file service
// discovery written by the daemons), a word count submitted through the
// `rstorm` CLI, plus a local-mode runtime announced through a file SD entry.
// Checks what Prometheus stored against what the cluster is, then runs every
// PromQL expression of the Grafana dashboard and requires data from each.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <future>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/metrics/file_sd.hpp"
#include "prometheus_harness.hpp"
#include "rstorm/worker/local_runner.hpp"
#include "supervisor/dev_cluster.hpp"
#include "supervisor/supervisor_metrics.hpp"
#include "tests/cluster/cli_runner.hpp"

namespace rstorm::metrics {
namespace {

using namespace std::chrono_literals;
using testing::poll_until_equals;
using testing::scalar_value;

// The pid of one live worker of the cluster, from its heartbeat file.
pid_t one_worker_pid(const supervisor::DevCluster& cluster) {
  for (int i = 0; i < cluster.num_supervisors(); ++i) {
    const auto workers = cluster.live_workers(i);
    if (!workers.empty()) return workers.front().pid;
  }
  return -1;
}

// Every "expr" of the dashboard, with Grafana's variables given values.
std::vector<std::string> dashboard_queries() {
  std::ifstream in(RSTORM_SOURCE_DIR "/conf/grafana/rstorm-dashboard.json");
  nlohmann::json dash = nlohmann::json::parse(in);
  std::vector<std::string> out;
  for (const auto& panel : dash["panels"]) {
    if (!panel.contains("targets")) continue;
    for (const auto& t : panel["targets"]) {
      std::string e = t["expr"];
      e = std::regex_replace(e, std::regex(R"(\$__rate_interval)"), "15s");
      e = std::regex_replace(e, std::regex(R"(\$topology)"), ".*");
      out.push_back(e);
    }
  }
  return out;
}

TEST(WorkerServiceDiscovery, TopologyLabelIsTheNameInNimbusIds) {
  EXPECT_EQ(supervisor::topology_name_of("wc-1763800000"), "wc");
  EXPECT_EQ(supervisor::topology_name_of("wc-1763800000-2"), "wc");
  EXPECT_EQ(supervisor::topology_name_of("word-count-v2-1763800000"), "word-count-v2");
  EXPECT_EQ(supervisor::topology_name_of("wc-12"), "wc-12");  // not an id nimbus made
  EXPECT_EQ(supervisor::topology_name_of("wc"), "wc");
}

TEST(GrafanaDashboard, IsValidJsonWithAPrometheusInputAndQueries) {
  std::ifstream in(RSTORM_SOURCE_DIR "/conf/grafana/rstorm-dashboard.json");
  nlohmann::json dash = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(dash.is_discarded());
  EXPECT_EQ(dash["__inputs"][0]["name"], "DS_PROMETHEUS");
  EXPECT_EQ(dash["uid"], "rstorm-overview");
  EXPECT_GE(dashboard_queries().size(), 20u);
  std::set<int> ids;
  for (const auto& p : dash["panels"]) EXPECT_TRUE(ids.insert(p["id"].get<int>()).second);
}

TEST(ClusterMetrics, PrometheusFindsEveryDaemonAndEveryDashboardQueryHasData) {
  namespace sv = supervisor;
  sv::DevClusterOptions o;
  o.supervisors = 2;
  o.racks = 2;
  o.slots = 2;
  o.overrides = rstorm::testing::kFastConfig;
  o.prometheus = true;
  o.prometheus_scrape_interval = 1s;
  const char* secure = std::getenv("RSTORM_TEST_SECURE");  // the secure.* variant
  o.secure = secure != nullptr && std::string(secure) == "1";
  auto started = sv::DevCluster::start(o, Logger::to_stderr("metrics-test"));
  ASSERT_TRUE(started) << started.status().to_string();
  auto cluster = std::move(started).value();
  ASSERT_NE(cluster->prometheus(), nullptr);
  const PrometheusServer& p = *cluster->prometheus();
  std::ostringstream described;
  cluster->describe(described);
  EXPECT_NE(described.str().find("prometheus  " + p.url()), std::string::npos) << described.str();

  // A local-mode runtime with a finite input, announced like a worker.
  std::atomic<bool> stop{false};
  std::promise<std::string> target;
  worker::LocalRunOptions lo;
  lo.library_path = RSTORM_WORD_COUNT_LIB;
  lo.name = "wc-local";
  lo.config.set("wordcount.sentences.limit", 1000);
  lo.config.set("wordcount.report.print", false);
  lo.report_interval = std::chrono::hours(1);
  lo.interrupted = &stop;
  lo.end_when_spouts_finish = false;  // /metrics stays up for the scrapes
  lo.metrics_port = 0;
  lo.on_metrics_ready = [&](const std::string& t) { target.set_value(t); };
  std::ostringstream local_out;
  auto local = std::async(std::launch::async, [&] { return worker::run_local(lo, local_out); });
  auto ready = target.get_future();
  ASSERT_EQ(ready.wait_for(60s), std::future_status::ready);
  const std::string sd_file = (cluster->metrics_sd_dir() / "workers-local.json").string();
  ASSERT_TRUE(write_file_sd(sd_file, {{ready.get(), {{"node", "local"}, {"rack", "r0"}}}}).is_ok());

  auto r = rstorm::testing::run_cli([&] {
    std::vector<std::string> a = {"submit", RSTORM_WORD_COUNT_LIB, "--name", "wc", "--wait",
                                  "-c", "wordcount.sentences.limit=1000", "-c",
                                  "wordcount.report.print=false"};
    for (const auto& c : cluster->client_overrides(0)) a.push_back(c);
    return a;
  }());
  ASSERT_EQ(r.exit_code, 0) << r.output;

  // Daemons found through their own file SD entries.
  EXPECT_EQ(poll_until_equals(p, "sum(up{job=\"rstorm-nimbus\"})", 1), std::optional<double>(1));
  EXPECT_EQ(poll_until_equals(p, "sum(up{job=\"rstorm-supervisor\"})", 2), std::optional<double>(2));
  EXPECT_EQ(poll_until_equals(p, "sum(rstorm_nimbus_leader)", 1), std::optional<double>(1));
  // Capacity as configured: 2 x 4096 MB, 2 x 4 cores, 2 x 2 slots; racks r1 and r2.
  EXPECT_EQ(poll_until_equals(p, "sum(rstorm_node_memory_capacity_bytes)", 2 * 4096.0 * 1048576),
            std::optional<double>(2 * 4096.0 * 1048576));
  EXPECT_EQ(scalar_value(p, "sum(rstorm_node_cpu_capacity_cores)"), std::optional<double>(8));
  EXPECT_EQ(scalar_value(p, "count(count by (rack) (rstorm_node_slots))"), std::optional<double>(2));
  EXPECT_EQ(scalar_value(p, "sum(rstorm_node_slots)"), std::optional<double>(4));
  // The submitted word count: 6 executors + 1 acker per worker at 128 MB each
  // exceed one worker's 768 MB heap, so two workers (two ackers): 8 x 128 MB.
  EXPECT_EQ(poll_until_equals(p, "sum(rstorm_node_slots_used)", 2), std::optional<double>(2));
  EXPECT_EQ(poll_until_equals(p, "sum(rstorm_supervisor_slots_used)", 2), std::optional<double>(2));
  EXPECT_EQ(scalar_value(p, "sum(rstorm_unschedulable_topologies)"), std::optional<double>(0));
  EXPECT_EQ(poll_until_equals(p, "sum(rstorm_node_memory_assigned_bytes)", 8 * 128.0 * 1048576),
            std::optional<double>(8 * 128.0 * 1048576));
  EXPECT_EQ(poll_until_equals(p, "count(rstorm_topology_network_cost_pairs{topology=\"wc\"})", 4),
            std::optional<double>(4));
  // Each supervisor announces its workers with topology, node, rack and port.
  EXPECT_EQ(poll_until_equals(p, "count(up{job=\"rstorm-worker\",topology=\"wc\"})", 2),
            std::optional<double>(2));
  // The workers' own /metrics: exactly the finite input, across two workers.
  EXPECT_EQ(poll_until_equals(
                p, "sum(rstorm_tuples_emitted_total{topology=\"wc\",component=\"sentences\"})", 1000),
            std::optional<double>(1000));
  EXPECT_EQ(poll_until_equals(
                p, "sum(rstorm_tuples_acked_total{topology=\"wc\",component=\"sentences\"})", 1000),
            std::optional<double>(1000));
  EXPECT_EQ(poll_until_equals(p, "sum(rstorm_tuples_executed_total{topology=\"wc\",component=\"split\"})",
                              1000),
            std::optional<double>(1000));
  EXPECT_EQ(poll_until_equals(p, "count(rstorm_process_resident_memory_bytes{role=\"worker\",topology=\"wc\"})", 2),
            std::optional<double>(2));
  // Local mode: exactly the finite input.
  EXPECT_EQ(poll_until_equals(
                p, "sum(rstorm_tuples_emitted_total{topology=\"wc-local\",component=\"sentences\"})",
                1000),
            std::optional<double>(1000));
  EXPECT_EQ(poll_until_equals(
                p, "count(rstorm_process_resident_memory_bytes{role=\"local\",topology=\"wc-local\"})",
                1),
            std::optional<double>(1));
  EXPECT_EQ(poll_until_equals(p, "sum(rstorm_tuples_acked_total{topology=\"wc-local\"," 
                                 "component=\"sentences\"})", 1000),
            std::optional<double>(1000));

  // The transport's counters: each worker reports; what one sends the other receives.
  EXPECT_EQ(poll_until_equals(p, "count(rstorm_transport_tuples_sent_total{topology=\"wc\"})", 2),
            std::optional<double>(2));
  EXPECT_EQ(poll_until_equals(p,
                              "sum(rstorm_transport_tuples_sent_total{topology=\"wc\"}) - "
                              "sum(rstorm_transport_tuples_received_total{topology=\"wc\"})",
                              0),
            std::optional<double>(0));

  // A worker killed with SIGKILL is restarted by its supervisor: one restart,
  // and Prometheus scrapes both workers again.
  EXPECT_EQ(scalar_value(p, "sum(rstorm_supervisor_worker_restarts_total{topology=\"wc\"})"),
            std::optional<double>(0));
  const pid_t victim = one_worker_pid(*cluster);
  ASSERT_GT(victim, 0);
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  EXPECT_EQ(poll_until_equals(p, "sum(rstorm_supervisor_worker_restarts_total{topology=\"wc\"})", 1),
            std::optional<double>(1));
  EXPECT_EQ(poll_until_equals(p, "sum(up{job=\"rstorm-worker\",topology=\"wc\"})", 2),
            std::optional<double>(2));

  // The endpoints' own labels are kept (honor_labels), none renamed
  // exported_* for clashing with the SD entries' (the same values).
  for (const char* label : {"exported_topology", "exported_node", "exported_rack", "exported_role",
                            "exported_port"}) {
    EXPECT_EQ(scalar_value(p, std::string("count({__name__=~\"rstorm_.+\",") + label +
                                  "=~\".+\"}) or vector(0)"),
              std::optional<double>(0))
        << label;
  }
  EXPECT_EQ(scalar_value(p, "count(rstorm_supervisor_slots_used{node=~\".+\",rack=~\".+\"})"),
            std::optional<double>(2));

  // Every dashboard query returns data (polled: rates need two scrapes).
  const auto queries = dashboard_queries();
  std::map<std::string, std::string> missing;
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  for (const auto& q : queries) missing[q] = "not run";
  while (!missing.empty() && std::chrono::steady_clock::now() < deadline) {
    for (auto it = missing.begin(); it != missing.end();) {
      auto json = testing::instant_query(p, it->first);
      if (json && (*json)["status"] == "success" && !(*json)["data"]["result"].empty()) {
        it = missing.erase(it);
      } else {
        it->second = json ? json->dump().substr(0, 300) : "no answer";
        ++it;
      }
    }
    if (!missing.empty()) std::this_thread::sleep_for(500ms);
  }
  for (const auto& [q, why] : missing) ADD_FAILURE() << "no data for dashboard query " << q << ": " << why;
  std::printf("[dashboard] %zu queries, %zu with data\n", queries.size(),
              queries.size() - missing.size());

  stop = true;
  EXPECT_TRUE(local.get().is_ok());
  remove_file_sd(sd_file);
  cluster->stop();
}

}  // namespace
}  // namespace rstorm::metrics
