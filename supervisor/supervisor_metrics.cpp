#include "supervisor/supervisor_metrics.hpp"

#include <regex>

namespace rstorm::supervisor {
std::string topology_name_of(const std::string& id) {
  static const std::regex kId(R"(^(.+)-[0-9]{9,}(-[0-9]+)?$)");
  std::smatch m;
  if (std::regex_match(id, m, kId)) return m[1].str();
  return id;  // not an id nimbus made: keep it whole
}

api::Result<std::unique_ptr<SupervisorMetrics>> SupervisorMetrics::start(
    Supervisor& supervisor, SupervisorMetricsOptions options) {
  std::unique_ptr<SupervisorMetrics> m(new SupervisorMetrics(supervisor, std::move(options)));
  const auto& o = m->options_;
  metrics::EndpointOptions e;
  e.host = o.host;
  e.port = o.port;
  e.security = o.security;
  e.process_labels = {{"role", "supervisor"}};
  if (!o.sd_dir.empty()) {
    e.sd_file = o.sd_dir + "/supervisor-" + supervisor.id() + ".json";
    e.sd_labels = {{"role", "supervisor"}, {"node", supervisor.id()}, {"rack", o.rack}};
  }
  auto endpoint = metrics::MetricsEndpoint::start(std::move(e));
  if (!endpoint.ok()) return endpoint.status();
  m->endpoint_ = std::move(endpoint).value();
  SupervisorMetrics* self = m.get();
  m->collector_ = metrics::CollectorHandle(m->endpoint_->registry(),
                                           [self](metrics::Snapshot& out) { self->collect(out); });
  if (!o.sd_dir.empty()) {
    m->write_workers_sd();
    m->sd_thread_ = std::jthread([self](std::stop_token stop) { self->sd_loop(stop); });
  }
  return m;
}

SupervisorMetrics::~SupervisorMetrics() { stop(); }

void SupervisorMetrics::stop() {
  if (sd_thread_.joinable()) {
    sd_thread_.request_stop();
    wake_.notify_all();
    sd_thread_.join();
  }
  collector_.reset();
  if (!options_.sd_dir.empty()) metrics::remove_file_sd(workers_sd_file());
  endpoint_.reset();
}

std::string SupervisorMetrics::workers_sd_file() const {
  return options_.sd_dir + "/workers-" + supervisor_.id() + ".json";
}

void SupervisorMetrics::collect(metrics::Snapshot& out) {
  const auto info = supervisor_.info();
  const auto workers = supervisor_.workers();
  const metrics::Labels node = {{"node", supervisor_.id()}, {"rack", options_.rack}};
  out.gauge("rstorm_supervisor_slots", "Worker slots of this supervisor", node,
            static_cast<double>(info.slots.size()));
  out.gauge("rstorm_supervisor_slots_used", "Slots of this supervisor running a worker", node,
            static_cast<double>(workers.size()));
  std::map<std::string, double> restarts;
  {
    std::lock_guard lock(mutex_);
    std::map<std::pair<std::string, int>, int> now;
    for (const auto& w : workers) now[{w.topology_id, w.port}] = w.launches;
    for (const auto& [key, launches] : launches_) {
      if (!now.count(key)) retired_[key.first] += std::max(0, launches - 1);
    }
    launches_ = std::move(now);
    restarts = retired_;
    for (const auto& [key, launches] : launches_) restarts[key.first] += std::max(0, launches - 1);
  }
  // A series for every topology seen, and one with no topology so the family
  // exists (value 0) before the first worker.
  restarts.emplace("", 0);
  for (const auto& [topology_id, n] : restarts) {
    metrics::Labels l = node;
    l.emplace_back("topology", topology_id.empty() ? "" : topology_name_of(topology_id));
    out.counter("rstorm_supervisor_worker_restarts_total",
                "Worker processes started again for a slot after one exited or stopped "
                "heartbeating",
                std::move(l), n);
  }
}

void SupervisorMetrics::write_workers_sd() {
  std::vector<metrics::SdTarget> targets;
  for (const auto& w : supervisor_.workers()) {
    metrics::Labels labels = {{"topology", topology_name_of(w.topology_id)},
                              {"topology_id", w.topology_id},
                              {"node", supervisor_.id()},
                              {"rack", options_.rack},
                              {"port", std::to_string(w.port)}};
    targets.push_back(
        {options_.worker_host + ":" + std::to_string(w.port + options_.worker_port_offset),
         metrics::sd_labels_for(options_.security, std::move(labels))});
  }
  const std::string text = metrics::render_file_sd(targets);
  if (text == last_sd_) return;
  if (metrics::write_file_sd(workers_sd_file(), targets).is_ok()) last_sd_ = text;
}

void SupervisorMetrics::sd_loop(std::stop_token stop) {
  std::mutex m;
  while (!stop.stop_requested()) {
    write_workers_sd();
    std::unique_lock lock(m);
    wake_.wait_for(lock, stop, options_.sd_period, [] { return false; });
  }
}

}  // namespace rstorm::supervisor
