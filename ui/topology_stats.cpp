#include "ui/topology_stats.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include "ui/prometheus_text.hpp"

namespace rstorm::ui {

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int to_int(const std::string& s, int fallback) {
  try {
    return std::stoi(s);
  } catch (const std::exception&) {
    return fallback;
  }
}

// Counter fields of ExecutorCounters by metric family.
double* counter_field(ExecutorCounters& c, const std::string& name) {
  if (name == "rstorm_tuples_emitted_total") return &c.emitted;
  if (name == "rstorm_tuples_transferred_total") return &c.transferred;
  if (name == "rstorm_tuples_acked_total") return &c.acked;
  if (name == "rstorm_tuples_failed_total") return &c.failed;
  if (name == "rstorm_tuples_executed_total") return &c.executed;
  if (name == "rstorm_task_errors_total") return &c.errors;
  if (name == "rstorm_backpressure_throttled_seconds_total") return &c.throttled_seconds;
  if (name == "rstorm_backpressure_wait_seconds_total") return &c.wait_seconds;
  return nullptr;
}

double minus(double now, double then) { return now >= then ? now - then : now; }

}  // namespace

void add_worker_metrics(const std::string& text, const std::string& worker, TopologySample& out) {
  const PromParse parsed = parse_prometheus_text(text);
  // User histograms arrive as name_sum and name_count; keyed to merge them.
  std::map<std::tuple<std::string, std::string, int>, UserMetricValue> user;
  for (const PromSample& s : parsed.samples) {
    const std::string component = s.label("component");
    if (s.name.rfind("rstorm_", 0) == 0) {
      if (s.name == "rstorm_transport_peer_tuples_sent_total") {
        out.peer_sent[{worker, s.label("peer")}] += s.value;
        continue;
      }
      if (component.empty()) continue;
      if (s.name == "rstorm_execute_latency_seconds_sum") {
        out.latency[component].execute_sum += s.value;
      } else if (s.name == "rstorm_execute_latency_seconds_count") {
        out.latency[component].execute_count += s.value;
      } else if (s.name == "rstorm_complete_latency_seconds_sum") {
        out.latency[component].complete_sum += s.value;
      } else if (s.name == "rstorm_complete_latency_seconds_count") {
        out.latency[component].complete_count += s.value;
      }
      const std::string executor = s.label("executor");
      if (executor.empty()) continue;
      ExecutorCounters& c = out.executors[{component, to_int(executor, -1)}];
      if (double* field = counter_field(c, s.name)) {
        *field += s.value;
      } else if (s.name == "rstorm_receive_queue_depth_batches") {
        c.queue_depth = s.value;
      } else if (s.name == "rstorm_receive_queue_capacity_batches") {
        c.queue_capacity = s.value;
      } else if (s.name == "rstorm_executor_fused") {
        c.fused = s.value > 0;
      }
      continue;
    }
    // A task's own metric (rstorm/metrics.hpp): labelled with its task.
    const std::string task = s.label("task");
    if (component.empty() || task.empty() || ends_with(s.name, "_bucket")) continue;
    std::string family = s.name;
    bool is_sum = false;
    bool is_count = false;
    for (std::string_view suffix : {std::string_view("_sum"), std::string_view("_count")}) {
      const std::string base = s.name.substr(0, s.name.size() - std::min(s.name.size(), suffix.size()));
      if (ends_with(s.name, suffix) && parsed.types.count(base) &&
          parsed.types.at(base) == "histogram") {
        family = base;
        is_sum = suffix == "_sum";
        is_count = !is_sum;
      }
    }
    UserMetricValue& m = user[{family, component, to_int(task, 0)}];
    m.name = family;
    m.component = component;
    m.task = to_int(task, 0);
    auto type = parsed.types.find(family);
    m.type = type == parsed.types.end() ? "untyped" : type->second;
    if (is_sum) {
      m.sum = s.value;
    } else if (is_count) {
      m.count = s.value;
    } else {
      m.value = s.value;
    }
  }
  for (auto& [key, m] : user) out.user.push_back(std::move(m));
}

TopologySample sample_topology(const thrift::TopologyInfo& info, int metrics_port_offset,
                               const ScrapeFunction& scrape) {
  TopologySample out;
  std::set<std::pair<std::string, int>> workers;
  for (const auto& e : info.executors) {
    if (!e.host.empty() && e.slot.port > 0) workers.insert({e.host, e.slot.port});
  }
  for (const auto& [host, port] : workers) {
    const std::string worker = host + ":" + std::to_string(port);
    auto text = scrape(host, port + metrics_port_offset);
    if (!text) {
      out.unreachable.push_back(worker + ": " + text.status().message());
      continue;
    }
    add_worker_metrics(*text, worker, out);
  }
  out.time = Clock::now();
  return out;
}

int sum_component(const TopologySample& sample, const std::string& component,
                  ExecutorCounters* sum) {
  int executors = 0;
  for (auto it = sample.executors.lower_bound({component, std::numeric_limits<int>::min()});
       it != sample.executors.end() && it->first.first == component; ++it) {
    const ExecutorCounters& e = it->second;
    ++executors;
    sum->emitted += e.emitted;
    sum->transferred += e.transferred;
    sum->acked += e.acked;
    sum->failed += e.failed;
    sum->executed += e.executed;
    sum->errors += e.errors;
    sum->throttled_seconds += e.throttled_seconds;
    sum->wait_seconds += e.wait_seconds;
  }
  return executors;
}

std::vector<ComponentTotals> component_totals(const thrift::TopologyStructure& structure,
                                              const TopologySample& sample) {
  std::vector<ComponentTotals> out;
  for (const auto& c : structure.components) {
    if (c.id.starts_with("__")) continue;
    ComponentTotals t;
    t.id = c.id;
    t.spout = c.kind == thrift::ComponentKind::SPOUT;
    t.executors = sum_component(sample, c.id, &t.counts);
    out.push_back(std::move(t));
  }
  return out;
}

std::string render_counts_text(const std::vector<ComponentTotals>& totals,
                               const TopologySample& sample) {
  auto count = [](double v) { return std::to_string(static_cast<long long>(v)); };
  std::string out;
  for (const ComponentTotals& t : totals) {
    if (t.executors == 0) continue;
    out += "  " + t.id + " (" + (t.spout ? "spout" : "bolt") + ", " + std::to_string(t.executors) +
           (t.executors == 1 ? " executor): " : " executors): ");
    if (!t.spout) out += "executed " + count(t.counts.executed) + ", ";
    out += "emitted " + count(t.counts.emitted) + ", acked " + count(t.counts.acked) +
           ", failed " + count(t.counts.failed);
    if (t.counts.errors > 0) out += ", errors " + count(t.counts.errors);
    out += "\n";
  }
  for (const std::string& why : sample.unreachable) out += "  no counts from worker " + why + "\n";
  if (out.empty()) return out;
  return "Counts (since each worker started, read from its /metrics now):\n" + out;
}

TopologySample difference(const TopologySample& now, const TopologySample& then) {
  TopologySample out = now;
  for (auto& [key, c] : out.executors) {
    auto it = then.executors.find(key);
    if (it == then.executors.end()) continue;
    const ExecutorCounters& t = it->second;
    if (c.emitted < t.emitted || c.acked < t.acked || c.executed < t.executed) continue;  // restarted
    c.emitted = minus(c.emitted, t.emitted);
    c.transferred = minus(c.transferred, t.transferred);
    c.acked = minus(c.acked, t.acked);
    c.failed = minus(c.failed, t.failed);
    c.executed = minus(c.executed, t.executed);
    c.errors = minus(c.errors, t.errors);
    c.throttled_seconds = minus(c.throttled_seconds, t.throttled_seconds);
    c.wait_seconds = minus(c.wait_seconds, t.wait_seconds);
  }
  for (auto& [component, l] : out.latency) {
    auto it = then.latency.find(component);
    if (it == then.latency.end() || l.execute_count < it->second.execute_count ||
        l.complete_count < it->second.complete_count) {
      continue;
    }
    l.execute_sum = minus(l.execute_sum, it->second.execute_sum);
    l.execute_count = minus(l.execute_count, it->second.execute_count);
    l.complete_sum = minus(l.complete_sum, it->second.complete_sum);
    l.complete_count = minus(l.complete_count, it->second.complete_count);
  }
  for (auto& [key, sent] : out.peer_sent) {
    auto it = then.peer_sent.find(key);
    if (it != then.peer_sent.end()) sent = minus(sent, it->second);
  }
  return out;
}

StatsHistory::StatsHistory(std::chrono::seconds retention, std::chrono::seconds coarse_step)
    : retention_(retention), coarse_step_(coarse_step) {}

void StatsHistory::record(const std::string& topology_id, TopologySample sample) {
  std::lock_guard lock(mutex_);
  auto& list = samples_[topology_id];
  const Clock::time_point now = sample.time;
  list.push_back(std::move(sample));
  // Older than retention: dropped. Older than 10 minutes: one per coarse step.
  const auto fine_since = now - std::chrono::minutes(10);
  std::vector<TopologySample> kept;
  kept.reserve(list.size());
  for (auto& s : list) {
    if (s.time < now - retention_) continue;
    if (s.time < fine_since && !kept.empty() && s.time - kept.back().time < coarse_step_) continue;
    kept.push_back(std::move(s));
  }
  list = std::move(kept);
}

bool StatsHistory::has(const std::string& topology_id) const {
  std::lock_guard lock(mutex_);
  auto it = samples_.find(topology_id);
  return it != samples_.end() && !it->second.empty();
}

void StatsHistory::retain(const std::set<std::string>& live) {
  std::lock_guard lock(mutex_);
  for (auto it = samples_.begin(); it != samples_.end();) {
    it = live.count(it->first) ? std::next(it) : samples_.erase(it);
  }
}

std::optional<WindowStats> StatsHistory::window(const std::string& topology_id,
                                                std::int64_t window_secs,
                                                std::int64_t uptime_secs) const {
  std::lock_guard lock(mutex_);
  auto it = samples_.find(topology_id);
  if (it == samples_.end() || it->second.empty()) return std::nullopt;
  const auto& list = it->second;
  WindowStats out;
  out.latest = list.back();
  if (window_secs <= 0 || uptime_secs <= window_secs) {
    out.counts = list.back();
    out.seconds = static_cast<double>(std::max<std::int64_t>(uptime_secs, 0));
    return out;
  }
  const auto since = list.back().time - std::chrono::seconds(window_secs);
  const TopologySample* base = &list.back();
  for (const auto& s : list) {
    if (s.time >= since) {
      base = &s;
      break;
    }
  }
  if (base == &list.back()) {
    // No older sample yet (the UI just started): the counts since the topology started.
    out.counts = list.back();
    out.seconds = static_cast<double>(uptime_secs);
    return out;
  }
  out.counts = difference(list.back(), *base);
  out.seconds = std::chrono::duration<double>(list.back().time - base->time).count();
  return out;
}

}  // namespace rstorm::ui
