#include "rstorm/worker/runtime_metrics.hpp"

#include <algorithm>
#include <array>
#include <map>

namespace rstorm::worker {
namespace {

constexpr double kNsPerSecond = 1e9;

double get(const std::atomic<std::uint64_t>& c) {
  return static_cast<double>(c.load(std::memory_order_relaxed));
}

// Executor latency buckets summed over the executors of one component.
struct ComponentLatency {
  std::array<std::uint64_t, LatencyBuckets::kBuckets> counts{};
  std::uint64_t sum_ns = 0;
  bool is_spout = false;
  bool any = false;

  void add(const LatencyBuckets& b, const std::atomic<std::uint64_t>& sum) {
    // Counts and sum are read while the executor may record: each stays
    // monotonic, which is what Prometheus needs; they may disagree by a sample.
    for (std::size_t i = 0; i < counts.size(); ++i) {
      counts[i] += b.counts[i].load(std::memory_order_relaxed);
    }
    sum_ns += sum.load(std::memory_order_relaxed);
    any = true;
  }
};

metrics::Labels with(const metrics::Labels& base, const metrics::Labels& extra) {
  metrics::Labels out = base;
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

}  // namespace

void collect_executor_metrics(metrics::Snapshot& out, const std::string& topology,
                              const ExecutorSource& source, const metrics::Labels& extra_labels) {
  std::map<std::string, ComponentLatency> latency;
  const UserMetrics* user = nullptr;
  source([&](const Executor& e) {
    if (user == nullptr) user = e.topology_plan().user_metrics.get();
    const ExecutorPlan& plan = e.plan();
    const ComponentPlan& component = *plan.component;
    const bool is_spout = component.role == ExecutorRole::kSpout;
    const metrics::Labels labels = with(
        {{"topology", topology},
         {"component", component.id},
         {"executor", plan.tasks.empty() ? std::string("-") : std::to_string(plan.tasks.front().value)}},
        extra_labels);
    const ExecutorStats& s = e.stats();
    out.counter("rstorm_tuples_emitted_total", "Tuples emitted (emit calls)", labels, get(s.emitted));
    out.counter("rstorm_tuples_transferred_total", "Tuples sent to tasks (emits times targets)",
                labels, get(s.transferred));
    out.counter("rstorm_tuples_acked_total",
                "Spouts: tuple trees completed; bolts: inputs acked", labels, get(s.acked));
    out.counter("rstorm_tuples_failed_total",
                "Spouts: tuple trees failed or timed out; bolts: inputs failed", labels,
                get(s.failed));
    if (!is_spout) {
      out.counter("rstorm_tuples_executed_total", "Bolts: inputs executed (not tick tuples)",
                  labels, get(s.executed));
      out.counter("rstorm_tick_tuples_total", "Bolts: tick tuples executed", labels,
                  get(s.ticks));
    }
    out.counter("rstorm_task_errors_total", "Exceptions and reported errors of tasks", labels,
                get(s.errors));
    // The queue's depth and capacity are read-only views; the accessor is
    // not const on Executor.
    const ReceiveQueue& q = const_cast<Executor&>(e).queue();
    out.gauge("rstorm_receive_queue_depth_batches", "Batches waiting in the receive queue",
              labels, static_cast<double>(q.depth()));
    out.gauge("rstorm_receive_queue_capacity_batches", "Capacity of the receive queue in batches",
              labels, static_cast<double>(q.capacity()));
    out.counter("rstorm_backpressure_waits_total",
                "Times a full destination queue made this executor wait", labels,
                get(s.backpressure_waits));
    out.counter("rstorm_backpressure_wait_seconds_total",
                "Time this executor waited for space in a full destination queue", labels,
                get(s.backpressure_wait_ns) / kNsPerSecond);
    out.gauge("rstorm_executor_fused",
              "1 when this executor runs on its producer's thread (topology.fuse.executors)",
              labels, e.head() != nullptr ? 1.0 : 0.0);
    if (is_spout) {
      out.gauge("rstorm_backpressure_active",
                "1 while the spout is throttled by a full queue (next_tuple not called)", labels,
                s.throttled.load(std::memory_order_relaxed) ? 1.0 : 0.0);
      out.counter("rstorm_backpressure_throttled_seconds_total",
                  "Time the spout spent throttled by backpressure", labels,
                  get(s.throttled_ns) / kNsPerSecond);
      out.gauge("rstorm_spout_pending_tuples", "Reliable tuples emitted and not yet acked or failed",
                labels, static_cast<double>(e.in_flight()));
      out.gauge("rstorm_spout_pending_limit",
                "Adaptive bound on the spout's trees in flight (topology.max.spout.pending null); "
                "0 when a fixed bound or none applies",
                labels, get(s.pending_limit));
      out.counter("rstorm_spout_pending_limit_cuts_total",
                  "Times a tree took over half the message timeout and the adaptive bound was halved",
                  labels, get(s.pending_limit_cuts));
    }
    if (e.topology_plan().checkpoint.enabled && component.role != ExecutorRole::kAcker) {
      out.counter("rstorm_checkpoint_parts_total",
                  "Checkpoints: parts (snapshots of a task's keyed state) stored by its tasks",
                  labels, get(s.checkpoint_parts));
      out.counter("rstorm_checkpoint_part_failures_total",
                  "Checkpoints: parts its tasks could not store (the checkpoint is given up)",
                  labels, get(s.checkpoint_part_failures));
      out.counter("rstorm_checkpoint_bytes_total", "Checkpoints: bytes of the parts stored", labels,
                  get(s.checkpoint_bytes));
      out.counter("rstorm_checkpoint_alignment_seconds_total",
                  "Checkpoints: time its tasks held inputs while aligning barriers", labels,
                  get(s.checkpoint_alignment_ns) / 1e9);
      out.counter("rstorm_checkpoint_snapshot_seconds_total",
                  "Checkpoints: time its tasks spent storing their parts", labels,
                  get(s.checkpoint_snapshot_ns) / 1e9);
      if (std::find(plan.tasks.begin(), plan.tasks.end(),
                    e.topology_plan().checkpoint_coordinator) != plan.tasks.end()) {
        const metrics::Labels t = with({{"topology", topology}}, extra_labels);
        out.counter("rstorm_checkpoints_completed_total", "Checkpoints recorded complete", t,
                    get(s.checkpoints_completed));
        out.counter("rstorm_checkpoints_failed_total",
                    "Checkpoints given up (a part failed or did not come in time)", t,
                    get(s.checkpoints_failed));
        out.gauge("rstorm_checkpoint_last_id", "The last complete checkpoint", t,
                  get(s.last_checkpoint_id));
        out.gauge("rstorm_checkpoint_last_completed_timestamp_seconds",
                  "When the last complete checkpoint completed (Unix time)", t,
                  get(s.last_checkpoint_ms) / 1000);
        out.gauge("rstorm_checkpoint_last_duration_seconds",
                  "From the last complete checkpoint's barriers to its last part", t,
                  get(s.last_checkpoint_duration_ns) / 1e9);
        out.gauge("rstorm_checkpoint_last_bytes", "Size of the last complete checkpoint", t,
                  get(s.last_checkpoint_bytes));
      }
    }
    auto& l = latency[component.id];
    l.is_spout = is_spout;
    if (is_spout) {
      l.add(s.complete_latency, s.complete_ns);
    } else if (component.role == ExecutorRole::kBolt) {
      l.add(s.execute_latency, s.execute_ns);
    }
  });
  const auto& bounds = metrics::latency_buckets_seconds();
  for (const auto& [component, l] : latency) {
    if (!l.any) continue;
    const metrics::Labels labels = with({{"topology", topology}, {"component", component}}, extra_labels);
    if (l.is_spout) {
      out.histogram("rstorm_complete_latency_seconds",
                    "Spouts: time from emit to the ack of the whole tuple tree", labels, bounds,
                    l.counts.data(), static_cast<double>(l.sum_ns) / kNsPerSecond);
    } else {
      out.histogram("rstorm_execute_latency_seconds",
                    "Bolts: time in execute() less waits on full queues, one execute in 32 at random", labels, bounds,
                    l.counts.data(), static_cast<double>(l.sum_ns) / kNsPerSecond);
    }
  }
  // What the tasks registered (rstorm/metrics.hpp), per task.
  if (user != nullptr) {
    for (const auto& m : user->entries()) {
      const metrics::Labels labels = with(
          {{"topology", topology}, {"component", m.component}, {"task", std::to_string(m.task.value)}},
          extra_labels);
      const std::string help = m.help.empty() ? "user metric of component " + m.component : m.help;
      switch (m.kind) {
        case MetricKind::kCounter:
          out.counter(m.name, help, labels, static_cast<double>(m.counter->value()));
          break;
        case MetricKind::kGauge:
          out.gauge(m.name, help, labels, m.gauge->value());
          break;
        case MetricKind::kHistogram: {
          const std::vector<std::uint64_t> counts = m.histogram->counts();
          out.histogram(m.name, help, labels, m.histogram->bounds(), counts.data(), m.histogram->sum());
          break;
        }
      }
    }
  }
}

RuntimeMetrics::RuntimeMetrics(metrics::Registry& registry, std::string topology,
                               ExecutorSource source, metrics::Labels extra_labels)
    : handle_(registry, [topology = std::move(topology), source = std::move(source),
                         extra = std::move(extra_labels)](metrics::Snapshot& out) {
        collect_executor_metrics(out, topology, source, extra);
      }) {}

api::Result<std::unique_ptr<WorkerMetrics>> WorkerMetrics::start(
    const std::string& host, int port, const std::string& topology, ExecutorSource source,
    const metrics::ServerSecurity& security) {
  metrics::EndpointOptions o;
  o.host = host;
  o.port = port;
  o.security = security;
  o.process_labels = {{"role", "worker"}, {"topology", topology}};
  auto endpoint = metrics::MetricsEndpoint::start(std::move(o));
  if (!endpoint.ok()) return endpoint.status();
  std::unique_ptr<WorkerMetrics> m(new WorkerMetrics());
  m->endpoint_ = std::move(endpoint).value();
  m->runtime_ = std::make_unique<RuntimeMetrics>(m->endpoint_->registry(), topology, std::move(source));
  return m;
}

}  // namespace rstorm::worker
