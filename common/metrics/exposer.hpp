// MetricsServer: serves a Registry at http://host:port/metrics (prometheus-cpp's
// HTTP server, its own threads). Port 0 picks a free port; port() tells which.
//
// Thread contract: thread-safe after start(). Destroying it stops the server;
// prometheus-cpp takes up to about 2 s to do so after it served a request, so
// keep one per process.
#pragma once

#include <memory>
#include <string>

#include "common/metrics/metrics.hpp"
#include "rstorm/status.hpp"

namespace rstorm::metrics {

class MetricsServer {
 public:
  // Fails naming host and port when it cannot listen (e.g. the port is taken).
  // `registry` is borrowed and must outlive the server.
  static api::Result<std::unique_ptr<MetricsServer>> start(const std::string& host, int port,
                                                           Registry& registry);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  // host:port, as a Prometheus target.
  std::string target() const { return host_ + ":" + std::to_string(port_); }
  std::string url() const { return "http://" + target() + "/metrics"; }

 private:
  struct Impl;
  MetricsServer() = default;
  std::unique_ptr<Impl> impl_;
  std::string host_;
  int port_ = 0;
};

}  // namespace rstorm::metrics
