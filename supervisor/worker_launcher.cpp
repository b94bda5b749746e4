#include "supervisor/worker_launcher.hpp"

#include <unistd.h>

#include <algorithm>

#include "common/sha256.hpp"
#include "common/thrift/codec.hpp"
#include "supervisor/log_viewer.hpp"
#include "supervisor/process_control.hpp"

namespace rstorm::supervisor {

namespace wp = worker_process;

WorkerLauncher::WorkerLauncher(const SupervisorOptions& options, NimbusLink& nimbus, Logger logger)
    : options_(options), nimbus_(nimbus), logger_(std::move(logger)) {}

std::filesystem::path WorkerLauncher::worker_dir(const std::string& topology_id, int port) const {
  return options_.local_dir / "workers" / (topology_id + "-" + std::to_string(port));
}

Result<std::filesystem::path> WorkerLauncher::code_for(const thrift::Assignment& a) {
  const std::string& sha = a.code_sha256;
  if (sha.size() != 64 || sha.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return Status(ErrorCode::kInvalidArgument, "assignment of topology '" + a.topology_id +
                                                   "' has no valid code_sha256 ('" + sha + "')");
  }
  const auto dir = options_.local_dir / "code";
  const auto path = dir / (sha + ".so");
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    if (verified_.count(sha)) return path;
    auto bytes = wp::read_whole_file(path);
    if (bytes && Sha256::hex_of(*bytes) == sha) {
      verified_.insert(sha);
      return path;
    }
    logger_.warn("cached code {} does not match its SHA-256: downloading it again",
                 path.string());
    std::filesystem::remove(path, ec);
  }
  auto bytes = nimbus_.download_blob(a.code_blob_key);
  if (!bytes) {
    return Status(bytes.code(), "cannot download code blob '" + a.code_blob_key +
                                    "' of topology '" + a.topology_id +
                                    "': " + bytes.status().message());
  }
  const std::string actual = Sha256::hex_of(*bytes);
  if (actual != sha) {
    return Status(ErrorCode::kCorruption,
                  "code blob '" + a.code_blob_key + "' of topology '" + a.topology_id + "' (" +
                      std::to_string(bytes->size()) + " bytes) has SHA-256 " + actual +
                      ", the assignment says " + sha + ": not used");
  }
  std::filesystem::create_directories(dir, ec);
  if (Status s = wp::write_file_atomically(path, *bytes); !s) return s;
  verified_.insert(sha);
  logger_.info("downloaded code of topology '{}' ({} bytes, SHA-256 {})", a.topology_id,
               bytes->size(), sha.substr(0, 12));
  return path;
}

Result<wp::WorkerSpec> WorkerLauncher::prepare(const thrift::Assignment& a,
                                               const std::string& supervisor_id, int port) {
  auto code = code_for(a);
  if (!code) return code.status();
  auto info_it = topology_info_.find(a.topology_id);
  if (info_it == topology_info_.end()) {
    auto info = nimbus_.topology_info(a.topology_id);
    if (!info) {
      return Status(info.code(), "cannot get topology '" + a.topology_id +
                                     "' from nimbus: " + info.status().message());
    }
    info_it = topology_info_.emplace(a.topology_id, std::move(info).value()).first;
  }
  auto config = config_from_thrift(info_it->second.config);
  if (!config) return config.status();
  wp::WorkerSpec spec;
  spec.topology_id = a.topology_id;
  spec.topology_name = info_it->second.summary.name.empty() ? a.topology_id
                                                            : info_it->second.summary.name;
  spec.library = std::filesystem::absolute(*code);
  spec.supervisor_id = supervisor_id;
  spec.host = options_.host;  // the worker listens on its slot port here
  spec.port = port;
  spec.node_hosts = a.node_hosts;
  spec.worker_dir = std::filesystem::absolute(worker_dir(a.topology_id, port));
  spec.assignment_version = a.version;
  for (const auto& e : a.executors) {
    spec.executors.push_back(wp::SpecExecutor{e.executor.component, e.executor.task_start,
                                              e.executor.task_end, e.slot.node_id, e.slot.port});
  }
  spec.config = options_.worker_config;
  spec.config.merge(*config);  // the topology's own entries win ...
  // ... except that a topology cannot switch off the cluster's authentication
  // or encryption, nor present other certificates than its supervisor's.
  if (const auto* entry = options_.worker_config.find("storm.messaging.netty.authentication");
      entry != nullptr && entry->value.is_bool() && entry->value.as_bool()) {
    spec.config.set("storm.messaging.netty.authentication", true, entry->origin);
  }
  if (const auto* entry = options_.worker_config.find("storm.messaging.netty.tls.enable");
      entry != nullptr && entry->value.is_bool() && entry->value.as_bool()) {
    for (const char* key :
         {"storm.messaging.netty.tls.enable", "storm.messaging.netty.tls.cert.path",
          "storm.messaging.netty.tls.key.path", "storm.messaging.netty.tls.ca.path"}) {
      if (const auto* own = options_.worker_config.find(key); own != nullptr) {
        spec.config.set(key, own->value, own->origin);
      }
    }
  }
  // Where the worker finds nimbus: the nimbuses running now (checkpoints).
  if (auto seeds =
          nimbus_.nimbus_seeds(spec.config.get_bool("nimbus.thrift.client.use.tls", false));
      !seeds.empty()) {
    ConfigValue::List list(seeds.begin(), seeds.end());
    spec.config.set(std::string(keys::kNimbusSeeds), ConfigValue(std::move(list)), "supervisor");
  }
  spec.heartbeat_interval_ms = options_.worker_heartbeat_ms;
  // Nimbus moves an unheard supervisor's executors nimbus.supervisor.timeout.secs
  // after its last heartbeat, up to a heartbeat period before the death that
  // the worker notices at its next look: it stops that much earlier, so that
  // the executors never run in two places.
  const std::int64_t moved_after_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.orphan_timeout).count();
  const std::int64_t margin_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.heartbeat_frequency).count() +
      2 * static_cast<std::int64_t>(options_.worker_heartbeat_ms) + 1000;
  spec.orphan_timeout_ms = std::max<std::int64_t>(1000, moved_after_ms - margin_ms);
  spec.secret = info_it->second.secret;
  return spec;
}

Status WorkerLauncher::write_supervisor_mark(const std::string& topology_id, int port) {
  const pid_t self = ::getpid();
  const auto ticks = process_start_ticks(self);
  return wp::write_file_atomically(
      worker_dir(topology_id, port) / "supervisor",
      std::to_string(self) + " " + std::to_string(ticks.value_or(0)) + "\n");
}

Status WorkerLauncher::write_status(const std::string& topology_id, int port, bool active) {
  return wp::write_file_atomically(worker_dir(topology_id, port) / "status",
                                   active ? wp::kStatusActive : wp::kStatusInactive);
}

Status WorkerLauncher::update_spec(const wp::WorkerSpec& spec) {
  if (Status s = write_worker_token(spec.topology_id, spec.port); !s) return s;
  if (Status s = write_acl(spec); !s) return s;
  return wp::write_file_atomically(spec.spec_file(), wp::spec_to_json(spec));
}

Status WorkerLauncher::write_acl(const wp::WorkerSpec& spec) {
  security::TopologyAcl acl;
  acl.name = spec.topology_name;
  acl.id = spec.topology_id;
  if (auto it = topology_info_.find(spec.topology_id); it != topology_info_.end()) {
    acl.owner = it->second.owner;
  }
  try {
    security::read_acl_keys(spec.config, acl);
  } catch (const ConfigError& e) {
    return Status(ErrorCode::kInvalidArgument, e.what());
  }
  return wp::write_file_atomically(spec.worker_dir / kAclFile, acl_to_json(acl));
}

Status WorkerLauncher::write_worker_token(const std::string& topology_id, int port) {
  const auto path = worker_dir(topology_id, port) / wp::kWorkerTokenFile;
  auto it = topology_info_.find(topology_id);
  if (it == topology_info_.end() || !it->second.__isset.worker_token) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return Status::ok();
  }
  return wp::write_file_atomically(path, encode_thrift(it->second.worker_token));
}

void WorkerLauncher::renew_worker_tokens(const std::vector<std::pair<std::string, int>>& workers,
                                         std::int64_t now_ms) {
  std::map<std::string, std::vector<int>> ports;
  for (const auto& [topology, port] : workers) ports[topology].push_back(port);
  for (const auto& [topology, its_ports] : ports) {
    auto it = topology_info_.find(topology);
    if (it == topology_info_.end() || !it->second.__isset.worker_token) continue;
    auto token =
        decode_thrift<thrift::WorkerTokenInfo>(it->second.worker_token.info, "WorkerTokenInfo");
    if (token && now_ms < token->issued_ms + (token->expiration_ms - token->issued_ms) / 2) {
      continue;
    }
    auto info = nimbus_.topology_info(topology);
    if (!info) {
      logger_.warn("cannot renew the worker token of topology '{}': {}", topology,
                   info.status().message());
      continue;
    }
    it->second = std::move(info).value();
    for (int port : its_ports) {
      if (Status s = write_worker_token(topology, port); !s) {
        logger_.warn("cannot write the worker token of {}:{}: {}", topology, port, s.message());
      }
    }
    if (auto renewed = decode_thrift<thrift::WorkerTokenInfo>(it->second.worker_token.info,
                                                              "WorkerTokenInfo")) {
      logger_.info("renewed the worker token of topology '{}' for {} worker(s); it expires in {} s",
                   topology, its_ports.size(), (renewed->expiration_ms - now_ms) / 1000);
    }
  }
}

Result<ProcessId> WorkerLauncher::launch(const wp::WorkerSpec& spec, bool active) {
  std::error_code ec;
  std::filesystem::create_directories(spec.worker_dir, ec);
  if (ec) {
    return Status(ErrorCode::kIoError,
                  "cannot create " + spec.worker_dir.string() + ": " + ec.message());
  }
  std::filesystem::remove(spec.heartbeat_file(), ec);  // a stale one is not a sign of life
  const auto spec_path = spec.spec_file();
  if (Status s = wp::write_file_atomically(spec_path, wp::spec_to_json(spec)); !s) return s;
  if (Status s = write_status(spec.topology_id, spec.port, active); !s) return s;
  if (Status s = write_worker_token(spec.topology_id, spec.port); !s) return s;
  if (Status s = write_acl(spec); !s) return s;
  if (Status s = write_supervisor_mark(spec.topology_id, spec.port); !s) return s;
  return launch_process(options_.worker_binary, {"--spec", spec_path.string()},
                        spec.worker_dir / "worker.log");
}

void WorkerLauncher::remove_code_except(const std::set<std::string>& keep) {
  std::error_code ec;
  const auto dir = options_.local_dir / "code";
  if (!std::filesystem::exists(dir, ec)) return;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string sha = entry.path().stem().string();
    if (keep.count(sha) == 0) {
      std::filesystem::remove(entry.path(), ec);
      verified_.erase(sha);
    }
  }
}

void WorkerLauncher::clean_worker_dir(const std::string& topology_id, int port) {
  std::error_code ec;
  const auto dir = worker_dir(topology_id, port);
  for (const char* name : {"spec.json", "status", "heartbeat", wp::kWorkerTokenFile}) {
    std::filesystem::remove(dir / name, ec);
  }
}

}  // namespace rstorm::supervisor
