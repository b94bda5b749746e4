// UiApi: rstorm-ui's REST API (Storm UI's /api/v1 paths and field names, plus
// rstorm's placement map) and its static pages, over a UiBackend: nimbus for a
// cluster. See API.md for every path and field.
//
// Thread contract: handle() is thread-safe (the HTTP server's threads call it);
// sample_all() runs on one sampling thread (UiSampler).
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "common/http/http_server.hpp"
#include "common/metrics/http_get.hpp"
#include "common/status.hpp"
#include "rstorm_thrift/rstorm_types.h"
#include "ui/topology_stats.hpp"

namespace rstorm::ui {

// Where the UI's facts come from and where its actions go.
class UiBackend {
 public:
  virtual ~UiBackend() = default;
  virtual Result<thrift::ClusterSummary> cluster_info() = 0;
  // `id` may be a topology name.
  virtual Result<thrift::TopologyInfo> topology_info(const std::string& id) = 0;
  virtual Result<thrift::TopologyPlacement> placement(const std::string& id) = 0;
  virtual Status activate(const std::string& name) = 0;
  virtual Status deactivate(const std::string& name) = 0;
  virtual Status kill(const std::string& name, std::optional<int> wait_secs) = 0;
  virtual Status rebalance(const std::string& name, const thrift::RebalanceOptions& options) = 0;
  // One worker's /metrics text.
  virtual Result<std::string> scrape(const std::string& host, int port) = 0;
  // A backend whose calls are made for `principal` (the user of a browser's
  // client certificate); null when this backend cannot act for another.
  virtual std::shared_ptr<UiBackend> acting_for(const std::string& /*principal*/) {
    return nullptr;
  }
};

struct UiOptions {
  int metrics_port_offset = 1000;  // worker.metrics.port.offset
  // Origins besides the UI's own that may POST (ui.origins).
  std::set<std::string> allowed_origins;
  std::string version = "0.1.0";
  // Make each request's calls to nimbus for the user of the browser's client
  // certificate (ui.impersonate.users; needs ui.https.need.client.auth, and
  // nimbus.impersonation.acl letting rstorm-ui's own user act for them).
  bool act_for_users = false;
  // cluster/configuration: key -> value as YAML (the config rstorm-ui read:
  // defaults.yaml, rstorm.yaml and -c overrides, as every daemon reads them).
  std::map<std::string, std::string> configuration;
};

class UiApi {
 public:
  UiApi(UiBackend& backend, UiOptions options);

  http::HttpResponse handle(const http::HttpRequest& request);

  // Samples every running topology's workers once (the sampling thread).
  void sample_all();

 private:
  http::HttpResponse route(const http::HttpRequest& request);
  http::HttpResponse get(const http::HttpRequest& request, const std::vector<std::string>& parts,
                         UiBackend& backend);
  http::HttpResponse post(const http::HttpRequest& request, const std::vector<std::string>& parts,
                          UiBackend& backend);
  // The backend acting for the request's user (options_.act_for_users and a
  // client certificate), else null: backend_ itself.
  std::shared_ptr<UiBackend> backend_for(const http::HttpRequest& request);
  // The window's figures of a topology, sampling it first when the UI has no sample.
  std::optional<WindowStats> stats(const thrift::TopologyInfo& info, std::int64_t window_secs);

  UiBackend& backend_;
  const UiOptions options_;
  StatsHistory history_;
};

// Runs UiApi::sample_all every `interval` on a thread of its own, from
// construction until destruction (which wakes and joins it).
class UiSampler {
 public:
  UiSampler(UiApi& api, std::chrono::milliseconds interval);
  ~UiSampler();
  UiSampler(const UiSampler&) = delete;
  UiSampler& operator=(const UiSampler&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;     // last: starts once the rest is built
};

// GET http(s)://host:port/metrics as `client` says (TLS, basic authentication)
// within `timeout`; kUnavailable naming the URL when it cannot be read or
// does not answer 200.
Result<std::string> scrape_worker_metrics(const std::string& host, int port,
                                          metrics::HttpClientOptions client = {},
                                          std::chrono::milliseconds timeout = std::chrono::seconds(3));

}  // namespace rstorm::ui
