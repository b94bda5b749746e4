// rstorm-ui against a real dev cluster (ZooKeeper, nimbus, two supervisors,
// their workers) running the README's word count: every REST endpoint checked
// against the cluster's own state (the workers' /metrics, `rstorm describe
// --json`), the actions, the errors, and the supervisors' log viewer.
#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "common/metrics/http_get.hpp"
#include "supervisor/dev_cluster.hpp"
#include "tests/cluster/cli_runner.hpp"
#include "tests/common/poll.hpp"
#include "tests/common/zookeeper_server.hpp"
#include "ui/prometheus_text.hpp"

namespace rstorm::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

struct Reply {
  int status = 0;
  json body;
  std::string text;
  std::string allow;  // the Allow header (405)
};

// One request to rstorm-ui (GET or POST, with headers).
Reply request(int port, const std::string& method, const std::string& target,
              const std::vector<std::pair<std::string, std::string>>& headers = {},
              const std::string& body = "") {
  namespace beast = boost::beast;
  namespace bhttp = beast::http;
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  boost::asio::ip::tcp::resolver resolver(io);
  stream.expires_after(30s);
  stream.connect(resolver.resolve("127.0.0.1", std::to_string(port)));
  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
  req.set(bhttp::field::host, "127.0.0.1:" + std::to_string(port));
  for (const auto& [k, v] : headers) req.set(k, v);
  req.body() = body;
  req.prepare_payload();
  bhttp::write(stream, req);
  beast::flat_buffer buffer;
  bhttp::response<bhttp::string_body> res;
  bhttp::read(stream, buffer, res);
  Reply out;
  out.status = static_cast<int>(res.result_int());
  out.text = res.body();
  out.body = json::parse(out.text, nullptr, false);
  out.allow = std::string(res[bhttp::field::allow]);
  return out;
}

class UiClusterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto zk = ZooKeeperServer::start();
    ASSERT_TRUE(zk) << zk.status().to_string();
    zk_ = std::move(zk).value().release();
    supervisor::DevClusterOptions o;
    o.supervisors = 2;
    o.racks = 2;
    o.slots = 2;
    o.zookeeper_connect = zk_->connect_string();
    o.overrides = kFastConfig;
    o.overrides.push_back("ui.sample.interval.secs=1");
    o.ui = true;
    auto cluster = supervisor::DevCluster::start(o, Logger::to_stderr("ui-test"));
    ASSERT_TRUE(cluster) << cluster.status().to_string();
    cluster_ = std::move(cluster).value().release();
    const std::string url = cluster_->ui_url();
    ui_port_ = std::stoi(url.substr(url.rfind(':') + 1));
    auto submitted = run_cli({"submit", RSTORM_WORD_COUNT_LIB, "--name", "wc", "--wait", "--config",
                              cluster_->client_config().string()});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  }
  static void TearDownTestSuite() {
    delete cluster_;
    delete zk_;
  }

  static Reply get(const std::string& target) { return request(ui_port_, "GET", target); }
  static Reply post(const std::string& target, const std::string& body = "") {
    return request(ui_port_, "POST", target, {{"X-Requested-By", "ui-test"}}, body);
  }
  static std::string status_of(const std::string& name) {
    Reply r = get("/api/v1/topology/summary");
    for (const auto& t : r.body["topologies"]) {
      if (t["name"] == name) return t["status"];
    }
    return "";
  }

  static inline ZooKeeperServer* zk_ = nullptr;
  static inline supervisor::DevCluster* cluster_ = nullptr;
  static inline int ui_port_ = 0;
};

TEST_F(UiClusterTest, ClusterNimbusAndSupervisorSummaries) {
  Reply r = get("/api/v1/cluster/summary");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["supervisors"], 2);
  EXPECT_EQ(r.body["slotsTotal"], 4);
  EXPECT_EQ(r.body["topologies"], 1);
  EXPECT_GE(r.body["slotsUsed"].get<int>(), 1);

  r = get("/api/v1/nimbus/summary");
  ASSERT_EQ(r.body["nimbuses"].size(), 1u);
  EXPECT_EQ(r.body["nimbuses"][0]["status"], "Leader");
  EXPECT_EQ(r.body["nimbuses"][0]["port"], cluster_->nimbus_port(0));

  r = get("/api/v1/supervisor/summary");
  ASSERT_EQ(r.body["supervisors"].size(), 2u);
  std::set<std::string> racks;
  for (const auto& s : r.body["supervisors"]) {
    racks.insert(s["rack"].get<std::string>());
    const int index = s["id"] == "supervisor-1" ? 0 : 1;
    EXPECT_EQ(s["logviewerPort"], cluster_->logviewer_port(index)) << s.dump();
    EXPECT_EQ(s["totalMem"], 4096.0);
  }
  EXPECT_EQ(racks, (std::set<std::string>{"r1", "r2"}));

  r = get("/api/v1/cluster/configuration");
  EXPECT_EQ(r.body["nimbus.thrift.port"], cluster_->nimbus_port(0));
}

TEST_F(UiClusterTest, TopologyPageMatchesTheStructureAndCounts) {
  Reply r;
  // The figures come from the workers' /metrics: tuples flow within seconds.
  ASSERT_TRUE(eventually(
      [&] {
        r = get("/api/v1/topology/wc");
        return r.status == 200 && !r.body["spouts"].empty() && r.body["spouts"][0]["emitted"] > 0;
      },
      60s))
      << r.text;
  EXPECT_EQ(r.body["name"], "wc");
  EXPECT_EQ(r.body["status"], "ACTIVE");
  EXPECT_EQ(r.body["workersTotal"], 2);  // word count asks for two workers
  EXPECT_EQ(r.body["msgTimeout"], 30);
  EXPECT_EQ(r.body["topologyStats"].size(), 4u);
  ASSERT_EQ(r.body["spouts"].size(), 1u);
  EXPECT_EQ(r.body["spouts"][0]["spoutId"], "sentences");
  std::set<std::string> bolts;
  for (const auto& b : r.body["bolts"]) {
    bolts.insert(b["boltId"].get<std::string>());
    EXPECT_TRUE(b["backpressure"] == "OK" || b["backpressure"] == "LOW" || b["backpressure"] == "HIGH");
  }
  EXPECT_EQ(bolts, (std::set<std::string>{"split", "count", "report"}));
  // The topology's emitted counts every component's, as Storm's: at least
  // what its spouts and bolts show for the same window (the counters only
  // grow; a sample may land between the two sums).
  double components_emitted = 0;
  for (const auto& c : r.body["spouts"]) components_emitted += c["emitted"].get<double>();
  for (const auto& c : r.body["bolts"]) components_emitted += c["emitted"].get<double>();
  bool compared = false;
  for (const auto& w : r.body["topologyStats"]) {
    if (w["window"] != r.body["window"]) continue;
    compared = true;
    EXPECT_GE(w["emitted"].get<double>(), components_emitted) << r.text;
    EXPECT_GT(components_emitted, r.body["spouts"][0]["emitted"].get<double>()) << r.text;
  }
  EXPECT_TRUE(compared) << r.text;

  r = get("/api/v1/topology/wc/visualization");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body["sentences"][":type"], "spout");
  ASSERT_EQ(r.body["split"][":inputs"].size(), 1u);
  EXPECT_EQ(r.body["split"][":inputs"][0][":component"], "sentences");
  EXPECT_EQ(r.body["count"][":inputs"][0][":grouping"], "fields(word)");
}

TEST_F(UiClusterTest, PlacementMatchesDescribe) {
  auto described = run_cli({"describe", "wc", "--json", "--config", cluster_->client_config().string()});
  ASSERT_EQ(described.exit_code, 0) << described.output;
  const json d = json::parse(described.output);
  std::set<std::tuple<std::string, int, std::string>> want;  // node, port, [start-end]
  for (const auto& e : d["executors"]) {
    want.insert({e["node"].get<std::string>(), e["port"].get<int>(),
                 "[" + std::to_string(e["task_start"].get<int>()) + "-" +
                     std::to_string(e["task_end"].get<int>()) + "]"});
  }
  Reply r = get("/api/v1/topology/wc/placement");
  ASSERT_EQ(r.status, 200) << r.text;
  std::set<std::tuple<std::string, int, std::string>> got;
  std::set<std::string> racks;
  double memory = 0, cpu = 0;  // the nodes' parts: each worker's acker included
  for (const auto& rack : r.body["racks"]) {
    racks.insert(rack["rack"].get<std::string>());
    for (const auto& node : rack["nodes"]) {
      EXPECT_LE(node["memoryTopology"].get<double>(), node["memoryUsed"].get<double>() + 1e-6);
      memory += node["memoryTopology"].get<double>();
      cpu += node["cpuTopology"].get<double>();
      for (const auto& w : node["workers"]) {
        EXPECT_NE(w["workerLogLink"], "");
        for (const auto& e : w["executors"]) {
          got.insert({node["id"].get<std::string>(), w["port"].get<int>(), e["id"].get<std::string>()});
        }
      }
    }
  }
  EXPECT_EQ(got, want);
  EXPECT_DOUBLE_EQ(memory, r.body["assigned"]["memory"].get<double>()) << r.text;
  EXPECT_DOUBLE_EQ(cpu, r.body["assigned"]["cpu"].get<double>()) << r.text;
  EXPECT_FALSE(r.body["racks"][0]["nodes"][0]["workers"][0]["acker"].is_null()) << r.text;
  EXPECT_EQ(r.body["networkCost"]["sameWorker"], d["network"]["same_worker"]);
  EXPECT_EQ(r.body["networkCost"]["crossRack"], d["network"]["cross_rack"]);
  EXPECT_EQ(r.body["scheduler"], d["scheduler"]);
  EXPECT_TRUE(r.body["unschedulable"].is_null());
  // Two workers exchange tuples: the measured traffic between them shows.
  ASSERT_TRUE(eventually([&] {
    r = get("/api/v1/topology/wc/placement");
    return !r.body["workerTraffic"].empty();
  }, 60s)) << r.text;
}

TEST_F(UiClusterTest, ComponentPageListsExecutorsWithLogLinksThatWork) {
  Reply r = get("/api/v1/topology/wc/component/split");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["componentType"], "bolt");
  EXPECT_EQ(r.body["boltStats"].size(), 4u);
  ASSERT_EQ(r.body["executorStats"].size(), 2u);
  EXPECT_EQ(r.body["inputs"][0]["component"], "sentences");
  const std::string link = r.body["executorStats"][0]["workerLogLink"];
  ASSERT_EQ(link.rfind("http://127.0.0.1:", 0), 0u) << link;
  // http://127.0.0.1:<port>/log?file=...
  const std::string rest = link.substr(std::string("http://127.0.0.1:").size());
  const int port = std::stoi(rest.substr(0, rest.find('/')));
  const std::string target = rest.substr(rest.find('/'));
  auto page = metrics::http_get("127.0.0.1", port, target);
  ASSERT_TRUE(page) << page.status().message();
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("worker for topology"), std::string::npos) << page->body.substr(0, 500);
  // The log viewer stays inside the worker log folder.
  auto escape = metrics::http_get("127.0.0.1", port, "/api/v1/log?file=..%2Fsupervisor.log");
  ASSERT_TRUE(escape);
  EXPECT_EQ(escape->status, 403) << escape->body;
  // The words the split bolt counted itself (its own metrics) are on its page.
  ASSERT_TRUE(eventually([&] {
    r = get("/api/v1/topology/wc/component/split");
    for (const auto& m : r.body["userMetrics"]) {
      if (m["name"] == "words_split_total" && m["value"].get<double>() > 0) return true;
    }
    return false;
  }, 60s)) << r.text;
}

TEST_F(UiClusterTest, AnUnschedulableTopologyShowsTheSchedulersExplanation) {
  // Each executor fits a node, the whole does not fit the cluster (2 x 4096 MB):
  // three ackers of 3000 MB.
  auto submitted = run_cli({"submit", RSTORM_WORD_COUNT_LIB, "--name", "huge", "-c",
                            "topology.acker.executors=3", "-c",
                            "topology.acker.resources.onheap.memory.mb=3000", "-c",
                            "topology.worker.max.heap.size.mb=4000", "--config",
                            cluster_->client_config().string()});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  Reply r;
  ASSERT_TRUE(eventually([&] { return status_of("huge") == "UNSCHEDULABLE"; }, 60s));
  r = get("/api/v1/topology/huge/placement");
  ASSERT_EQ(r.status, 200) << r.text;
  ASSERT_TRUE(r.body["unschedulable"].is_string()) << r.text;
  EXPECT_NE(r.body["unschedulable"].get<std::string>().find("MB"), std::string::npos) << r.text;
  r = get("/api/v1/topology/huge");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["schedulerInfo"], r.body["statusReason"]);
  EXPECT_EQ(post("/api/v1/topology/huge/kill/0").status, 200);
  ASSERT_TRUE(eventually([&] { return get("/api/v1/topology/huge").status == 404; }, 60s));
}

TEST_F(UiClusterTest, WorkersList) {
  Reply r = get("/api/v1/topology-workers/wc");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body["hostPortList"].size(), 2u);
}

TEST_F(UiClusterTest, BadRequestsGetClearErrors) {
  Reply r = get("/api/v1/topology/no-such-topology");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body["errorMessage"].get<std::string>().find("no-such-topology"), std::string::npos);
  r = get("/api/v1/topology/wc/component/no-such-bolt");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body["errorMessage"].get<std::string>().find("no-such-bolt"), std::string::npos);
  r = get("/api/v1/topology/wc?window=7");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body["errorMessage"].get<std::string>().find("window '7'"), std::string::npos);
  r = get("/api/v1/nothing/here");
  EXPECT_EQ(r.status, 404);
  r = request(ui_port_, "DELETE", "/api/v1/topology/wc");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.allow, "GET, HEAD, POST");
  // An action read with GET, a page posted to: 405 with what the path takes.
  r = request(ui_port_, "GET", "/api/v1/topology/wc/deactivate");
  EXPECT_EQ(r.status, 405) << r.text;
  EXPECT_EQ(r.allow, "POST");
  EXPECT_NE(r.text.find("an action takes POST"), std::string::npos) << r.text;
  r = request(ui_port_, "POST", "/api/v1/topology/wc", {{"X-Requested-By", "x"}});
  EXPECT_EQ(r.status, 405) << r.text;
  EXPECT_EQ(r.allow, "GET, HEAD");
  r = post("/api/v1/topology/wc/rebalance/0", "{not json");
  EXPECT_EQ(r.status, 400);
  r = post("/api/v1/topology/wc/rebalance/0", R"({"rebalanceOptions": {"executors": {"split": 0}}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.text.find("executors.split"), std::string::npos) << r.text;
  // Cross-site: no custom header, or a foreign origin, changes nothing.
  r = request(ui_port_, "POST", "/api/v1/topology/wc/deactivate");
  EXPECT_EQ(r.status, 403);
  r = request(ui_port_, "POST", "/api/v1/topology/wc/kill/0",
              {{"X-Requested-By", "x"}, {"Origin", "http://evil.example"}});
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(r.text.find("evil.example"), std::string::npos);
  EXPECT_EQ(status_of("wc"), "ACTIVE");
  // Pages: the index is served, unknown files are 404.
  r = get("/");
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.text.find("<html"), std::string::npos);
  EXPECT_EQ(get("/no-such-page.html").status, 404);
}

// Last: deactivates, compares with /metrics, kills.
TEST_F(UiClusterTest, ZActionsChangeTheTopologyAndCountsMatchMetrics) {
  Reply r = post("/api/v1/topology/wc/deactivate");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["status"], "success");
  ASSERT_TRUE(eventually([&] { return status_of("wc") == "INACTIVE"; }, 60s));
  // Spouts quiet: the all-time counts settle and equal the sum of the workers' /metrics.
  Reply workers = get("/api/v1/topology-workers/wc");
  auto emitted_in_metrics = [&](const std::string& component) {
    double sum = 0;
    for (const auto& w : workers.body["hostPortList"]) {
      auto text = metrics::http_get(w["host"], w["port"].get<int>() + 1000, "/metrics");
      if (!text) return -1.0;
      for (const auto& s : ui::parse_prometheus_text(text->body).samples) {
        if (s.name == "rstorm_tuples_emitted_total" && s.label("component") == component) sum += s.value;
      }
    }
    return sum;
  };
  double api = -2, scraped = -1;
  ASSERT_TRUE(eventually(
      [&] {
        Reply t = get("/api/v1/topology/wc?window=:all-time");
        for (const auto& b : t.body["bolts"]) {
          if (b["boltId"] == "split") api = b["emitted"].get<double>();
        }
        scraped = emitted_in_metrics("split");
        return scraped > 0 && api == scraped;
      },
      60s))
      << "api " << api << " /metrics " << scraped;

  r = post("/api/v1/topology/wc/activate");
  ASSERT_EQ(r.status, 200) << r.text;
  ASSERT_TRUE(eventually([&] { return status_of("wc") == "ACTIVE"; }, 60s));

  // Rebalance with Storm's body: split's two tasks into one executor.
  r = post("/api/v1/topology/wc/rebalance/0", R"({"rebalanceOptions": {"executors": {"split": 1}}})");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["topologyOperation"], "rebalance");
  ASSERT_TRUE(eventually(
      [&] {
        Reply c = get("/api/v1/topology/wc/component/split");
        return c.status == 200 && c.body["executorStats"].size() == 1 && status_of("wc") == "ACTIVE";
      },
      90s));

  r = post("/api/v1/topology/wc/kill/0");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["topologyOperation"], "kill");
  ASSERT_TRUE(eventually([&] { return get("/api/v1/topology/wc").status == 404; }, 90s));
}

// `rstorm dev-cluster --secure`: rstorm-ui over HTTPS with client
// certificates makes each request's calls for the certificate's user, so bob
// sees and changes only what bob may, and alice can stop her topology from
// the UI (nimbus.impersonation.acl lets `ui` act for anyone from 127.0.0.1).
TEST(UiSecureClusterTest, ActsForTheUserOfTheBrowsersCertificate) {
  auto zk = ZooKeeperServer::start();
  ASSERT_TRUE(zk) << zk.status().to_string();
  supervisor::DevClusterOptions o;
  o.supervisors = 1;
  o.racks = 1;
  o.slots = 2;
  o.zookeeper_connect = (*zk)->connect_string();
  o.overrides = kFastConfig;
  o.ui = true;
  o.secure = true;
  auto started = supervisor::DevCluster::start(o, Logger::to_stderr("ui-secure-test"));
  ASSERT_TRUE(started) << started.status().to_string();
  auto cluster = std::move(started).value();
  auto submitted = run_cli({"submit", RSTORM_WORD_COUNT_LIB, "--name", "wc", "--wait", "--config",
                            cluster->client_config().string()});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  const std::string url = cluster->ui_url();
  ASSERT_EQ(url.rfind("https://", 0), 0u) << url;
  const int port = std::stoi(url.substr(url.rfind(':') + 1));
  const auto as_at = [&](int at, const std::string& user, const std::string& method,
                         const std::string& target) {
    metrics::HttpClientOptions client;
    client.https = true;
    client.ca_file = (cluster->tls_dir() / "ca.pem").string();
    client.cert_file = (cluster->tls_dir() / (user + ".pem")).string();
    client.key_file = (cluster->tls_dir() / (user + "-key.pem")).string();
    client.timeout = 30s;
    metrics::HttpRequestSpec spec;
    spec.method = method;
    spec.target = target;
    if (method == "POST") spec.headers = {{"X-Requested-By", "ui-test"}};
    auto r = metrics::http_request("127.0.0.1", at, spec, client);
    Reply out;
    if (!r) {
      out.text = r.status().message();
      return out;
    }
    out.status = r->status;
    out.text = r->body;
    out.body = json::parse(out.text, nullptr, false);
    return out;
  };
  const auto as = [&](const std::string& user, const std::string& method,
                      const std::string& target) { return as_at(port, user, method, target); };

  // Bob may list, not look into alice's topology, nor stop it.
  Reply list = as("bob", "GET", "/api/v1/topology/summary");
  EXPECT_EQ(list.status, 200) << list.text;
  Reply look = as("bob", "GET", "/api/v1/topology/wc");
  EXPECT_EQ(look.status, 403) << look.text;
  EXPECT_NE(look.text.find("user 'bob' may not describe topology 'wc' (owner 'alice')"),
            std::string::npos)
      << look.text;
  Reply kill = as("bob", "POST", "/api/v1/topology/wc/kill/0");
  EXPECT_EQ(kill.status, 403) << kill.text;
  EXPECT_NE(kill.text.find("user 'bob' may not kill topology 'wc' (owner 'alice')"),
            std::string::npos)
      << kill.text;

  // Alice may do both.
  Reply mine = as("alice", "GET", "/api/v1/topology/wc");
  EXPECT_EQ(mine.status, 200) << mine.text;
  // The supervisor says its log viewer serves HTTPS, and the links say so.
  std::string log_link;
  const std::string log_viewer = "https://127.0.0.1:" + std::to_string(cluster->logviewer_port(0));
  EXPECT_TRUE(eventually([&] {
    Reply t = as("alice", "GET", "/api/v1/topology-workers/" + mine.body.value("id", ""));
    if (t.status != 200 || !t.body.contains("hostPortList") || t.body["hostPortList"].empty())
      return false;
    log_link = t.body["hostPortList"][0].value("workerLogLink", "");
    return log_link.rfind(log_viewer + "/log?", 0) == 0;
  })) << mine.text;
  // The log behind the link: alice's to read, not bob's (nimbus.authorizer is
  // on in the supervisor's config too).
  if (log_link.rfind(log_viewer, 0) == 0) {
    const std::string target = log_link.substr(log_viewer.size());
    EXPECT_TRUE(eventually([&] {
      return as_at(cluster->logviewer_port(0), "alice", "GET", target).status == 200;
    })) << target;
    Reply theirs = as_at(cluster->logviewer_port(0), "bob", "GET", target);
    EXPECT_EQ(theirs.status, 403) << theirs.text;
    EXPECT_NE(theirs.text.find("user 'bob' may not describe topology 'wc' (owner 'alice')"),
              std::string::npos)
        << theirs.text;
  }
  Reply off = as("alice", "POST", "/api/v1/topology/wc/deactivate");
  EXPECT_EQ(off.status, 200) << off.text;
  EXPECT_TRUE(eventually(
      [&] {
        Reply t = as("alice", "GET", "/api/v1/topology/wc");
        return t.status == 200 && t.body.value("status", "") == "INACTIVE";
      },
      60s));
  Reply killed = as("alice", "POST", "/api/v1/topology/wc/kill/0");
  EXPECT_EQ(killed.status, 200) << killed.text;
  EXPECT_TRUE(
      eventually([&] { return as("admin", "GET", "/api/v1/topology/wc").status == 404; }, 90s));

  // Nimbus names who acted, and for whom.
  std::ifstream log(cluster->nimbus(0).log);
  const std::string nimbus_log((std::istreambuf_iterator<char>(log)), {});
  EXPECT_NE(nimbus_log.find("acts for user 'alice'"), std::string::npos);
  EXPECT_NE(nimbus_log.find("denied user 'bob' (through user 'ui'"), std::string::npos);
  cluster->stop();
}

}  // namespace
}  // namespace rstorm::testing
