#include "worker/process/worker_spec.hpp"

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/security/secrets.hpp"
#include "common/thrift/codec.hpp"

namespace rstorm::worker_process {
namespace {

using nlohmann::json;

json executor_to_json(const SpecExecutor& e) {
  return json{{"component", e.component},
              {"task_start", e.task_start},
              {"task_end", e.task_end},
              {"node_id", e.node_id},
              {"port", e.port}};
}

SpecExecutor executor_from_json(const json& j) {
  SpecExecutor e;
  e.component = j.at("component").get<std::string>();
  e.task_start = j.at("task_start").get<int>();
  e.task_end = j.at("task_end").get<int>();
  e.node_id = j.value("node_id", std::string());
  e.port = j.value("port", 0);
  return e;
}

// Both files hold integers only. nlohmann's get<int>() of a number with a
// fraction is a cast, undefined when the number does not fit: such a number
// makes the file unreadable instead. (A loop, not recursion: any depth parses.)
bool holds_fraction(const json& root) {
  std::vector<const json*> todo{&root};
  while (!todo.empty()) {
    const json* j = todo.back();
    todo.pop_back();
    if (j->is_number_float()) return true;
    if (j->is_structured()) {
      for (const json& child : *j) todo.push_back(&child);
    }
  }
  return false;
}

}  // namespace

std::vector<SpecExecutor> WorkerSpec::own_executors() const {
  std::vector<SpecExecutor> out;
  for (const auto& e : executors) {
    if (e.node_id == supervisor_id && e.port == port) out.push_back(e);
  }
  return out;
}

std::string WorkerSpec::host_of(const std::string& node_id) const {
  auto it = node_hosts.find(node_id);
  if (it != node_hosts.end() && !it->second.empty()) return it->second;
  return node_id == supervisor_id ? host : std::string();
}

std::string spec_to_json(const WorkerSpec& spec) {
  json j;
  j["topology_id"] = spec.topology_id;
  j["topology_name"] = spec.topology_name;
  j["library"] = spec.library.string();
  j["supervisor_id"] = spec.supervisor_id;
  j["host"] = spec.host;
  j["port"] = spec.port;
  j["node_hosts"] = spec.node_hosts;
  j["worker_dir"] = spec.worker_dir.string();
  j["assignment_version"] = spec.assignment_version;
  j["heartbeat_interval_ms"] = spec.heartbeat_interval_ms;
  j["orphan_timeout_ms"] = spec.orphan_timeout_ms;
  if (!spec.secret.empty()) j["secret"] = security::to_hex(spec.secret);
  json executors = json::array();
  for (const auto& e : spec.executors) executors.push_back(executor_to_json(e));
  j["executors"] = std::move(executors);
  json config = json::object();
  for (const auto& [key, entry] : config_to_thrift(spec.config)) {
    config[key] = json{{"value", entry.value_yaml}, {"origin", entry.origin}};
  }
  j["config"] = std::move(config);
  return j.dump(2);
}

Result<WorkerSpec> spec_from_json(std::string_view text) {
  WorkerSpec spec;
  try {
    const json j = json::parse(text);
    if (holds_fraction(j)) {
      return Status(ErrorCode::kInvalidArgument, "bad worker spec: a number with a fraction");
    }
    spec.topology_id = j.at("topology_id").get<std::string>();
    spec.topology_name = j.at("topology_name").get<std::string>();
    spec.library = j.at("library").get<std::string>();
    spec.supervisor_id = j.at("supervisor_id").get<std::string>();
    spec.host = j.at("host").get<std::string>();
    spec.port = j.at("port").get<int>();
    if (j.contains("node_hosts")) {
      spec.node_hosts = j.at("node_hosts").get<std::map<std::string, std::string>>();
    }
    spec.worker_dir = j.at("worker_dir").get<std::string>();
    spec.assignment_version = j.value("assignment_version", std::int64_t{0});
    spec.heartbeat_interval_ms = j.value("heartbeat_interval_ms", 1000);
    spec.orphan_timeout_ms = j.value("orphan_timeout_ms", std::int64_t{60000});
    if (j.contains("secret")) {
      auto secret = security::from_hex(j.at("secret").get<std::string>());
      if (!secret) return Status(ErrorCode::kInvalidArgument, "bad worker spec: secret is not hex");
      spec.secret = std::move(*secret);
    }
    for (const auto& e : j.at("executors")) spec.executors.push_back(executor_from_json(e));
    std::map<std::string, thrift::ConfigEntry> entries;
    for (const auto& [key, value] : j.at("config").items()) {
      thrift::ConfigEntry entry;
      entry.value_yaml = value.at("value").get<std::string>();
      entry.origin = value.value("origin", std::string());
      entries.emplace(key, std::move(entry));
    }
    auto config = config_from_thrift(entries);
    if (!config) return config.status();
    spec.config = std::move(config).value();
  } catch (const json::exception& e) {
    return Status(ErrorCode::kInvalidArgument, std::string("bad worker spec: ") + e.what());
  }
  if (spec.heartbeat_interval_ms <= 0) {
    return Status(ErrorCode::kInvalidArgument,
                  "bad worker spec: heartbeat_interval_ms must be positive, got " +
                      std::to_string(spec.heartbeat_interval_ms));
  }
  return spec;
}

Result<WorkerSpec> read_spec_file(const std::filesystem::path& path) {
  auto text = read_whole_file(path);
  if (!text) return text.status();
  auto spec = spec_from_json(*text);
  if (!spec) {
    return Status(ErrorCode::kInvalidArgument, path.string() + ": " + spec.status().message());
  }
  return spec;
}

Status write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  const std::filesystem::path tmp =
      path.string() + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status(ErrorCode::kIoError, "cannot write " + tmp.string());
    std::error_code ec;
    std::filesystem::permissions(
        tmp, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write, ec);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) return Status(ErrorCode::kIoError, "cannot write " + tmp.string());
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return Status(ErrorCode::kIoError, "cannot rename " + tmp.string() + " to " + path.string());
  }
  return Status::ok();
}

Result<std::string> read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      return Status(ErrorCode::kNotFound, path.string() + " does not exist");
    }
    return Status(ErrorCode::kIoError, "cannot read " + path.string());
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string heartbeat_to_json(const WorkerHeartbeatFile& h) {
  json j;
  j["time_ms"] = h.time_ms;
  j["pid"] = h.pid;
  j["topology_id"] = h.topology_id;
  j["port"] = h.port;
  j["active"] = h.active;
  j["uptime_secs"] = h.uptime_secs;
  json executors = json::array();
  for (const auto& e : h.executors) executors.push_back(executor_to_json(e));
  j["executors"] = std::move(executors);
  j["components"] = h.components;
  j["data_plane"] = h.data_plane;
  json errors = json::array();
  for (const auto& e : h.errors) {
    errors.push_back({{"component", e.component},
                      {"task", e.task},
                      {"time_ms", e.time_ms},
                      {"message", e.message}});
  }
  j["errors"] = std::move(errors);
  if (h.stalled_ms > 0) {
    j["stall"] = {{"stalled_ms", h.stalled_ms},
                  {"pending", h.stall_pending},
                  {"stalled_spouts", h.stalled_spouts},
                  {"queued", h.queued},
                  {"full_queues", h.full_queues}};
  }
  if (!h.fused.empty()) j["fused"] = h.fused;
  // A user's message may hold bytes that are not UTF-8: replace, never throw.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<WorkerHeartbeatFile> heartbeat_from_json(std::string_view text) {
  WorkerHeartbeatFile h;
  try {
    const json j = json::parse(text);
    if (holds_fraction(j)) {
      return Status(ErrorCode::kInvalidArgument, "bad worker heartbeat: a number with a fraction");
    }
    h.time_ms = j.at("time_ms").get<std::int64_t>();
    h.pid = j.at("pid").get<std::int64_t>();
    h.topology_id = j.value("topology_id", std::string());
    h.port = j.value("port", 0);
    h.active = j.value("active", false);
    h.uptime_secs = j.value("uptime_secs", std::int64_t{0});
    for (const auto& e : j.at("executors")) h.executors.push_back(executor_from_json(e));
    if (j.contains("components")) {
      h.components = j.at("components").get<std::map<std::string, std::map<std::string, std::uint64_t>>>();
    }
    if (j.contains("data_plane")) {
      h.data_plane = j.at("data_plane").get<std::map<std::string, std::uint64_t>>();
    }
    if (j.contains("errors")) {
      for (const auto& e : j.at("errors")) {
        h.errors.push_back({e.at("component").get<std::string>(), e.value("task", 0),
                            e.value("time_ms", std::int64_t{0}), e.value("message", std::string())});
      }
    }
    if (j.contains("stall")) {
      const json& s = j.at("stall");
      h.stalled_ms = s.value("stalled_ms", std::int64_t{0});
      h.stall_pending = s.value("pending", std::uint64_t{0});
      h.stalled_spouts = s.value("stalled_spouts", std::vector<std::string>());
      h.queued = s.value("queued", std::vector<std::string>());
      h.full_queues = s.value("full_queues", std::vector<std::string>());
    }
    if (j.contains("fused")) h.fused = j.at("fused").get<std::map<std::string, std::string>>();
  } catch (const json::exception& e) {
    return Status(ErrorCode::kInvalidArgument, std::string("bad worker heartbeat: ") + e.what());
  }
  return h;
}

}  // namespace rstorm::worker_process
