#include "nimbus/render.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "scheduler/cluster_state.hpp"

namespace rstorm::nimbus {

std::string time_text(std::int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

namespace {

using nlohmann::json;
using scheduler::format_amount;

std::string status_name(thrift::TopologyStatus::type s) { return thrift::to_string(s); }

std::string bytes_text(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

std::string seconds_text(std::int64_t ms) {
  char buf[32];
  if (ms < 1000) {
    std::snprintf(buf, sizeof buf, "%lld ms", static_cast<long long>(ms));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000.0);
  }
  return buf;
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// "last complete 42 (recovery epoch 3) at ..., 1.2 s ago; 3.4 KiB in 9
// parts, took 15 ms; 2 kept", or "none complete yet (recovery epoch 1)".
std::string checkpoints_text(const thrift::CheckpointState& c) {
  if (c.complete.empty()) {
    return "none complete yet (recovery epoch " + std::to_string(c.epoch) + ")";
  }
  const thrift::CheckpointInfo& last = c.complete.back();
  return "last complete " + std::to_string(last.id) + " (recovery epoch " +
         std::to_string(c.epoch) + ") at " + time_text(last.completed_ms) + ", " +
         seconds_text(std::max<std::int64_t>(0, now_ms() - last.completed_ms)) + " ago; " +
         bytes_text(last.bytes) + " in " + std::to_string(last.tasks) + " parts, took " +
         seconds_text(std::max<std::int64_t>(0, last.completed_ms - last.started_ms)) + "; " +
         std::to_string(c.complete.size()) + " kept";
}

nlohmann::json checkpoints_json(const thrift::CheckpointState& c) {
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& k : c.complete) {
    kept.push_back({{"id", k.id},
                    {"epoch", k.epoch},
                    {"started_ms", k.started_ms},
                    {"completed_ms", k.completed_ms},
                    {"duration_ms", k.completed_ms - k.started_ms},
                    {"bytes", k.bytes},
                    {"tasks", k.tasks}});
  }
  return {{"epoch", c.epoch},
          {"last", kept.empty() ? nlohmann::json(nullptr) : kept.back()},
          {"complete", kept}};
}

std::string executor_label(const thrift::ExecutorInfo& e) {
  return e.component + "[" + std::to_string(e.task_start) +
         (e.task_end != e.task_start ? "-" + std::to_string(e.task_end) : "") + "]";
}

// "no progress for 12 s: 3000 trees pending at sentences; queues full: count, report".
std::string stall_text(const thrift::StallInfo& s) {
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
    return out.empty() ? std::string("none") : out;
  };
  return "no progress for " + std::to_string(s.stalled_secs) + " s: " + std::to_string(s.pending) +
         " trees pending at " + join(s.stalled_spouts) + "; tuples queued at " + join(s.queued) +
         "; queues full: " + join(s.full_queues);
}

// "127.0.0.1:6700: exit code 1, restarted 4 times since 20:31:05 (last 20:31:40): <reason>".
std::string failure_text(const thrift::WorkerFailure& f) {
  std::string out = f.host + ":" + std::to_string(f.slot.port) + " (" + f.slot.node_id + "): " +
                    f.exit_status;
  if (f.restarts > 0) {
    out += ", restarted " + std::to_string(f.restarts) + " times since " +
           time_text(f.first_time_ms) + " (last failure " + time_text(f.last_time_ms) + ")";
  } else {
    out += " at " + time_text(f.last_time_ms);
  }
  if (f.__isset.running_since_ms) out += ", running again since " + time_text(f.running_since_ms);
  return out + ": " + f.reason;
}

// "1 worker failing", "2 workers restarted after a failure", or both.
std::string failing_summary(const thrift::TopologySummary& t) {
  std::size_t running = 0;
  for (const auto& f : t.failing_workers) running += f.__isset.running_since_ms ? 1 : 0;
  const std::size_t failing = t.failing_workers.size() - running;
  auto workers = [](std::size_t n) { return std::to_string(n) + (n == 1 ? " worker" : " workers"); };
  std::string out;
  if (failing > 0) out = workers(failing) + " failing";
  if (running > 0) {
    out += (out.empty() ? workers(running) : ", " + std::to_string(running)) +
           " restarted after a failure";
  }
  return out;
}

// Errors with the same component and message, counted, newest last, with
// the tasks that reported them.
struct ErrorGroup {
  const thrift::ErrorInfo* last = nullptr;
  int count = 0;
  std::set<std::int32_t> tasks;
};
// "3, 5 and 7"; the first five and how many more past those.
std::string tasks_text(const std::set<std::int32_t>& tasks) {
  constexpr std::size_t kListed = 5;
  std::vector<std::string> names;
  for (std::int32_t t : tasks) {
    if (names.size() == kListed) break;
    names.push_back(std::to_string(t));
  }
  if (tasks.size() > kListed) names.push_back(std::to_string(tasks.size() - kListed) + " more");
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

std::vector<ErrorGroup> group_errors(const std::vector<thrift::ErrorInfo>& errors) {
  std::vector<ErrorGroup> out;
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  for (const auto& e : errors) {
    auto [it, added] = index.try_emplace({e.component, e.message}, out.size());
    if (added) out.push_back({});
    ErrorGroup& g = out[it->second];
    if (g.last == nullptr || e.time_ms >= g.last->time_ms) g.last = &e;
    ++g.count;
    g.tasks.insert(e.task_id);
  }
  std::sort(out.begin(), out.end(),
            [](const ErrorGroup& a, const ErrorGroup& b) { return a.last->time_ms < b.last->time_ms; });
  return out;
}

json topology_json(const thrift::TopologySummary& t) {
  json stall = nullptr;
  if (t.__isset.stall) {
    stall = json{{"stalled_secs", t.stall.stalled_secs},
                 {"pending", t.stall.pending},
                 {"stalled_spouts", t.stall.stalled_spouts},
                 {"queued", t.stall.queued},
                 {"full_queues", t.stall.full_queues},
                 {"text", stall_text(t.stall)}};
  }
  json failing = json::array();
  for (const auto& f : t.failing_workers) {
    failing.push_back({{"host", f.host},
                       {"node", f.slot.node_id},
                       {"port", f.slot.port},
                       {"exit_status", f.exit_status},
                       {"reason", f.reason},
                       {"restarts", f.restarts},
                       {"running_since_ms", f.__isset.running_since_ms ? json(f.running_since_ms) : json()},
                       {"first_time_ms", f.first_time_ms},
                       {"last_time_ms", f.last_time_ms}});
  }
  return json{{"id", t.id},
              {"stall", stall},
              {"failing_workers", failing},
              {"assignment_version", t.assignment_version},
              {"moved_executors", t.moved_executors},
              {"name", t.name},
              {"status", status_name(t.status)},
              {"status_reason", t.status_reason},
              {"workers", t.num_workers},
              {"executors", t.num_executors},
              {"tasks", t.num_tasks},
              {"uptime_secs", t.uptime_secs},
              {"requested_memory_mb", t.requested_memory_mb},
              {"assigned_memory_mb", t.assigned_memory_mb},
              {"requested_cpu", t.requested_cpu},
              {"assigned_cpu", t.assigned_cpu}};
}

}  // namespace

std::string render_list_text(const thrift::ClusterSummary& cluster) {
  if (cluster.topologies.empty()) return "No topologies running.\n";
  std::ostringstream out;
  out << "ID                             NAME             STATUS         WORKERS EXECUTORS TASKS "
         "UPTIME\n";
  for (const auto& t : cluster.topologies) {
    char line[512];
    std::snprintf(line, sizeof line, "%-30s %-16s %-14s %7d %9d %5d %llus\n", t.id.c_str(),
                  t.name.c_str(), status_name(t.status).c_str(), t.num_workers, t.num_executors,
                  t.num_tasks, static_cast<unsigned long long>(t.uptime_secs));
    out << line;
    if (!t.status_reason.empty()) out << "    " << t.status_reason << "\n";
    if (t.__isset.stall) out << "    " << stall_text(t.stall) << "\n";
    if (!t.failing_workers.empty()) {
      out << "    " << failing_summary(t) << ": " << failure_text(t.failing_workers.front()) << "\n";
    }
  }
  return out.str();
}

std::string render_list_json(const thrift::ClusterSummary& cluster) {
  json topologies = json::array();
  for (const auto& t : cluster.topologies) topologies.push_back(topology_json(t));
  return json{{"topologies", topologies}}.dump(2) + "\n";
}

std::string render_cluster_text(const thrift::ClusterSummary& cluster) {
  std::ostringstream out;
  out << "Nimbus:\n";
  if (cluster.nimbuses.empty()) out << "  (none registered)\n";
  for (const auto& n : cluster.nimbuses) {
    out << "  " << n.host << ":" << n.port << (n.is_leader ? "  leader" : "  standby") << "\n";
  }
  std::map<std::string, std::vector<const thrift::SupervisorSummary*>> by_rack;
  for (const auto& s : cluster.supervisors) by_rack[s.info.rack].push_back(&s);
  out << "Supervisors: " << cluster.supervisors.size() << "\n";
  for (const auto& [rack, sups] : by_rack) {
    out << "  rack " << rack << "\n";
    for (const auto* s : sups) {
      out << "    " << s->info.id << " (" << s->info.host << ")  memory "
          << format_amount(s->used_memory_mb) << "/" << format_amount(s->info.memory_capacity_mb)
          << " MB  cpu " << format_amount(s->used_cpu) << "/" << format_amount(s->info.cpu_capacity)
          << "  workers " << s->num_used_workers << "/" << s->info.slots.size() << "\n";
      for (const auto& [port, why] : s->info.busy_slots) {
        out << "      port " << port << " not offered: another process listens on it (" << why
            << ")\n";
      }
    }
  }
  out << "Topologies: " << cluster.topologies.size() << "\n";
  return out.str();
}

std::string render_cluster_json(const thrift::ClusterSummary& cluster) {
  json nimbuses = json::array(), supervisors = json::array();
  for (const auto& n : cluster.nimbuses) {
    nimbuses.push_back({{"host", n.host}, {"port", n.port}, {"leader", n.is_leader}});
  }
  for (const auto& s : cluster.supervisors) {
    json busy_slots = json::object();
    for (const auto& [port, why] : s.info.busy_slots) busy_slots[std::to_string(port)] = why;
    supervisors.push_back({{"id", s.info.id},
                           {"host", s.info.host},
                           {"rack", s.info.rack},
                           {"memory_capacity_mb", s.info.memory_capacity_mb},
                           {"memory_used_mb", s.used_memory_mb},
                           {"cpu_capacity", s.info.cpu_capacity},
                           {"cpu_used", s.used_cpu},
                           {"slots", s.info.slots},
                           {"busy_slots", busy_slots},
                           {"used_workers", s.num_used_workers}});
  }
  return json{{"nimbuses", nimbuses},
              {"supervisors", supervisors},
              {"topologies", cluster.topologies.size()}}
             .dump(2) +
         "\n";
}

namespace {

// "spout > a > b", "spout > (a, c > d)": a producer, then what runs on its threads.
std::string chain_text(const std::string& head,
                       const std::map<std::string, std::vector<std::string>>& members) {
  auto it = members.find(head);
  if (it == members.end()) return head;
  if (it->second.size() == 1) return head + " > " + chain_text(it->second.front(), members);
  std::string out = head + " > (";
  for (std::size_t i = 0; i < it->second.size(); ++i) {
    out += (i ? ", " : "") + chain_text(it->second[i], members);
  }
  return out + ")";
}

}  // namespace

std::string render_describe_text(const thrift::TopologyInfo& info,
                                 const thrift::TopologyPlacement& placement) {
  const auto& t = info.summary;
  std::ostringstream out;
  out << "Topology " << t.name << " (" << t.id << ")\n";
  out << "  status: " << status_name(t.status);
  if (!t.status_reason.empty()) out << " (" << t.status_reason << ")";
  if (t.__isset.stall) out << ", " << stall_text(t.stall);
  if (!t.failing_workers.empty()) out << ", " << failing_summary(t);
  out << "\n  scheduler: " << placement.scheduler << "\n";
  out << "  executors " << t.num_executors << ", tasks " << t.num_tasks << ", workers "
      << t.num_workers << "\n";
  out << "  memory: " << format_amount(t.assigned_memory_mb) << " MB assigned of "
      << format_amount(t.requested_memory_mb)
      << " MB requested; cpu: " << format_amount(t.assigned_cpu) << " of "
      << format_amount(t.requested_cpu) << " (ackers included)\n";
  // rack -> node -> port -> executors
  std::map<std::string, std::string> rack_of;
  for (const auto& n : placement.nodes) rack_of[n.node_id] = n.rack;
  std::map<std::string, std::map<std::string, std::map<int, std::vector<std::string>>>> tree;
  for (const auto& e : placement.assignment.executors) {
    tree[rack_of[e.slot.node_id]][e.slot.node_id][e.slot.port].push_back(
        executor_label(e.executor));
  }
  if (!t.failing_workers.empty()) {
    // A worker running again after its failure stays listed until it has
    // run healthy for a minute.
    const bool any_down = std::any_of(t.failing_workers.begin(), t.failing_workers.end(),
                                      [](const auto& f) { return !f.__isset.running_since_ms; });
    out << (any_down ? "Failing workers:\n" : "Recent worker failures:\n");
    for (const auto& f : t.failing_workers) out << "  " << failure_text(f) << "\n";
  }
  out << "Placement (assignment version " << placement.assignment.version;
  if (placement.assignment.version > 1) {
    out << "; it moved or resized " << t.moved_executors
        << (t.moved_executors == 1 ? " executor" : " executors");
  }
  out << "):\n";
  if (tree.empty()) out << "  (not placed)\n";
  for (const auto& [rack, nodes] : tree) {
    out << "  rack " << rack << "\n";
    for (const auto& [node, ports] : nodes) {
      out << "    node " << node;
      for (const auto& n : placement.nodes) {
        if (n.node_id == node) {
          out << "  memory " << format_amount(n.memory_used_mb) << "/"
              << format_amount(n.memory_capacity_mb) << " MB  cpu " << format_amount(n.cpu_used)
              << "/" << format_amount(n.cpu_capacity);
        }
      }
      out << "\n";
      for (const auto& [port, executors] : ports) {
        out << "      worker " << port << ":";
        for (const auto& e : executors) out << " " << e;
        out << "\n";
      }
    }
  }
  if (info.__isset.fused && !info.fused.empty()) {
    std::map<std::string, std::vector<std::string>> members;
    for (const auto& [component, producer] : info.fused) members[producer].push_back(component);
    out << "Fused (topology.fuse.executors; each executor of a chain runs on one thread):";
    for (const auto& [head, unused] : members) {
      if (!info.fused.count(head)) out << " " << chain_text(head, members);
    }
    out << "\n";
  }
  const auto& n = placement.network;
  out << "Network cost: same worker " << n.same_worker << ", same node " << n.same_node
      << ", same rack " << n.same_rack << ", cross rack " << n.cross_rack << "\n";
  for (const auto& w : placement.warnings) out << "warning: " << w << "\n";
  if (info.__isset.checkpoints)
    out << "Checkpoints: " << checkpoints_text(info.checkpoints) << "\n";
  if (!info.errors.empty()) {
    out << "Last errors:\n";
    for (const auto& g : group_errors(info.errors)) {
      const thrift::ErrorInfo& e = *g.last;
      out << "  " << e.component << ": " << e.message << " (";
      if (g.count > 1) {
        out << g.count << " times";
        if (g.tasks.size() > 1) out << " in tasks " << tasks_text(g.tasks);
        out << ", last ";
      }
      out << time_text(e.time_ms);
      // Where the last one happened: the worker whose log has the rest.
      if (!e.host.empty()) out << ", task " << e.task_id << " on " << e.host << ":" << e.port;
      out << ")\n";
    }
  }
  return out.str();
}

std::string render_describe_json(const thrift::TopologyInfo& info,
                                 const thrift::TopologyPlacement& placement) {
  json executors = json::array(), nodes = json::array(), errors = json::array();
  for (const auto& e : placement.assignment.executors) {
    executors.push_back({{"component", e.executor.component},
                         {"task_start", e.executor.task_start},
                         {"task_end", e.executor.task_end},
                         {"node", e.slot.node_id},
                         {"port", e.slot.port}});
  }
  for (const auto& n : placement.nodes) {
    nodes.push_back({{"node", n.node_id},
                     {"host", n.host},
                     {"rack", n.rack},
                     {"memory_used_mb", n.memory_used_mb},
                     {"memory_capacity_mb", n.memory_capacity_mb},
                     {"cpu_used", n.cpu_used},
                     {"cpu_capacity", n.cpu_capacity},
                     {"ports", n.used_ports}});
  }
  for (const auto& g : group_errors(info.errors)) {
    const thrift::ErrorInfo& e = *g.last;
    errors.push_back({{"component", e.component},
                      {"message", e.message},
                      {"count", g.count},
                      {"tasks", g.tasks},
                      {"time_ms", e.time_ms},
                      {"task_id", e.task_id},
                      {"host", e.host},
                      {"port", e.port}});
  }
  const auto& c = placement.network;
  return json{{"topology", topology_json(info.summary)},
              {"scheduler", placement.scheduler},
              {"assignment_version", placement.assignment.version},
              {"executors", executors},
              {"nodes", nodes},
              {"network",
               {{"same_worker", c.same_worker},
                {"same_node", c.same_node},
                {"same_rack", c.same_rack},
                {"cross_rack", c.cross_rack}}},
              {"warnings", placement.warnings},
              {"fused", info.__isset.fused ? json(info.fused) : json::object()},
              {"checkpoints",
               info.__isset.checkpoints ? checkpoints_json(info.checkpoints) : json(nullptr)},
              {"errors", errors}}
             .dump(2) +
         "\n";
}

}  // namespace rstorm::nimbus
