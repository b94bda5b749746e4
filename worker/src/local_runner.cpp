#include "rstorm/worker/local_runner.hpp"

#include <cstdio>
#include <map>
#include <random>
#include <thread>

#include <spdlog/sinks/stdout_sinks.h>

#include "common/metrics/exposer.hpp"
#include "common/metrics/process_metrics.hpp"
#include "rstorm/topology_library.hpp"
#include "rstorm/worker/runtime_metrics.hpp"
#include "rstorm/worker/topology_runtime.hpp"

namespace rstorm::worker {
namespace {

std::string rate(double per_sec) {
  char buf[32];
  if (per_sec >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.2fM/s", per_sec / 1e6);
  } else if (per_sec >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.1fk/s", per_sec / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f/s", per_sec);
  }
  return buf;
}

const ComponentStats* find(const TopologyStats* s, const std::string& id) {
  return s ? s->component(id) : nullptr;
}

}  // namespace

std::string render_stats(const TopologyStats& now, const TopologyStats* previous,
                         double interval_secs) {
  std::string out;
  char line[512];
  // Spouts, then bolts, then system components.
  std::vector<const ComponentStats*> order;
  for (int pass = 0; pass < 3; ++pass) {
    for (const auto& c : now.components) {
      const int kind = c.is_spout ? 0 : c.is_system ? 2 : 1;
      if (kind == pass) order.push_back(&c);
    }
  }
  for (const ComponentStats* cp : order) {
    const ComponentStats& c = *cp;
    const ComponentStats* p = find(previous, c.id);
    const std::uint64_t count = c.is_spout ? c.emitted : c.executed;
    const std::uint64_t before = p ? (c.is_spout ? p->emitted : p->executed) : 0;
    const double secs = p ? interval_secs : now.uptime_secs;
    const double r = secs > 0 ? static_cast<double>(count - before) / secs : 0;
    std::snprintf(line, sizeof line,
                  "  %-12s %-8s %12llu (%9s)  emitted %12llu  acked %12llu  failed %8llu  "
                  "errors %llu",
                  c.id.c_str(), c.is_spout ? "emitted" : "executed",
                  static_cast<unsigned long long>(count), rate(r).c_str(),
                  static_cast<unsigned long long>(c.emitted),
                  static_cast<unsigned long long>(c.acked),
                  static_cast<unsigned long long>(c.failed),
                  static_cast<unsigned long long>(c.errors));
    out += line;
    if (c.is_spout && c.complete_latency_ms > 0) {
      std::snprintf(line, sizeof line, "  complete %.2f ms", c.complete_latency_ms);
      out += line;
    }
    if (!c.fused_into.empty()) out += "  fused into " + c.fused_into;
    out += "\n";
  }
  return out;
}

std::string render_user_metrics(const UserMetrics& metrics) {
  struct Sum {
    MetricKind kind = MetricKind::kCounter;
    int tasks = 0;
    double value = 0;       // counters, gauges: the sum over tasks
    std::uint64_t count = 0;  // histograms
    double sum = 0;
  };
  std::map<std::pair<std::string, std::string>, Sum> sums;  // (component, name)
  for (const auto& m : metrics.entries()) {
    Sum& s = sums[{m.component, m.name}];
    s.kind = m.kind;
    ++s.tasks;
    switch (m.kind) {
      case MetricKind::kCounter:
        s.value += static_cast<double>(m.counter->value());
        break;
      case MetricKind::kGauge:
        s.value += m.gauge->value();
        break;
      case MetricKind::kHistogram:
        s.count += m.histogram->count();
        s.sum += m.histogram->sum();
        break;
    }
  }
  if (sums.empty()) return "";
  std::string out = "user metrics, summed over each component's tasks:\n";
  char line[512];
  for (const auto& [key, s] : sums) {
    if (s.kind == MetricKind::kHistogram) {
      std::snprintf(line, sizeof line, "  %-12s %-32s count %llu  sum %.15g  mean %.4g  (%d tasks)\n",
                    key.first.c_str(), key.second.c_str(), static_cast<unsigned long long>(s.count), s.sum,
                    s.count > 0 ? s.sum / static_cast<double>(s.count) : 0.0, s.tasks);
    } else {
      std::snprintf(line, sizeof line, "  %-12s %-32s %.15g  (%s, %d tasks)\n", key.first.c_str(),
                    key.second.c_str(), s.value, s.kind == MetricKind::kCounter ? "counter" : "gauge",
                    s.tasks);
    }
    out += line;
  }
  return out;
}

api::Status run_local(const LocalRunOptions& options, std::ostream& out, TopologyStats* final) {
  auto loaded = load_topology_library(options.library_path);
  if (!loaded.ok()) return loaded.status();
  auto topology = loaded->build(options.config);
  if (!topology.ok()) {
    std::vector<std::string> problems;
    for (const auto& m : topology.status().messages()) {
      problems.push_back("topology '" + loaded->name() + "' in '" + options.library_path +
                         "' is invalid: " + m);
    }
    return api::Status::errors(std::move(problems));
  }
  const std::string name = options.name.empty() ? loaded->name() : options.name;
  // The runtime directly (not LocalCluster) so that /metrics can read its executors.
  std::random_device rd;
  auto created = TopologyRuntime::create(
      name, options.config, *topology,
      std::make_shared<spdlog::logger>("worker", std::make_shared<spdlog::sinks::stderr_sink_mt>()),
      (static_cast<std::uint64_t>(rd()) << 32) ^ rd());
  if (!created.ok()) {
    return api::Status::error("cannot run topology '" + name + "': " + created.status().message());
  }
  std::unique_ptr<TopologyRuntime> runtime = std::move(created).value();
  metrics::Registry registry;
  std::unique_ptr<metrics::MetricsServer> metrics_server;
  if (options.metrics_port >= 0) {
    auto server = metrics::MetricsServer::start(options.metrics_host, options.metrics_port, registry);
    if (!server.ok()) return server.status();
    metrics_server = std::move(server).value();
  }
  runtime->start();
  const TopologyRuntime& rt = *runtime;
  RuntimeMetrics runtime_metrics(registry, name, [&rt](const ExecutorVisitor& visit) {
    for (const auto& e : rt.executors()) visit(*e);
  });
  // Labelled as a worker's are: local mode is one worker of the topology.
  metrics::CollectorHandle process_metrics =
      metrics::add_process_metrics(registry, {{"role", "local"}, {"topology", name}});
  if (metrics_server) {
    out << "rstorm local: metrics at " << metrics_server->url() << std::endl;
    if (options.on_metrics_ready) options.on_metrics_ready(metrics_server->target());
  }
  std::shared_ptr<void> while_running;
  if (options.on_running) while_running = options.on_running(*runtime, *topology, name);
  out << "rstorm local: running '" << name << "' from " << options.library_path << " ("
      << topology->components().size() << " components); "
      << (options.duration.count() > 0
              ? "stops after " + std::to_string(options.duration.count() / 1000.0).substr(0, 5) +
                    " s or on Ctrl-C"
              : std::string("Ctrl-C stops it"))
      << std::endl;

  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto next_report = start + options.report_interval;
  std::optional<TopologyStats> previous;
  auto previous_at = start;
  // Work done so far (spouts' emits, bolts' executes) and when it last grew.
  auto work = [&] {
    std::uint64_t n = 0;
    for (const auto& c : runtime->stats().components) n += c.is_spout ? c.emitted : c.executed;
    return n;
  };
  std::uint64_t last_work = 0;
  auto last_change = start;
  std::string failure;
  auto stopped = [&] {
    if (options.interrupted && options.interrupted->load()) return true;
    failure = runtime->fatal_error();
    if (!failure.empty()) return true;
    if (options.end_when_spouts_finish && runtime->spouts_finished() &&
        runtime->in_flight() == 0) {
      out << "rstorm local: every spout has finished its input and every tree is complete"
          << std::endl;
      return true;
    }
    if (options.until_idle.count() > 0) {
      const std::uint64_t w = work();
      if (w != last_work) {
        last_work = w;
        last_change = clock::now();
      } else if (clock::now() - last_change >= options.until_idle && runtime->in_flight() == 0) {
        out << "rstorm local: nothing moved for "
            << std::chrono::duration<double>(options.until_idle).count()
            << " s and no tree is pending: stopping" << std::endl;
        return true;
      }
    }
    return options.duration.count() > 0 && clock::now() - start >= options.duration;
  };
  while (!stopped()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (clock::now() < next_report) continue;
    std::optional<TopologyStats> s = runtime->stats();
    const double interval = std::chrono::duration<double>(clock::now() - previous_at).count();
    char head[96];
    std::snprintf(head, sizeof head, "[%6.1fs] in flight %llu\n", s->uptime_secs,
                  static_cast<unsigned long long>(s->in_flight));
    out << head << render_stats(*s, previous ? &*previous : nullptr, interval) << std::flush;
    previous = *s;
    previous_at = clock::now();
    next_report += options.report_interval;
  }
  while_running.reset();
  runtime->deactivate();
  const auto kill_deadline = clock::now() + options.kill_wait;
  while (failure.empty() && runtime->in_flight() > 0 && clock::now() < kill_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  runtime->stop();
  // After the drain: the acks of the last trees are in the totals.
  std::optional<TopologyStats> last = runtime->stats();
  if (!failure.empty()) {
    if (options.component_failed) *options.component_failed = true;
    return api::Status::error("topology '" + name + "' cannot run: " + failure);
  }
  {
    char head[128];
    std::snprintf(head, sizeof head, "rstorm local: '%s' stopped after %.1f s; totals and mean rates:\n",
                  name.c_str(), last->uptime_secs);
    out << head << render_stats(*last, nullptr, last->uptime_secs) << render_user_metrics(*runtime->plan().user_metrics)
        << std::flush;
    if (final) *final = *last;
  }
  return api::Status::ok();
}

}  // namespace rstorm::worker
