// SupervisorMetrics: a supervisor's /metrics and its file service discovery.
//
// Families (labels node, rack): rstorm_supervisor_slots, rstorm_supervisor_slots_used,
// rstorm_supervisor_worker_restarts_total{topology} (worker processes started again for a
// slot after one exited or stopped heartbeating), plus the process's CPU and memory
// (role="supervisor").
//
// File SD: supervisor-<id>.json (this supervisor) and workers-<id>.json (one
// target per worker: host:(slot port + worker.metrics.port.offset), labels
// topology, topology_id, node, rack, port), rewritten within `sd_period` of a
// worker starting or going away, removed on stop(). With TLS both carry
// __scheme__="https": workers read the same storm.metrics.* keys.
//
// Thread contract: start/stop from the owning thread; owns one thread that
// polls Supervisor::workers() (thread-safe) for the SD file.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/metrics/endpoint.hpp"
#include "supervisor/supervisor.hpp"

namespace rstorm::supervisor {

struct SupervisorMetricsOptions {
  std::string host = "127.0.0.1";  // storm.metrics.host
  int port = 0;                    // supervisor.metrics.port (0: a free port)
  // storm.metrics.tls.* and .auth.* (server_security_from_config); default: plain HTTP, no auth.
  metrics::ServerSecurity security;
  std::string sd_dir;              // storm.metrics.sd.dir resolved; empty: no SD files
  int worker_port_offset = 1000;   // worker.metrics.port.offset
  std::string rack;                // supervisor.rack
  std::string worker_host = "127.0.0.1";  // storm.local.hostname: where workers listen
  std::chrono::milliseconds sd_period{500};  // default 0.5 s
};

class SupervisorMetrics {
 public:
  // REQUIRES: `supervisor` started; it outlives this object.
  static api::Result<std::unique_ptr<SupervisorMetrics>> start(Supervisor& supervisor,
                                                               SupervisorMetricsOptions options);
  ~SupervisorMetrics();  // stop()
  void stop();

  int port() const { return endpoint_->server().port(); }
  std::string workers_sd_file() const;

 private:
  SupervisorMetrics(Supervisor& supervisor, SupervisorMetricsOptions options)
      : supervisor_(supervisor), options_(std::move(options)) {}
  void collect(metrics::Snapshot& out);
  void sd_loop(std::stop_token stop);
  void write_workers_sd();

  Supervisor& supervisor_;
  const SupervisorMetricsOptions options_;
  std::unique_ptr<metrics::MetricsEndpoint> endpoint_;
  metrics::CollectorHandle collector_;

  std::mutex mutex_;
  // (topology id, port) -> launches seen; restarts of slots gone are kept in retired_.
  std::map<std::pair<std::string, int>, int> launches_;  // GUARDED_BY(mutex_)
  std::map<std::string, double> retired_;                // GUARDED_BY(mutex_) topology -> restarts
  std::string last_sd_;                                  // sd thread only
  std::condition_variable_any wake_;
  std::jthread sd_thread_;
};

// "wc-1700000000" or "wc-1700000000-2" (nimbus's topology ids) -> "wc".
std::string topology_name_of(const std::string& topology_id);

}  // namespace rstorm::supervisor
