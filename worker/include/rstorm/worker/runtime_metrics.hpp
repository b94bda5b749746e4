// RuntimeMetrics: the Prometheus families of one running topology's
// executors, computed at scrape time from their ExecutorStats and
// ReceiveQueues (the hot path only bumps its relaxed counters).
//
// Series and labels (bounded: no per-tuple, per-stream or per-value label):
//  - per executor {topology, component, executor=<first task id>}:
//    rstorm_tuples_{emitted,transferred,acked,failed,executed}_total,
//    rstorm_task_errors_total, rstorm_receive_queue_depth_batches,
//    rstorm_receive_queue_capacity_batches, rstorm_backpressure_waits_total,
//    and for spouts rstorm_backpressure_active, rstorm_backpressure_throttled_seconds_total,
//    rstorm_spout_pending_tuples;
//  - per component {topology, component}: rstorm_execute_latency_seconds
//    (bolts, sampled 1 in 32 executes) and rstorm_complete_latency_seconds
//    (spouts, every acked tree) histograms, the executors' buckets summed.
// Extra labels given at construction (e.g. node, port) are added to every series.
//
// Thread contract: construct and destroy on the owner's thread; the source is
// called on the metrics server's thread during a scrape, so it must be safe to
// call while the executors run, and stay valid until the destructor returns
// (after which it is never called again).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/metrics/endpoint.hpp"
#include "common/metrics/metrics.hpp"
#include "rstorm/worker/executor.hpp"

namespace rstorm::worker {

// Calls its argument once for each executor run here.
using ExecutorVisitor = std::function<void(const Executor&)>;
using ExecutorSource = std::function<void(const ExecutorVisitor&)>;

class RuntimeMetrics {
 public:
  RuntimeMetrics(metrics::Registry& registry, std::string topology, ExecutorSource source,
                 metrics::Labels extra_labels = {});
  RuntimeMetrics(const RuntimeMetrics&) = delete;
  RuntimeMetrics& operator=(const RuntimeMetrics&) = delete;

 private:
  metrics::CollectorHandle handle_;
};

// A worker process's /metrics: its executors (RuntimeMetrics) and its CPU and
// memory (role="worker"), on host:port (storm.metrics.host, slot port +
// worker.metrics.port.offset). Prometheus finds it through the workers-<id>.json
// file its supervisor writes, which adds node, rack and port labels.
class WorkerMetrics {
 public:
  // Fails naming host:port when it cannot listen. `source` as for RuntimeMetrics;
  // `security` as storm.metrics.tls.* and .auth.* say (default: plain HTTP, no auth).
  static api::Result<std::unique_ptr<WorkerMetrics>> start(
      const std::string& host, int port, const std::string& topology, ExecutorSource source,
      const metrics::ServerSecurity& security = {});
  int port() const { return endpoint_->server().port(); }
  metrics::Registry& registry() { return endpoint_->registry(); }
  // Another scrape-time collector (e.g. the transport's counters), removed
  // with this object.
  void add(metrics::Collector collector) {
    extra_.emplace_back(endpoint_->registry(), std::move(collector));
  }

 private:
  WorkerMetrics() = default;
  std::unique_ptr<metrics::MetricsEndpoint> endpoint_;
  std::unique_ptr<RuntimeMetrics> runtime_;
  std::vector<metrics::CollectorHandle> extra_;  // destroyed first
};

// What RuntimeMetrics writes at each scrape (exposed for tests and benches).
void collect_executor_metrics(metrics::Snapshot& out, const std::string& topology,
                              const ExecutorSource& source, const metrics::Labels& extra_labels);

}  // namespace rstorm::worker
