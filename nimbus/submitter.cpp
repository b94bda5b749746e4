#include "nimbus/submitter.hpp"

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/sha256.hpp"
#include "common/thrift/codec.hpp"
#include "nimbus/topology_structure.hpp"
#include "rstorm/topology_library.hpp"

namespace rstorm::nimbus {

Config topology_config_of(const Config& config) {
  Config out;
  for (const auto& [key, entry] : config.entries()) {
    if (key.starts_with("storm.") || key.starts_with("nimbus.") || key.starts_with("supervisor.") ||
        key.starts_with("worker.")) {
      continue;
    }
    out.set(key, entry.value, entry.origin);
  }
  return out;
}

Result<PreparedTopology> prepare_topology(const std::string& library_path, const std::string& name,
                                          const Config& config) {
  auto library = load_topology_library(library_path);
  if (!library) return Status(ErrorCode::kInvalidArgument, library.status().message());
  PreparedTopology out;
  out.name = name.empty() ? library->name() : name;
  // Before anything is uploaded: the name is part of the code blob's key.
  if (std::string problem = topology_name_problem(out.name); !problem.empty()) {
    return Status(ErrorCode::kInvalidArgument, problem);
  }
  Config topology_config = topology_config_of(config);
  topology_config.set(std::string(keys::kTopologyName), out.name, "rstorm submit --name");
  auto topology = library->build(topology_config);
  if (!topology) {
    return Status(ErrorCode::kInvalidArgument, library_path + ": " + topology.status().message());
  }
  out.structure = structure_to_thrift(out.name, topology->spec());
  if (Status s = validate_structure(out.structure); !s) return s;
  out.config = config_to_thrift(topology_config);
  for (const auto& [key, entry] : config.entries()) {
    // nimbus.*, storm.zookeeper.* and the like on a command line are for the
    // client itself; these are for other machines' daemons and workers only.
    const bool elsewhere = key.starts_with("worker.") || key.starts_with("supervisor.") ||
                           key.starts_with("storm.messaging.") || key.starts_with("storm.metrics.");
    if (elsewhere && entry.origin == "command line") {
      out.daemon_keys_ignored.push_back(key);
    }
  }
  std::ifstream in(library_path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in) return Status(ErrorCode::kIoError, "cannot read " + library_path);
  out.library_bytes = bytes.str();
  return out;
}

Result<std::string> submit_prepared(NimbusClient& client, const PreparedTopology& topology,
                                    std::size_t chunk_bytes) {
  const std::string sha = Sha256::hex_of(topology.library_bytes);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  const std::string key = topology.name + "-code-" + sha.substr(0, 16) + "-" + std::to_string(ms);
  auto uploaded = client.upload_blob(key, topology.library_bytes, chunk_bytes);
  if (!uploaded) return uploaded.status();
  return client.submit_topology(topology.name, topology.structure, topology.config, key);
}

namespace {

template <typename F>
Status poll(std::chrono::milliseconds timeout, F&& done) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(50);
  for (;;) {
    std::string last;
    Status s = done(last);
    if (s) return s;
    if (s.code() != ErrorCode::kTimeout) return s;
    if (std::chrono::steady_clock::now() > deadline)
      return Status(ErrorCode::kTimeout, s.message());
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(500));
  }
}

}  // namespace

Status wait_until_running(NimbusClient& client, const std::string& topology_id,
                          std::chrono::milliseconds timeout) {
  return poll(timeout, [&](std::string&) -> Status {
    auto info = client.topology_info(topology_id);
    if (!info) {
      if (info.code() == ErrorCode::kUnavailable)
        return Status(ErrorCode::kTimeout, info.status().message());
      return info.status();
    }
    const auto status = info->summary.status;
    // A worker that cannot start will not start by waiting: say why at once.
    for (const thrift::WorkerFailure& f : info->summary.failing_workers) {
      if (f.__isset.running_since_ms) continue;  // restarted, and heartbeats
      return Status(ErrorCode::kInternal,
                    "a worker of topology '" + topology_id + "' fails (" + f.host + ":" +
                        std::to_string(f.slot.port) + ", " + f.exit_status + "): " + f.reason);
    }
    const bool placed = !info->executors.empty();
    // uptime_secs < 0: the supervisor reports workers but not this one yet.
    int starting = 0;
    for (const auto& e : info->executors) starting += e.uptime_secs < 0 ? 1 : 0;
    const bool running =
        status == thrift::TopologyStatus::ACTIVE || status == thrift::TopologyStatus::INACTIVE;
    if (placed && running && starting == 0) return Status::ok();
    if (placed && running) {
      return Status(ErrorCode::kTimeout, "topology '" + topology_id + "' is assigned; " +
                                             std::to_string(starting) +
                                             " executors wait for their worker's first heartbeat");
    }
    if (status == thrift::TopologyStatus::KILLED) {
      return Status(ErrorCode::kInvalidArgument, "topology '" + topology_id + "' was killed");
    }
    std::string why = "topology '" + topology_id + "' is " + thrift::to_string(status);
    if (!info->summary.status_reason.empty()) why += ": " + info->summary.status_reason;
    if (!placed) why += " (no assignment yet)";
    return Status(ErrorCode::kTimeout, why);
  });
}

Status wait_until_gone(NimbusClient& client, const std::string& name,
                       std::chrono::milliseconds timeout) {
  return poll(timeout, [&](std::string&) -> Status {
    auto cluster = client.cluster_info();
    if (!cluster) return Status(ErrorCode::kTimeout, cluster.status().message());
    for (const auto& t : cluster->topologies) {
      if (t.id == name || t.name == name) {
        return Status(ErrorCode::kTimeout,
                      "topology '" + name + "' is still " + thrift::to_string(t.status));
      }
    }
    return Status::ok();
  });
}

}  // namespace rstorm::nimbus
