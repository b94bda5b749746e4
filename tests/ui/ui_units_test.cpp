// rstorm-ui's pieces on their own: the Prometheus text reader, the windows
// over samples, the HTTP server (a real one on loopback) and the supervisor's
// log viewer over real files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/http/http_server.hpp"
#include "common/metrics/http_get.hpp"
#include "common/security/certificates.hpp"
#include "supervisor/log_viewer.hpp"
#include "tests/common/temp_dir.hpp"
#include "ui/prometheus_text.hpp"
#include "ui/topology_stats.hpp"

namespace rstorm::ui {
namespace {

TEST(PrometheusText, ReadsSamplesLabelsAndTypes) {
  const std::string text =
      "# HELP rstorm_tuples_emitted_total Tuples emitted\n"
      "# TYPE rstorm_tuples_emitted_total counter\n"
      "rstorm_tuples_emitted_total{topology=\"wc\",component=\"split\",executor=\"5\"} 1234\n"
      "rstorm_tuples_emitted_total{topology=\"wc\",component=\"a \\\"q\\\" b\",executor=\"6\"} 1e3\n"
      "not a sample line\n"
      "rstorm_up 1 1700000000000\n"
      "rstorm_inf +Inf\n";
  const PromParse p = parse_prometheus_text(text);
  ASSERT_EQ(p.samples.size(), 4u);
  EXPECT_EQ(p.malformed_lines, 1);
  EXPECT_EQ(p.types.at("rstorm_tuples_emitted_total"), "counter");
  EXPECT_EQ(p.samples[0].label("component"), "split");
  EXPECT_DOUBLE_EQ(p.samples[0].value, 1234);
  EXPECT_EQ(p.samples[1].label("component"), "a \"q\" b");
  EXPECT_DOUBLE_EQ(p.samples[1].value, 1000);
  EXPECT_EQ(p.samples[2].name, "rstorm_up");
  EXPECT_TRUE(std::isinf(p.samples[3].value));
}

TEST(TopologyStats, SumsExecutorsLatencyPeersAndUserMetrics) {
  const std::string worker_a =
      "rstorm_tuples_emitted_total{topology=\"wc\",component=\"split\",executor=\"5\"} 100\n"
      "rstorm_tuples_executed_total{topology=\"wc\",component=\"split\",executor=\"5\"} 10\n"
      "rstorm_backpressure_wait_seconds_total{topology=\"wc\",component=\"split\",executor=\"5\"} 2\n"
      "rstorm_receive_queue_depth_batches{topology=\"wc\",component=\"split\",executor=\"5\"} 7\n"
      "rstorm_execute_latency_seconds_sum{topology=\"wc\",component=\"split\"} 0.5\n"
      "rstorm_execute_latency_seconds_count{topology=\"wc\",component=\"split\"} 5\n"
      "rstorm_transport_peer_tuples_sent_total{topology=\"wc\",peer=\"127.0.0.1:7001\"} 40\n"
      "# TYPE sentence_words histogram\n"
      "sentence_words_bucket{topology=\"wc\",component=\"split\",task=\"5\",le=\"4\"} 1\n"
      "sentence_words_sum{topology=\"wc\",component=\"split\",task=\"5\"} 30\n"
      "sentence_words_count{topology=\"wc\",component=\"split\",task=\"5\"} 6\n"
      "# TYPE words_total counter\n"
      "words_total{topology=\"wc\",component=\"split\",task=\"5\"} 99\n";
  const std::string worker_b =
      "rstorm_tuples_emitted_total{topology=\"wc\",component=\"split\",executor=\"6\"} 50\n"
      "rstorm_execute_latency_seconds_sum{topology=\"wc\",component=\"split\"} 0.5\n"
      "rstorm_execute_latency_seconds_count{topology=\"wc\",component=\"split\"} 5\n";
  TopologySample s;
  add_worker_metrics(worker_a, "127.0.0.1:7000", s);
  add_worker_metrics(worker_b, "127.0.0.1:7001", s);
  ASSERT_EQ(s.executors.size(), 2u);
  const ExecutorCounters& e5 = s.executors.at({"split", 5});
  EXPECT_DOUBLE_EQ(e5.emitted, 100);
  EXPECT_DOUBLE_EQ(e5.executed, 10);
  EXPECT_DOUBLE_EQ(e5.wait_seconds, 2);
  EXPECT_DOUBLE_EQ(e5.queue_depth, 7);
  EXPECT_DOUBLE_EQ(s.executors.at({"split", 6}).emitted, 50);
  EXPECT_DOUBLE_EQ(s.latency.at("split").execute_sum, 1.0);
  EXPECT_DOUBLE_EQ(s.latency.at("split").execute_count, 10);
  EXPECT_DOUBLE_EQ((s.peer_sent.at({"127.0.0.1:7000", "127.0.0.1:7001"})), 40);
  ASSERT_EQ(s.user.size(), 2u);
  for (const auto& m : s.user) {
    if (m.name == "sentence_words") {
      EXPECT_EQ(m.type, "histogram");
      EXPECT_DOUBLE_EQ(m.sum, 30);
      EXPECT_DOUBLE_EQ(m.count, 6);
    } else {
      EXPECT_EQ(m.name, "words_total");
      EXPECT_EQ(m.type, "counter");
      EXPECT_DOUBLE_EQ(m.value, 99);
    }
    EXPECT_EQ(m.task, 5);
  }
}

// rstorm describe's counts: per component in the topology's order, summed
// over its executors, system components left out, a worker that could not
// be read named.
TEST(TopologyStats, ComponentTotalsSumExecutorsInTheTopologysOrder) {
  thrift::TopologyStructure structure;
  for (auto [id, kind] : {std::pair{"sentences", thrift::ComponentKind::SPOUT},
                          std::pair{"split", thrift::ComponentKind::BOLT},
                          std::pair{"__acker", thrift::ComponentKind::BOLT},
                          std::pair{"report", thrift::ComponentKind::BOLT}}) {
    thrift::ComponentDef c;
    c.id = id;
    c.kind = kind;
    structure.components.push_back(c);
  }
  TopologySample s;
  add_worker_metrics(
      "rstorm_tuples_emitted_total{topology=\"wc\",component=\"sentences\",executor=\"4\"} 90\n"
      "rstorm_tuples_acked_total{topology=\"wc\",component=\"sentences\",executor=\"4\"} 80\n"
      "rstorm_tuples_failed_total{topology=\"wc\",component=\"sentences\",executor=\"4\"} 3\n"
      "rstorm_tuples_executed_total{topology=\"wc\",component=\"split\",executor=\"5\"} 50\n"
      "rstorm_tuples_emitted_total{topology=\"wc\",component=\"split\",executor=\"5\"} 400\n"
      "rstorm_tuples_acked_total{topology=\"wc\",component=\"split\",executor=\"5\"} 50\n"
      "rstorm_tuples_executed_total{topology=\"wc\",component=\"__acker\",executor=\"7\"} 9\n",
      "127.0.0.1:7000", s);
  add_worker_metrics(
      "rstorm_tuples_executed_total{topology=\"wc\",component=\"split\",executor=\"6\"} 40\n"
      "rstorm_tuples_emitted_total{topology=\"wc\",component=\"split\",executor=\"6\"} 300\n"
      "rstorm_tuples_acked_total{topology=\"wc\",component=\"split\",executor=\"6\"} 40\n"
      "rstorm_task_errors_total{topology=\"wc\",component=\"split\",executor=\"6\"} 2\n",
      "127.0.0.1:7001", s);
  s.unreachable.push_back("127.0.0.1:7002: connection refused");

  const auto totals = component_totals(structure, s);
  ASSERT_EQ(totals.size(), 3u);
  EXPECT_EQ(totals[0].id, "sentences");
  EXPECT_TRUE(totals[0].spout);
  EXPECT_EQ(totals[1].id, "split");
  EXPECT_EQ(totals[1].executors, 2);
  EXPECT_DOUBLE_EQ(totals[1].counts.executed, 90);
  EXPECT_DOUBLE_EQ(totals[1].counts.emitted, 700);
  EXPECT_DOUBLE_EQ(totals[1].counts.errors, 2);
  EXPECT_EQ(totals[2].id, "report");
  EXPECT_EQ(totals[2].executors, 0);

  EXPECT_EQ(render_counts_text(totals, s),
            "Counts (since each worker started, read from its /metrics now):\n"
            "  sentences (spout, 1 executor): emitted 90, acked 80, failed 3\n"
            "  split (bolt, 2 executors): executed 90, emitted 700, acked 90, failed 0, errors 2\n"
            "  no counts from worker 127.0.0.1:7002: connection refused\n");
  EXPECT_EQ(render_counts_text({}, TopologySample{}), "");
}

TopologySample at(Clock::time_point t, double emitted) {
  TopologySample s;
  s.time = t;
  s.executors[{"spout", 1}].emitted = emitted;
  return s;
}

TEST(TopologyStats, WindowsAreDifferencesOfSamples) {
  StatsHistory history;
  const auto t0 = Clock::now();
  using std::chrono::seconds;
  EXPECT_FALSE(history.window("t", 600, 10000).has_value());
  history.record("t", at(t0, 1000));
  // One sample and a topology older than the window: the counts since it started.
  auto w = history.window("t", 600, 10000);
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->counts.executors.at({"spout", 1}).emitted, 1000);
  EXPECT_DOUBLE_EQ(w->seconds, 10000);
  history.record("t", at(t0 + seconds(300), 1600));
  history.record("t", at(t0 + seconds(700), 2400));
  // The last 600 s: from the sample at 300 s (the oldest within the window).
  w = history.window("t", 600, 10000);
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->counts.executors.at({"spout", 1}).emitted, 800);
  EXPECT_DOUBLE_EQ(w->seconds, 400);
  // All time: the counters as they are.
  w = history.window("t", 0, 10000);
  EXPECT_DOUBLE_EQ(w->counts.executors.at({"spout", 1}).emitted, 2400);
  // A topology younger than the window: since it started.
  w = history.window("t", 10800, 700);
  EXPECT_DOUBLE_EQ(w->counts.executors.at({"spout", 1}).emitted, 2400);
  EXPECT_DOUBLE_EQ(w->seconds, 700);
  // A restarted worker (counters went down) counts from zero.
  history.record("t", at(t0 + seconds(800), 50));
  w = history.window("t", 600, 10000);
  EXPECT_DOUBLE_EQ(w->counts.executors.at({"spout", 1}).emitted, 50);
  history.retain({});
  EXPECT_FALSE(history.has("t"));
}

TEST(TopologyStats, OldSamplesAreThinned) {
  StatsHistory history(std::chrono::hours(24), std::chrono::minutes(5));
  const auto t0 = Clock::now();
  for (int i = 0; i <= 720; ++i) history.record("t", at(t0 + std::chrono::seconds(5 * i), i));
  // One hour of 5 s samples: the last 10 minutes kept whole, the 50 before thinned to one per 5 min.
  auto w = history.window("t", 3000, 100000);
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->counts.executors.at({"spout", 1}).emitted, 600);
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    http::HttpServerOptions o;
    o.name = "test";
    auto s = http::HttpServer::start(
        o,
        [](const http::HttpRequest& r) {
          if (r.path == "/throw") throw std::runtime_error("handler broke");
          return http::HttpResponse::json("{\"path\":\"" + r.path + "\",\"q\":\"" + r.param("q") +
                                          "\",\"method\":\"" + r.method + "\"}");
        },
        Logger::null());
    ASSERT_TRUE(s.is_ok()) << s.status().message();
    server_ = std::move(s).value();
  }
  std::unique_ptr<http::HttpServer> server_;
};

TEST_F(HttpServerTest, DecodesPathAndQuery) {
  auto r = metrics::http_get("127.0.0.1", server_->port(), "/a%20b?q=x%2By+z&other=1");
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "{\"path\":\"/a b\",\"q\":\"x+y z\",\"method\":\"GET\"}");
}

TEST_F(HttpServerTest, AHandlerThatThrowsAnswers500WithItsMessage) {
  auto r = metrics::http_get("127.0.0.1", server_->port(), "/throw");
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(r->status, 500);
  EXPECT_NE(r->body.find("handler broke"), std::string::npos) << r->body;
}

TEST(HttpServer, APortInUseIsNamed) {
  http::HttpServerOptions o;
  o.name = "first";
  auto first = http::HttpServer::start(o, [](const http::HttpRequest&) { return http::HttpResponse(); },
                                       Logger::null());
  ASSERT_TRUE(first.is_ok());
  o.name = "second";
  o.port = (*first)->port();
  auto second = http::HttpServer::start(o, [](const http::HttpRequest&) { return http::HttpResponse(); },
                                        Logger::null());
  ASSERT_FALSE(second.is_ok());
  EXPECT_NE(second.status().message().find("second cannot listen on 127.0.0.1:" +
                                           std::to_string(o.port)),
            std::string::npos)
      << second.status().message();
}

// HTTPS with client certificates required (ui.https.*, logviewer.https.*).
class HttpsServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    const auto d = dir_->path();
    auto ca = security::CertificateAuthority::create("ui CA");
    ASSERT_TRUE(ca.is_ok());
    ASSERT_TRUE((*ca)->write_certificate(d / "ca.pem"));
    security::CertificateRequest server{"ui", {"localhost"}, {"127.0.0.1"}};
    ASSERT_TRUE((*ca)->issue(server, d / "ui.pem", d / "ui-key.pem"));
    security::CertificateRequest alice;
    alice.common_name = "alice";
    alice.pkcs12_path = d / "alice.p12";
    ASSERT_TRUE((*ca)->issue(alice, d / "alice.pem", d / "alice-key.pem"));
    auto other = security::CertificateAuthority::create("other CA");
    ASSERT_TRUE(other.is_ok());
    alice.pkcs12_path.clear();
    ASSERT_TRUE((*other)->issue(alice, d / "forged.pem", d / "forged-key.pem"));
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string path(const std::string& name) { return (dir_->path() / name).string(); }

  void SetUp() override {
    http::HttpServerOptions o;
    o.name = "rstorm-ui";
    o.tls_cert = path("ui.pem");
    o.tls_key = path("ui-key.pem");
    o.tls_ca = path("ca.pem");
    o.need_client_auth = true;
    auto s = http::HttpServer::start(
        o,
        [](const http::HttpRequest& r) {
          return http::HttpResponse::json("{\"principal\":\"" + r.principal +
                                          "\",\"secure\":" + (r.secure ? "true" : "false") + "}");
        },
        Logger::null());
    ASSERT_TRUE(s.is_ok()) << s.status().message();
    server_ = std::move(s).value();
  }
  metrics::HttpClientOptions client(const std::string& cert) const {
    metrics::HttpClientOptions c;
    c.https = true;
    c.ca_file = path("ca.pem");
    if (!cert.empty()) {
      c.cert_file = path(cert + ".pem");
      c.key_file = path(cert + "-key.pem");
    }
    return c;
  }

  static testing::TempDir* dir_;
  std::unique_ptr<http::HttpServer> server_;
};

testing::TempDir* HttpsServerTest::dir_ = nullptr;

TEST_F(HttpsServerTest, ClientWithACertificateOfTheCaIsServedAndNamed) {
  EXPECT_EQ(server_->url(), "https://127.0.0.1:" + std::to_string(server_->port()));
  auto r = metrics::http_get("127.0.0.1", server_->port(), "/", client("alice"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "{\"principal\":\"alice\",\"secure\":true}");
  EXPECT_TRUE(std::filesystem::file_size(path("alice.p12")) > 0);  // for a browser
}

TEST_F(HttpsServerTest, ClientWithoutACertificateOrWithAnotherCasIsServedNothing) {
  auto none = metrics::http_get("127.0.0.1", server_->port(), "/", client(""));
  EXPECT_FALSE(none.ok());
  auto forged = metrics::http_get("127.0.0.1", server_->port(), "/", client("forged"));
  EXPECT_FALSE(forged.ok());
  // Plain HTTP: a 400 that says to use https://, not a dropped connection.
  auto plain = metrics::http_get("127.0.0.1", server_->port(), "/");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->status, 400);
  EXPECT_NE(plain->body.find("rstorm-ui speaks HTTPS on this port: use https://"),
            std::string::npos)
      << plain->body;
  // Still serving the right client.
  auto r = metrics::http_get("127.0.0.1", server_->port(), "/", client("alice"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpsServerTest, MisconfiguredHttpsIsAClearError) {
  http::HttpServerOptions o;
  o.name = "log viewer";
  o.tls_cert = path("ui.pem");
  o.tls_key = path("alice-key.pem");  // another certificate's key
  auto s = http::HttpServer::start(
      o, [](const http::HttpRequest&) { return http::HttpResponse(); }, Logger::null());
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().message(), "log viewer: the private key '" + path("alice-key.pem") +
                                      "' does not belong to the certificate '" + path("ui.pem") +
                                      "'");
  Config c;
  c.set("ui.https.cert.path", path("ui.pem"), "rstorm.yaml");
  http::HttpServerOptions from;
  try {
    http::https_options_from_config(c, "ui.https", from);
    FAIL() << "accepted a certificate without its key";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "ui.https.key.path is not set, but ui.https.cert.path is: HTTPS needs both");
  }
  c.set("ui.https.key.path", path("ui-key.pem"));
  c.set("ui.https.need.client.auth", true);
  EXPECT_THROW(http::https_options_from_config(c, "ui.https", from), ConfigError);
  c.set("ui.https.ca.path", path("ca.pem"));
  http::https_options_from_config(c, "ui.https", from);
  EXPECT_TRUE(from.tls() && from.need_client_auth);
}

class LogViewerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("rstorm-logviewer-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "workers" / "wc-1-6700");
    std::ofstream(root_ / "workers" / "wc-1-6700" / "worker.log") << "0123456789abcdefghij";
    std::ofstream(root_ / "secret.txt") << "not yours";
    std::filesystem::create_symlink(root_ / "secret.txt", root_ / "workers" / "link.log");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  http::HttpResponse get(const std::string& path, std::map<std::string, std::string> query) {
    http::HttpRequest r;
    r.method = "GET";
    r.path = path;
    r.query = std::move(query);
    return supervisor::LogViewer(root_ / "workers").handle(r);
  }
  std::filesystem::path root_;
};

TEST_F(LogViewerTest, ServesSlicesOfAWorkerLog) {
  auto r = get("/api/v1/log", {{"file", "wc-1-6700/worker.log"}, {"start", "5"}, {"length", "4"}});
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("\"content\":\"5678\""), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("\"size\":20"), std::string::npos) << r.body;
  // Without start: the last `length` bytes.
  r = get("/api/v1/log", {{"file", "wc-1-6700/worker.log"}, {"length", "3"}});
  EXPECT_NE(r.body.find("\"content\":\"hij\""), std::string::npos) << r.body;
  r = get("/log", {{"file", "wc-1-6700/worker.log"}, {"start", "0"}, {"length", "10"}});
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_NE(r.body.find("0123456789"), std::string::npos);
  EXPECT_NE(r.body.find("Next"), std::string::npos);
  r = get("/api/v1/logs", {});
  EXPECT_NE(r.body.find("wc-1-6700/worker.log"), std::string::npos) << r.body;
}

TEST_F(LogViewerTest, RefusesPathsOutsideTheWorkerLogFolder) {
  for (const std::string bad : {"../secret.txt", "/etc/passwd", "wc-1-6700/../../secret.txt",
                                "link.log"}) {
    auto r = get("/api/v1/log", {{"file", bad}});
    EXPECT_EQ(r.status, 403) << bad << ": " << r.body;
    EXPECT_NE(r.body.find("outside the worker log folder"), std::string::npos) << r.body;
  }
  EXPECT_EQ(get("/api/v1/log", {{"file", "nope.log"}}).status, 404);
  // Inside a worker folder, only its logs: spec.json holds the topology's
  // secret, worker-token the worker's credential. A link named .log to one
  // of them is no log either.
  std::ofstream(root_ / "workers" / "wc-1-6700" / "spec.json") << "{\"secret\": \"s\"}";
  std::ofstream(root_ / "workers" / "wc-1-6700" / "worker-token") << "token";
  std::filesystem::create_symlink(root_ / "workers" / "wc-1-6700" / "spec.json",
                                  root_ / "workers" / "wc-1-6700" / "spec.log");
  for (const std::string inside : {"wc-1-6700/spec.json", "wc-1-6700/worker-token",
                                   "wc-1-6700/spec.log"}) {
    for (const char* path : {"/api/v1/log", "/log"}) {
      auto r = get(path, {{"file", inside}});
      EXPECT_EQ(r.status, 403) << path << " " << inside << ": " << r.body;
      EXPECT_NE(r.body.find("serves only the *.log files"), std::string::npos) << r.body;
      EXPECT_EQ(r.body.find("secret"), std::string::npos) << r.body;
    }
  }
  EXPECT_EQ(get("/api/v1/log", {}).status, 400);
  auto r = get("/api/v1/log", {{"file", "wc-1-6700/worker.log"}, {"start", "-3"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("parameter 'start'"), std::string::npos) << r.body;
}

// With nimbus's ACLs on, a log goes only to those who may describe its
// topology: the owner, topology.readonly.users, admins, daemons.
TEST_F(LogViewerTest, WithAclsOnServesALogOnlyToWhoMayDescribeItsTopology) {
  security::Authorizer::Options o;
  o.enabled = true;
  o.admins = {"admin"};
  o.daemon_users = {"ui"};
  auto authorizer = std::make_shared<const security::Authorizer>(o);
  security::TopologyAcl acl;
  acl.name = "wc";
  acl.id = "wc-1";
  acl.owner = "alice";
  acl.readonly_users = {"carol"};
  std::ofstream(root_ / "workers" / "wc-1-6700" / supervisor::kAclFile)
      << supervisor::acl_to_json(acl);
  std::filesystem::create_directories(root_ / "workers" / "old-2-6701");  // no ACL file
  std::ofstream(root_ / "workers" / "old-2-6701" / "worker.log") << "old";
  supervisor::LogViewer viewer(root_ / "workers", authorizer);
  auto as = [&](const std::string& principal, const std::string& path, const std::string& file) {
    http::HttpRequest r;
    r.method = "GET";
    r.path = path;
    r.principal = principal;
    if (!file.empty()) r.query = {{"file", file}};
    return viewer.handle(r);
  };
  for (const char* user : {"alice", "carol", "admin", "ui"}) {
    EXPECT_EQ(as(user, "/api/v1/log", "wc-1-6700/worker.log").status, 200) << user;
    EXPECT_EQ(as(user, "/log", "wc-1-6700/worker.log").status, 200) << user;
  }
  auto r = as("bob", "/api/v1/log", "wc-1-6700/worker.log");
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(r.body.find("user 'bob' may not describe topology 'wc' (owner 'alice')"),
            std::string::npos)
      << r.body;
  EXPECT_EQ(r.body.find("0123456789"), std::string::npos);
  EXPECT_EQ(as("bob", "/log", "wc-1-6700/worker.log").status, 403);
  // No certificate: refused, saying what is needed.
  r = as("", "/api/v1/log", "wc-1-6700/worker.log");
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(r.body.find("client certificate"), std::string::npos) << r.body;
  // A folder without its ACL: admins and daemons only.
  EXPECT_EQ(as("alice", "/api/v1/log", "old-2-6701/worker.log").status, 403);
  EXPECT_EQ(as("admin", "/api/v1/log", "old-2-6701/worker.log").status, 200);
  // A file that is not there is refused before it is looked for: no probing.
  EXPECT_EQ(as("bob", "/api/v1/log", "wc-1-6700/gone.log").status, 403);
  EXPECT_EQ(as("alice", "/api/v1/log", "wc-1-6700/gone.log").status, 404);
  // The listing holds only what the user may read.
  r = as("bob", "/api/v1/logs", "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body.find("wc-1-6700"), std::string::npos) << r.body;
  r = as("alice", "/api/v1/logs", "");
  EXPECT_NE(r.body.find("wc-1-6700/worker.log"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("old-2-6701"), std::string::npos) << r.body;
  r = as("admin", "/api/v1/logs", "");
  EXPECT_NE(r.body.find("old-2-6701/worker.log"), std::string::npos) << r.body;
}

TEST_F(LogViewerTest, AclFileRoundTripsAndACorruptOneIsNamed) {
  security::TopologyAcl acl{"wc", "alice", {"bob"}, {"carol"}, {"ops"}, {"dev"}, "wc-1"};
  const auto path = root_ / "acl.json";
  std::ofstream(path) << supervisor::acl_to_json(acl);
  auto read = supervisor::read_acl_file(path);
  ASSERT_TRUE(read) << read.status().to_string();
  EXPECT_EQ(read->name, "wc");
  EXPECT_EQ(read->owner, "alice");
  EXPECT_EQ(read->users, std::vector<std::string>{"bob"});
  EXPECT_EQ(read->readonly_users, std::vector<std::string>{"carol"});
  EXPECT_EQ(read->groups, std::vector<std::string>{"ops"});
  EXPECT_EQ(read->readonly_groups, std::vector<std::string>{"dev"});
  EXPECT_EQ(read->id, "wc-1");
  std::ofstream(path) << "{\"name\": 3}";
  read = supervisor::read_acl_file(path);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.code(), ErrorCode::kCorruption);
  EXPECT_NE(read.status().message().find(path.string()), std::string::npos);
  EXPECT_EQ(supervisor::read_acl_file(root_ / "none.json").code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace rstorm::ui
