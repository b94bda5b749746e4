// MetricsEndpoint: what a daemon (nimbus, supervisor, worker) needs to be
// scraped: a Registry, its /metrics server on host:port (HTTPS and basic
// authentication as `security` says), the process's CPU and memory, and
// optionally its own file service discovery file (removed again when the
// endpoint goes away).
//
// Thread contract: construct/destroy on the owner's thread; registry() is
// thread-safe.
#pragma once

#include <memory>
#include <string>

#include "common/metrics/exposer.hpp"
#include "common/metrics/file_sd.hpp"
#include "common/metrics/metrics.hpp"
#include "rstorm/config.hpp"
#include "rstorm/status.hpp"

namespace rstorm::metrics {

struct EndpointOptions {
  std::string host = "127.0.0.1";  // storm.metrics.host
  int port = 0;                    // 0: a free port
  // Labels of the process metrics, e.g. {{"role", "nimbus"}}.
  Labels process_labels;
  // Default: plain HTTP, no authentication (server_security_from_config()).
  ServerSecurity security;
  // Where to announce this endpoint (file SD); empty: nowhere. With TLS the
  // entry also has __scheme__="https" (sd_labels_for()).
  std::string sd_file;
  Labels sd_labels;
};

class MetricsEndpoint {
 public:
  // Fails naming host:port, or the SD file that cannot be written.
  static api::Result<std::unique_ptr<MetricsEndpoint>> start(EndpointOptions options);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  Registry& registry() { return registry_; }
  const MetricsServer& server() const { return *server_; }

 private:
  MetricsEndpoint() = default;
  EndpointOptions options_;
  Registry registry_;
  std::unique_ptr<MetricsServer> server_;
  CollectorHandle process_;
};

// `labels` plus what Prometheus needs to scrape an endpoint guarded by
// `security` that file SD can carry: __scheme__="https" with TLS. (Basic
// authentication and the CA are per scrape job: conf/prometheus/prometheus.yml.)
Labels sd_labels_for(const ServerSecurity& security, Labels labels);

// storm.metrics.sd.dir, or <storm.local.dir>/metrics-sd when it is null.
std::string metrics_sd_dir(const Config& config);

}  // namespace rstorm::metrics
