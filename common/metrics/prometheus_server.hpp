// PrometheusServer: starts a real Prometheus server (Debian's `prometheus`
// binary) on loopback, scraping rstorm's endpoints, for `rstorm dev-cluster
// --prometheus`, `rstorm local --prometheus` and the metrics tests. It writes
// its config and keeps its data under `work_dir`, runs in its own process
// group, and is stopped by pid (SIGTERM, then SIGKILL) by stop() or the
// destructor.
//
// Scrape jobs (the same as conf/prometheus/prometheus.yml): rstorm-nimbus,
// rstorm-supervisor and rstorm-worker from the file service discovery files
// nimbus-*.json, supervisor-*.json and workers-*.json in `sd_dir`, plus
// `static_targets` under job rstorm-local (e.g. a local-mode runtime). A file
// SD target's scheme is its __scheme__ label (https for an endpoint with TLS);
// the CA and basic authentication options apply to every job.
//
// Thread contract: thread-compatible; query() may be called from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "rstorm/status.hpp"

namespace rstorm::metrics {

struct PrometheusServerOptions {
  std::string binary = "/usr/bin/prometheus";
  std::filesystem::path work_dir;            // REQUIRES: set; config, data and log go here
  std::string host = "127.0.0.1";
  int port = 0;                              // 0: a free port
  std::string sd_dir;                        // empty: no file service discovery
  std::vector<std::string> static_targets;   // host:port
  std::string static_topology;               // topology label of the static targets
  std::string static_scheme = "http";        // scheme of the static targets: "http" or "https"
  // Scraping endpoints with storm.metrics.tls.* and .auth.* set; empty: none.
  std::string tls_ca_file;                   // tls_config.ca_file: the endpoints' CA bundle
  bool tls_insecure_skip_verify = false;     // tls_config.insecure_skip_verify
  std::string basic_auth_user;               // basic_auth.username
  std::string basic_auth_password_file;      // basic_auth.password_file
  std::chrono::seconds scrape_interval{5};   // default 5 s
  std::chrono::milliseconds start_timeout{30000};
};

// The Prometheus config text for these options.
std::string prometheus_config(const PrometheusServerOptions& options);

class PrometheusServer {
 public:
  // Starts the server and waits until /-/ready answers. Fails naming the
  // binary and the log's tail.
  static api::Result<std::unique_ptr<PrometheusServer>> start(PrometheusServerOptions options);
  ~PrometheusServer();
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  void stop();
  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  const std::string& host() const { return options_.host; }
  std::string url() const { return "http://" + options_.host + ":" + std::to_string(port_); }

  // GET /api/v1/query?query=<promql>: the JSON body (status 200 or 400).
  api::Result<std::string> query(const std::string& promql) const;

 private:
  explicit PrometheusServer(PrometheusServerOptions options) : options_(std::move(options)) {}
  PrometheusServerOptions options_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_loopback_port();

}  // namespace rstorm::metrics
