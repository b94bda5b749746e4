// Nimbus's read-only views: cluster summary, topology info, placement.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>

#include "common/thrift/codec.hpp"
#include "nimbus/nimbus.hpp"
#include "scheduler/network_cost.hpp"

namespace rstorm::nimbus {
namespace {

// Errors kept per topology under errors/<topology-id>, newest kept.
constexpr std::size_t kMaxErrorsPerTopology = 20;

// Node names sort by time: zero-padded ms, then the task and a hash of the
// message, so that two errors of one task in one millisecond both stay and a
// heartbeat that repeats an error does not duplicate it.
std::string error_node_name(const thrift::ErrorInfo& e) {
  std::string time = std::to_string(std::max<std::int64_t>(0, e.time_ms));
  if (time.size() < 15) time.insert(0, 15 - time.size(), '0');
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(std::hash<std::string>()(e.message)));
  return time + "-" + std::to_string(e.task_id) + "-" + hash;
}

}  // namespace

void Nimbus::record_errors(const thrift::SupervisorHeartbeat& heartbeat) {
  for (const auto& w : heartbeat.workers) {
    if (!w.__isset.errors || w.errors.empty()) continue;
    std::vector<std::pair<std::string, const thrift::ErrorInfo*>> fresh;
    {
      std::lock_guard lock(mutex_);
      auto& known = error_nodes_[w.topology_id];
      for (const auto& e : w.errors) {
        std::string name = error_node_name(e);
        if (known.insert(name).second) fresh.emplace_back(std::move(name), &e);
      }
      // Bounded: forgetting a name only costs a kAlreadyExists later.
      while (known.size() > 4 * kMaxErrorsPerTopology) known.erase(known.begin());
    }
    if (fresh.empty()) continue;
    // A killed topology's errors are gone with it; do not bring them back.
    auto alive = store_.exists(paths_.topology(w.topology_id));
    if (!alive || !*alive) continue;
    const std::string dir = paths_.errors(w.topology_id);
    if (Status s = store_.ensure_path(dir); !s) {
      logger_.warn("cannot record errors of {}: {}", w.topology_id, s.message());
      continue;
    }
    for (const auto& [name, e] : fresh) {
      auto created = store_.create(join_path(dir, name), encode_thrift(*e));
      if (!created && created.status().code() != ErrorCode::kAlreadyExists) {
        logger_.warn("cannot record an error of {}: {}", w.topology_id,
                     created.status().message());
      }
    }
    auto names = store_.children(dir);
    if (!names || names->size() <= kMaxErrorsPerTopology) continue;
    for (std::size_t i = 0; i + kMaxErrorsPerTopology < names->size(); ++i) {
      (void)store_.remove(join_path(dir, (*names)[i]));  // children() is sorted: oldest first
    }
  }
}

// Supervisors heartbeat every supervisor.heartbeat.frequency.secs (5): three
// missed beats make one silent.
constexpr std::int64_t kSilentSupervisorMs = 15000;

thrift::TopologySummary Nimbus::summarize(const thrift::TopologyRecord& record) {
  thrift::TopologySummary s;
  s.id = record.id;
  s.name = record.name;
  s.status = record.status;
  s.status_reason = record.status_reason;
  if (record.status == thrift::TopologyStatus::UNSCHEDULABLE &&
      record.resume_status == thrift::TopologyStatus::INACTIVE) {
    s.status_reason += "; deactivated: its spouts stay paused, and it is INACTIVE once placed";
  }
  s.uptime_secs = std::max<std::int64_t>(0, (now() - record.launch_time_ms) / 1000);
  auto loaded = load(record);
  if (loaded) {
    s.num_executors = static_cast<std::int32_t>(loaded->request.executors.size());
    s.num_tasks = 0;
    for (const auto& e : loaded->request.executors) {
      s.num_tasks += e.last_task - e.first_task + 1;
      s.requested_memory_mb += e.onheap_mb + e.offheap_mb;
      s.requested_cpu += e.cpu;
    }
  }
  std::set<std::pair<std::string, int>> workers;
  std::map<std::string, std::string> hosts;
  if (auto node = store_.get(paths_.assignment(record.id))) {
    if (auto a = decode_thrift<thrift::Assignment>(node->data, "Assignment")) {
      hosts = a->node_hosts;
      int ackers = 0;
      for (const auto& e : a->executors) {
        workers.insert({e.slot.node_id, e.slot.port});
        if (e.executor.component == scheduler::kAckerComponent) ++ackers;
      }
      // The ackers the scheduler placed count in both totals, as on the nodes.
      for (const auto& [slot, usage] : worker_usage(record, *a)) {
        s.assigned_memory_mb += usage.memory_mb;
        s.assigned_cpu += usage.cpu;
      }
      if (loaded) {
        if (!loaded->request.acker_executors.has_value()) {
          ackers = static_cast<int>(workers.size());
        }
        s.requested_memory_mb += ackers * loaded->request.acker_onheap_mb;
        s.requested_cpu += ackers * loaded->request.acker_cpu;
      }
      s.num_workers = static_cast<std::int32_t>(workers.size());
      s.assignment_version = a->version;
    }
  }
  if (auto stall = stall_of(record.id)) s.__set_stall(std::move(*stall));
  std::vector<thrift::WorkerFailure> failing = failures_of(record.id);
  // A failure of a slot the topology no longer has (its executors moved,
  // e.g. off a supervisor that stopped) is history, not a failing worker.
  if (!workers.empty()) {
    std::erase_if(failing, [&](const thrift::WorkerFailure& f) {
      return !workers.contains({f.slot.node_id, f.slot.port});
    });
  }
  std::lock_guard lock(mutex_);
  // A worker whose supervisor went silent is not known to run: say so until
  // nimbus moves its executors (once ZooKeeper expires the supervisor).
  const std::int64_t t = now();
  for (const auto& [node, port] : workers) {
    auto beat = supervisor_beats_.find(node);
    if (beat == supervisor_beats_.end() || t - beat->second < kSilentSupervisorMs) continue;
    thrift::WorkerFailure f;
    f.topology_id = record.id;
    f.slot.node_id = node;
    f.slot.port = port;
    f.host = hosts.count(node) ? hosts[node] : node;
    f.exit_status = "unknown";
    f.reason = "its supervisor has not heartbeated for " +
               std::to_string((t - beat->second) / 1000) + " s";
    f.first_time_ms = f.last_time_ms = beat->second;
    failing.push_back(std::move(f));
  }
  if (!failing.empty()) s.__set_failing_workers(std::move(failing));
  if (auto it = last_moved_.find(record.id); it != last_moved_.end()) s.moved_executors = it->second;
  return s;
}

std::vector<thrift::WorkerFailure> Nimbus::failures_of(const std::string& topology_id) {
  const std::int64_t fresh_after = now() - options_.supervisor_timeout.count();
  std::vector<thrift::WorkerFailure> out;
  std::lock_guard lock(mutex_);
  for (const auto& [supervisor, reported] : supervisor_failures_) {
    if (reported.second < fresh_after) continue;
    for (const auto& f : reported.first) {
      if (f.topology_id == topology_id) out.push_back(f);
    }
  }
  return out;
}

std::optional<thrift::StallInfo> Nimbus::stall_of(const std::string& topology_id) {
  // A worker that stopped heartbeating is the failure detector's business: its
  // last report counts for nimbus.task.timeout.secs at most.
  const std::int64_t fresh_after = now() - options_.task_timeout.count();
  auto merge = [](std::vector<std::string>& into, const std::vector<std::string>& from) {
    for (const auto& c : from) {
      if (std::find(into.begin(), into.end(), c) == into.end()) into.push_back(c);
    }
  };
  std::optional<thrift::StallInfo> out;
  std::lock_guard lock(mutex_);
  for (auto it = worker_stalls_.lower_bound(SlotKey{topology_id, "", 0});
       it != worker_stalls_.end() && it->first.topology == topology_id; ++it) {
    const auto& [info, at] = it->second;
    if (at < fresh_after) continue;
    if (!out) out.emplace();
    out->stalled_secs = std::max(out->stalled_secs, info.stalled_secs);
    out->pending += info.pending;
    merge(out->stalled_spouts, info.stalled_spouts);
    merge(out->queued, info.queued);
    merge(out->full_queues, info.full_queues);
  }
  return out;
}

std::map<std::string, std::string> Nimbus::fused_of(const std::string& topology_id) {
  const std::int64_t fresh_after = now() - options_.task_timeout.count();
  std::map<std::string, std::string> out;
  std::lock_guard lock(mutex_);
  for (auto it = worker_fused_.lower_bound(SlotKey{topology_id, "", 0});
       it != worker_fused_.end() && it->first.topology == topology_id; ++it) {
    if (it->second.second >= fresh_after)
      out.insert(it->second.first.begin(), it->second.first.end());
  }
  return out;
}

Result<thrift::ClusterSummary> Nimbus::cluster_info() {
  thrift::ClusterSummary out;
  std::map<std::string, scheduler::NodeUsage> usage;
  {
    std::lock_guard lock(mutex_);
    for (const auto& u : usage_) usage[u.node.value()] = u;
  }
  auto ids = store_.children(paths_.supervisors());
  if (!ids) return ids.status();
  for (const auto& id : *ids) {
    auto node = store_.get(paths_.supervisor(id));
    if (!node) continue;
    auto info = decode_thrift<thrift::SupervisorInfo>(node->data, "SupervisorInfo");
    if (!info) continue;
    thrift::SupervisorSummary s;
    s.info = *info;
    if (auto it = usage.find(id); it != usage.end()) {
      s.used_memory_mb = it->second.memory_used_mb;
      s.used_cpu = it->second.cpu_used;
      s.num_used_workers = it->second.slots_used;
    }
    if (info->start_time_ms > 0)
      s.uptime_secs = std::max<std::int64_t>(0, (now() - info->start_time_ms) / 1000);
    out.supervisors.push_back(std::move(s));
  }
  auto records = all_records();
  if (!records) return records.status();
  for (const auto& r : *records) out.topologies.push_back(summarize(r));
  auto candidates = store_.children(paths_.nimbus_leader());
  if (candidates) {
    bool first = true;
    for (const auto& c : *candidates) {  // sorted: the lowest sequence leads
      auto node = store_.get(join_path(paths_.nimbus_leader(), c));
      if (!node) continue;
      auto n = decode_thrift<thrift::NimbusSummary>(node->data, "NimbusSummary");
      if (!n) continue;
      n->is_leader = first;
      first = false;
      if (n->host == self_.host && n->port == self_.port)
        n->uptime_secs = (now() - start_ms_) / 1000;
      out.nimbuses.push_back(std::move(*n));
    }
  }
  return out;
}

// Seconds since nimbus first heard from the executor's worker; -1 while its
// supervisor sends heartbeats but has not reported that worker yet; the age of
// the assignment when its supervisor reports no workers at all.
std::int64_t Nimbus::executor_uptime(const std::string& topology_id, const thrift::WorkerSlot& slot,
                                     std::int64_t assigned_ms) {
  const std::int64_t t = now();
  std::lock_guard lock(mutex_);
  auto it = worker_started_.find(SlotKey{topology_id, slot.node_id, slot.port});
  if (it != worker_started_.end()) return std::max<std::int64_t>(0, (t - it->second) / 1000);
  if (heartbeating_supervisors_.count(slot.node_id)) return -1;
  return std::max<std::int64_t>(0, (t - assigned_ms) / 1000);
}

Result<thrift::TopologyInfo> Nimbus::topology_info(const std::string& id_or_name) {
  auto found = find_record(id_or_name);
  if (!found) return found.status();
  const thrift::TopologyRecord& record = found->first;
  auto loaded = load(record);
  if (!loaded) return loaded.status();
  thrift::TopologyInfo info;
  info.summary = summarize(record);
  info.__set_structure(loaded->structure);
  info.__set_config(loaded->config);
  if (!record.owner.empty()) info.__set_owner(record.owner);
  if (!loaded->secret.empty()) info.__set_secret(loaded->secret);
  if (auto node = store_.get(paths_.assignment(record.id))) {
    if (auto a = decode_thrift<thrift::Assignment>(node->data, "Assignment")) {
      for (const auto& e : a->executors) {
        thrift::ExecutorSummary s;
        s.executor = e.executor;
        s.__set_slot(e.slot);
        s.host = a->node_hosts[e.slot.node_id];
        s.uptime_secs = executor_uptime(record.id, e.slot, a->assigned_time_ms);
        info.executors.push_back(std::move(s));
      }
    }
  }
  if (auto errors = store_.children(paths_.errors(record.id))) {
    for (const auto& e : *errors) {
      auto node = store_.get(join_path(paths_.errors(record.id), e));
      if (!node) continue;
      if (auto error = decode_thrift<thrift::ErrorInfo>(node->data, "ErrorInfo")) {
        info.errors.push_back(std::move(*error));
      }
    }
  }
  if (auto node = store_.get(paths_.checkpoints(record.id))) {
    if (auto c = decode_thrift<thrift::CheckpointState>(node->data, "CheckpointState")) {
      info.__set_checkpoints(std::move(*c));
    }
  }
  if (auto fused = fused_of(record.id); !fused.empty()) info.__set_fused(std::move(fused));
  return info;
}

Result<thrift::TopologyPlacement> Nimbus::placement(const std::string& id_or_name) {
  auto found = find_record(id_or_name);
  if (!found) return found.status();
  const thrift::TopologyRecord& record = found->first;
  auto loaded = load(record);
  if (!loaded) return loaded.status();
  thrift::TopologyPlacement out;
  out.topology_id = record.id;
  out.scheduler = std::string(scheduler::strategy_name(loaded->request.strategy));
  auto node = store_.get(paths_.assignment(record.id));
  if (!node) return out;  // not placed (yet): see the record's status
  auto a = decode_thrift<thrift::Assignment>(node->data, "Assignment");
  if (!a) return a.status();
  out.__set_assignment(*a);
  if (!loaded->request.acker_executors.has_value()) {
    thrift::ResourceRequest acker;
    acker.onheap_mb = loaded->request.acker_onheap_mb;
    acker.offheap_mb = 0;
    acker.cpu_pcore_percent = loaded->request.acker_cpu;
    out.__set_worker_acker(acker);
  }
  // Those of the placement that put the executors where they are, whichever
  // nimbus made it.
  out.warnings = a->warnings;
  // Racks of the nodes, from their registrations.
  std::map<std::string, std::string> rack_of;
  std::map<std::string, thrift::NodeUsage> nodes;
  for (const auto& e : a->executors) {
    if (rack_of.count(e.slot.node_id)) continue;
    std::string rack = "?";
    if (auto s = store_.get(paths_.supervisor(e.slot.node_id))) {
      if (auto info = decode_thrift<thrift::SupervisorInfo>(s->data, "SupervisorInfo"))
        rack = info->rack;
    }
    rack_of[e.slot.node_id] = rack;
  }
  {
    std::lock_guard lock(mutex_);
    for (const auto& u : usage_) {
      if (!rack_of.count(u.node.value())) continue;
      thrift::NodeUsage n;
      n.node_id = u.node.value();
      n.host = u.host;
      n.rack = u.rack.value();
      n.memory_used_mb = u.memory_used_mb;
      n.memory_capacity_mb = u.memory_capacity_mb;
      n.cpu_used = u.cpu_used;
      n.cpu_capacity = u.cpu_capacity;
      nodes[n.node_id] = n;
    }
  }
  for (const auto& e : a->executors) {
    auto& ports = nodes[e.slot.node_id].used_ports;
    nodes[e.slot.node_id].node_id = e.slot.node_id;
    if (std::find(ports.begin(), ports.end(), e.slot.port) == ports.end())
      ports.push_back(e.slot.port);
  }
  for (auto& [id, n] : nodes) {
    if (n.rack.empty()) n.rack = rack_of[id];
    std::sort(n.used_ports.begin(), n.used_ports.end());
    out.nodes.push_back(n);
  }
  // Network cost of the placement as it is (dense indices per worker, node, rack).
  std::map<std::pair<std::string, std::string>, thrift::WorkerSlot> slots;
  for (const auto& e : a->executors) {
    slots[{e.executor.component, std::to_string(e.executor.task_start)}] = e.slot;
  }
  std::map<std::pair<std::string, int>, std::uint32_t> worker_index;
  std::map<std::string, std::uint32_t> node_index, rack_index;
  std::vector<scheduler::ExecutorLocation> locations;
  bool complete = true;
  for (const auto& e : loaded->request.executors) {
    auto it = slots.find({e.component, std::to_string(e.first_task)});
    if (it == slots.end()) {
      complete = false;
      break;
    }
    const auto& slot = it->second;
    scheduler::ExecutorLocation loc;
    loc.worker =
        worker_index
            .try_emplace({slot.node_id, slot.port}, static_cast<std::uint32_t>(worker_index.size()))
            .first->second;
    loc.node = node_index.try_emplace(slot.node_id, static_cast<std::uint32_t>(node_index.size()))
                   .first->second;
    loc.rack =
        rack_index.try_emplace(rack_of[slot.node_id], static_cast<std::uint32_t>(rack_index.size()))
            .first->second;
    locations.push_back(loc);
  }
  if (complete) {
    auto cost = scheduler::network_cost(loaded->request, locations);
    out.network.same_worker = static_cast<std::int64_t>(cost.same_worker);
    out.network.same_node = static_cast<std::int64_t>(cost.same_node);
    out.network.same_rack = static_cast<std::int64_t>(cost.same_rack);
    out.network.cross_rack = static_cast<std::int64_t>(cost.cross_rack);
  }
  return out;
}

}  // namespace rstorm::nimbus
