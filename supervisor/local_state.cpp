#include "supervisor/local_state.hpp"

#include <nlohmann/json.hpp>
#include <random>

namespace rstorm::supervisor {
namespace {

constexpr char kIdKey[] = "supervisor-id";
constexpr char kWorkerPrefix[] = "worker/";

std::string worker_key(int port) { return kWorkerPrefix + std::to_string(port); }

}  // namespace

Result<std::string> LocalState::supervisor_id() {
  auto existing = store_.get(kIdKey);
  if (existing) return *existing;
  if (existing.code() != ErrorCode::kNotFound) return existing.status();
  std::random_device rd;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%08x%08x", rd(), rd());
  std::string id = std::string("supervisor-") + hex;
  if (Status s = store_.put(kIdKey, id); !s) return s;
  return id;
}

Status LocalState::put_worker(const WorkerRecord& r) {
  nlohmann::json j{{"topology_id", r.topology_id},
                   {"port", r.port},
                   {"pid", r.process.pid},
                   {"start_ticks", r.process.start_ticks},
                   {"assignment_version", r.assignment_version},
                   {"launch_time_ms", r.launch_time_ms}};
  return store_.put(worker_key(r.port), j.dump());
}

Status LocalState::remove_worker(int port) { return store_.remove(worker_key(port)); }

Result<std::vector<WorkerRecord>> LocalState::workers() {
  auto rows = store_.scan_prefix(kWorkerPrefix);
  if (!rows) return rows.status();
  std::vector<WorkerRecord> out;
  for (const auto& [key, value] : *rows) {
    try {
      const auto j = nlohmann::json::parse(value);
      // get<int>() of a number with a fraction is a cast, undefined when the
      // number does not fit: the record holds integers.
      for (const char* field :
           {"port", "pid", "start_ticks", "assignment_version", "launch_time_ms"}) {
        if (j.contains(field) && j.at(field).is_number_float()) {
          return Status(ErrorCode::kCorruption, "local state entry '" + key +
                                                    "' is not a worker record: " + field + " is " +
                                                    j.at(field).dump() + ", not an integer");
        }
      }
      WorkerRecord r;
      r.topology_id = j.at("topology_id").get<std::string>();
      r.port = j.at("port").get<int>();
      r.process.pid = j.at("pid").get<pid_t>();
      r.process.start_ticks = j.at("start_ticks").get<std::uint64_t>();
      r.assignment_version = j.value("assignment_version", std::int64_t{0});
      r.launch_time_ms = j.value("launch_time_ms", std::int64_t{0});
      out.push_back(std::move(r));
    } catch (const nlohmann::json::exception& e) {
      return Status(ErrorCode::kCorruption,
                    "local state entry '" + key + "' is not a worker record: " + e.what());
    }
  }
  return out;
}

}  // namespace rstorm::supervisor
