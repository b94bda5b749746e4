#include "local_ui.hpp"

#include <thread>

#include "nimbus/topology_structure.hpp"
#include "rstorm/worker/topology_runtime.hpp"

namespace rstorm::cli {

namespace {

constexpr const char* kNode = "local";
constexpr const char* kHost = "127.0.0.1";

std::map<std::string, thrift::ConfigEntry> config_entries(const Config& config) {
  std::map<std::string, thrift::ConfigEntry> out;
  for (const auto& [key, entry] : config.entries()) {
    thrift::ConfigEntry e;
    e.value_yaml = entry.value.to_string();
    e.origin = entry.origin;
    out[key] = e;
  }
  return out;
}

double memory_of(const thrift::ComponentDef& c) {
  return c.resources.onheap_mb + c.resources.offheap_mb;
}

}  // namespace

LocalUiBackend::LocalUiBackend(worker::TopologyRuntime& runtime, const Topology& topology,
                               std::string name, const Config& config, int metrics_port,
                               std::atomic<bool>* stop)
    : runtime_(runtime),
      structure_(nimbus::structure_to_thrift(name, topology.spec())),
      name_(std::move(name)),
      config_(config_entries(config)),
      metrics_port_(metrics_port),
      stop_(stop) {}

Status LocalUiBackend::check(const std::string& id) const {
  if (id == name_) return Status::ok();
  return Status(ErrorCode::kNotFound,
                "topology '" + id + "' is not running here (this process runs '" + name_ + "')");
}

thrift::TopologySummary LocalUiBackend::summary() const {
  thrift::TopologySummary s;
  s.id = name_;
  s.name = name_;
  {
    std::lock_guard lock(mutex_);
    s.status = status_;
  }
  s.num_workers = 1;
  s.num_executors = nimbus::executor_count(structure_);
  s.num_tasks = nimbus::task_count(structure_);
  s.uptime_secs = std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::steady_clock::now() - started_)
                      .count();
  for (const auto& c : structure_.components) {
    s.requested_memory_mb += memory_of(c) * c.parallelism;
    s.requested_cpu += c.resources.cpu_pcore_percent * c.parallelism;
  }
  s.assigned_memory_mb = s.requested_memory_mb;
  s.assigned_cpu = s.requested_cpu;
  s.assignment_version = 1;
  return s;
}

Result<thrift::ClusterSummary> LocalUiBackend::cluster_info() {
  thrift::ClusterSummary out;
  const thrift::TopologySummary t = summary();
  thrift::SupervisorSummary s;
  s.info.id = kNode;
  s.info.host = kHost;
  s.info.rack = "local";
  s.info.memory_capacity_mb = t.requested_memory_mb;
  s.info.cpu_capacity = 100.0 * std::max(1u, std::thread::hardware_concurrency());
  s.info.slots = {metrics_port_};
  s.info.used_slots = {metrics_port_};
  s.info.version = "0.1.0";
  s.used_memory_mb = t.assigned_memory_mb;
  s.used_cpu = t.assigned_cpu;
  s.num_used_workers = 1;
  s.uptime_secs = t.uptime_secs;
  out.supervisors.push_back(s);
  out.topologies.push_back(t);
  thrift::NimbusSummary n;
  n.host = "local mode";
  n.port = 0;
  n.is_leader = true;
  n.uptime_secs = t.uptime_secs;
  n.version = "0.1.0";
  out.nimbuses.push_back(n);
  return out;
}

Result<thrift::TopologyInfo> LocalUiBackend::topology_info(const std::string& id) {
  if (Status s = check(id); !s) return s;
  thrift::TopologyInfo info;
  info.summary = summary();
  info.structure = structure_;
  info.config = config_;
  for (const auto& e : runtime_.executors()) {
    const auto& plan = e->plan();
    if (plan.tasks.empty()) continue;
    thrift::ExecutorSummary x;
    x.executor.task_start = plan.tasks.front().value;
    x.executor.task_end = plan.tasks.back().value;
    x.executor.component = plan.component->id;
    x.slot.node_id = kNode;
    x.slot.port = metrics_port_;
    x.host = kHost;
    x.uptime_secs = info.summary.uptime_secs;
    info.executors.push_back(x);
    for (const auto& r : e->recent_errors()) {
      thrift::ErrorInfo err;
      err.component = plan.component->id;
      err.message = r.message;
      err.time_ms = r.time_ms;
      err.host = kHost;
      err.port = metrics_port_;
      err.task_id = r.task.value;
      info.errors.push_back(err);
    }
  }
  return info;
}

Result<thrift::TopologyPlacement> LocalUiBackend::placement(const std::string& id) {
  auto info = topology_info(id);
  if (!info) return info.status();
  thrift::TopologyPlacement out;
  out.topology_id = name_;
  out.scheduler = "local mode (one process)";
  out.assignment.topology_id = name_;
  out.assignment.node_hosts[kNode] = kHost;
  out.assignment.version = 1;
  std::map<std::string, const thrift::ComponentDef*> components;
  for (const auto& c : structure_.components) components[c.id] = &c;
  for (const auto& e : info->executors) {
    thrift::ExecutorAssignment a;
    a.executor = e.executor;
    a.slot = e.slot;
    if (auto it = components.find(e.executor.component); it != components.end()) {
      a.resources = it->second->resources;
    } else {
      a.resources.onheap_mb = 0;
      a.resources.cpu_pcore_percent = 0;
    }
    out.assignment.executors.push_back(a);
  }
  auto cluster = cluster_info();
  thrift::NodeUsage n;
  n.node_id = kNode;
  n.host = kHost;
  n.rack = "local";
  n.memory_used_mb = info->summary.assigned_memory_mb;
  n.memory_capacity_mb = cluster->supervisors.front().info.memory_capacity_mb;
  n.cpu_used = info->summary.assigned_cpu;
  n.cpu_capacity = cluster->supervisors.front().info.cpu_capacity;
  n.used_ports = {metrics_port_};
  out.nodes.push_back(n);
  // Every edge stays in this one process.
  for (const auto& c : structure_.components) out.network.same_worker += static_cast<std::int64_t>(c.inputs.size());
  return out;
}

Status LocalUiBackend::activate(const std::string& name) { return set_active(name, true); }

Status LocalUiBackend::deactivate(const std::string& name) { return set_active(name, false); }

Status LocalUiBackend::set_active(const std::string& name, bool active) {
  if (Status s = check(name); !s) return s;
  std::lock_guard lock(mutex_);
  if (status_ == thrift::TopologyStatus::KILLED) {
    return Status(ErrorCode::kInvalidArgument, "topology '" + name + "' is being killed");
  }
  if (active) {
    runtime_.activate();
  } else {
    runtime_.deactivate();
  }
  status_ = active ? thrift::TopologyStatus::ACTIVE : thrift::TopologyStatus::INACTIVE;
  return Status::ok();
}

Status LocalUiBackend::kill(const std::string& name, std::optional<int>) {
  if (Status s = check(name); !s) return s;
  {
    std::lock_guard lock(mutex_);
    status_ = thrift::TopologyStatus::KILLED;
  }
  stop_->store(true);  // the run ends as on Ctrl-C
  return Status::ok();
}

Status LocalUiBackend::rebalance(const std::string& name, const thrift::RebalanceOptions&) {
  if (Status s = check(name); !s) return s;
  return Status(ErrorCode::kInvalidArgument,
                "local mode cannot rebalance '" + name +
                    "': its executors are fixed for the run (rebalance on a cluster, see "
                    "`rstorm dev-cluster`)");
}

Result<std::string> LocalUiBackend::scrape(const std::string& host, int port) {
  return ui::scrape_worker_metrics(host, port);
}

}  // namespace rstorm::cli
