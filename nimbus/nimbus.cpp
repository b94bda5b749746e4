#include "nimbus/nimbus.hpp"

#include <algorithm>
#include <cctype>

#include "common/security/secrets.hpp"
#include "common/thrift/codec.hpp"
#include "nimbus/nimbus_client.hpp"
#include "nimbus/topology_structure.hpp"
#include "scheduler/cluster_state.hpp"
#include "scheduler/scheduler.hpp"

namespace rstorm::nimbus {

std::string topology_blob_key(const std::string& topology_id) { return topology_id + ".topology"; }

NimbusOptions NimbusOptions::from_config(const Config& config) {
  NimbusOptions o;
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  o.host = config.get_string("nimbus.thrift.host", o.host);
  if (config.get_bool("nimbus.thrift.client.use.tls", false)) {
    o.client_tls = security::tls_files_from_config(config, "nimbus.thrift.tls.client");
  }
  o.root = config.get_string(keys::kZookeeperRoot, o.root);
  auto secs = [&](std::string_view key, std::chrono::milliseconds fallback) {
    if (!config.contains(key)) return fallback;
    return milliseconds(static_cast<std::int64_t>(config.get_double(key) * 1000));
  };
  o.monitor_period = secs(keys::kNimbusMonitorFreqSecs, o.monitor_period);
  o.supervisor_timeout = secs(keys::kNimbusSupervisorTimeoutSecs, o.supervisor_timeout);
  o.task_timeout = secs(keys::kNimbusTaskTimeoutSecs, o.task_timeout);
  o.task_launch = secs("nimbus.task.launch.secs", o.task_launch);
  o.min_replication = static_cast<int>(
      config.get_int("topology.min.replication.count", o.min_replication));
  o.max_replication_wait = secs("topology.max.replication.wait.time.sec", o.max_replication_wait);
  o.default_kill_wait_secs =
      static_cast<int>(config.get_int(keys::kTopologyMessageTimeoutSecs, o.default_kill_wait_secs));
  o.chunk_bytes = static_cast<std::size_t>(
      config.get_int("storm.blobstore.chunk.size.bytes", static_cast<std::int64_t>(o.chunk_bytes)));
  o.worker_token_life = nimbus::worker_token_life(config);
  return o;
}

namespace {

NimbusOptions with_clock(NimbusOptions options) {
  if (!options.now_ms) {
    options.now_ms = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  }
  return options;
}

Status not_leader() { return Status(ErrorCode::kUnavailable, "this nimbus is not the leader"); }

}  // namespace

Nimbus::Nimbus(CoordinationStore& store, BlobStore& blobs, NimbusOptions options, Logger logger)
    : store_(store),
      blobs_(blobs),
      options_(with_clock(std::move(options))),
      paths_(options_.root),
      logger_(std::move(logger)),
      start_ms_(options_.now_ms()),
      worker_tokens_(store_, paths_, options_.worker_token_life, logger_) {}

Nimbus::~Nimbus() {
  watches_.close();
  stop();
}

Status Nimbus::start(int port, int tls_port) {
  if (Status s = paths_.ensure_directories(store_); !s) return s;
  self_.host = options_.host;
  self_.port = port;
  if (tls_port > 0) self_.__set_tls_port(tls_port);
  self_.version = "0.1.0";
  session_listener_ = store_.add_session_listener([this](SessionEvent event) {
    if (event == SessionEvent::kNewSession || event == SessionEvent::kConnected) {
      {
        std::lock_guard lock(mutex_);
        if (event == SessionEvent::kNewSession) supervisors_watched_ = topologies_watched_ = false;
      }
      trigger();
    }
  });
  election_ = std::make_unique<LeaderElection>(
      store_, LeaderElection::Options{paths_.nimbus_leader(), encode_thrift(self_)},
      [this](bool leading) {
        logger_.info("{} leadership ({}:{})", leading ? "gained" : "lost", self_.host, self_.port);
        trigger();
      },
      logger_);
  if (Status s = election_->start(); !s) return s;
  monitor_ = std::jthread([this](std::stop_token stop) { monitor_loop(stop); });
  return Status::ok();
}

void Nimbus::stop() {
  if (monitor_.joinable()) {
    monitor_.request_stop();
    wake_.notify_all();
    monitor_.join();
  }
  if (election_) election_->stop();
  if (session_listener_ != 0) {
    store_.remove_session_listener(session_listener_);
    session_listener_ = 0;
  }
}

bool Nimbus::is_leader() const { return election_ && election_->is_leader(); }

Result<thrift::NimbusSummary> Nimbus::leader() const {
  if (!election_) return Status(ErrorCode::kNotFound, "no nimbus leader elected yet");
  auto data = election_->leader();
  if (!data) return Status(ErrorCode::kNotFound, "no nimbus leader elected yet");
  auto summary = decode_thrift<thrift::NimbusSummary>(*data, "NimbusSummary");
  if (!summary) return summary.status();
  summary->is_leader = true;
  return summary;
}

Status Nimbus::require_leader() const { return is_leader() ? Status::ok() : not_leader(); }

void Nimbus::trigger() {
  {
    std::lock_guard lock(mutex_);
    dirty_ = true;
  }
  wake_.notify_all();
}

std::uint64_t Nimbus::rounds() const {
  std::lock_guard lock(mutex_);
  return rounds_;
}

Result<std::vector<thrift::TopologyRecord>> Nimbus::all_records(
    std::map<std::string, std::int32_t>* versions) {
  auto ids = store_.children(paths_.topologies());
  if (!ids) return ids.status();
  std::vector<thrift::TopologyRecord> out;
  for (const std::string& id : *ids) {
    auto node = store_.get(paths_.topology(id));
    if (!node) continue;  // removed meanwhile
    auto record = decode_thrift<thrift::TopologyRecord>(node->data, "TopologyRecord");
    if (!record) {
      logger_.warn("skipping topology record {}: {}", id, record.status().message());
      continue;
    }
    if (versions != nullptr) (*versions)[record->id] = node->version;
    out.push_back(std::move(*record));
  }
  return out;
}

Result<std::pair<thrift::TopologyRecord, std::int32_t>> Nimbus::find_record(
    const std::string& id_or_name) {
  auto ids = store_.children(paths_.topologies());
  if (!ids) return ids.status();
  for (const std::string& id : *ids) {
    auto node = store_.get(paths_.topology(id));
    if (!node) continue;
    auto record = decode_thrift<thrift::TopologyRecord>(node->data, "TopologyRecord");
    if (!record) continue;
    if (record->id == id_or_name || record->name == id_or_name) {
      return std::make_pair(std::move(*record), node->version);
    }
  }
  return Status(ErrorCode::kNotFound,
                "topology '" + id_or_name + "' is not running (see `rstorm list`)");
}

Status Nimbus::write_record(const thrift::TopologyRecord& record, std::int32_t expected_version) {
  return store_.set(paths_.topology(record.id), encode_thrift(record), expected_version).status();
}

Result<thrift::TopologyRecord> Nimbus::update_record(
    const std::string& id_or_name, const std::function<Status(thrift::TopologyRecord&)>& change) {
  constexpr int kAttempts = 20;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto found = find_record(id_or_name);
    if (!found) return found.status();
    thrift::TopologyRecord record = std::move(found->first);
    if (Status s = change(record); !s) return s;
    Status written = write_record(record, found->second);
    if (written) return record;
    if (written.code() != ErrorCode::kVersionConflict && written.code() != ErrorCode::kNotFound) {
      return written;
    }
    // Changed or removed since the read: decide again on what it is now.
  }
  return Status(ErrorCode::kUnavailable, "topology '" + id_or_name +
                                             "' changed under every attempt to update it; "
                                             "try again");
}

Result<Nimbus::Loaded> Nimbus::load(const thrift::TopologyRecord& record) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = loaded_.find(record.id); it != loaded_.end()) return it->second;
  }
  auto bytes = blobs_.read_all(record.structure_blob_key);
  if (!bytes) return bytes.status();
  auto info = decode_thrift<thrift::TopologyInfo>(*bytes, "TopologyInfo");
  if (!info) return info.status();
  auto config = config_from_thrift(info->config);
  if (!config) return config.status();
  auto request = request_from_structure(record.id, info->structure, *config);
  if (!request) return request.status();
  Loaded loaded{info->structure, info->config, std::move(*request), info->secret};
  std::lock_guard lock(mutex_);
  loaded_[record.id] = loaded;
  return loaded;
}

std::string Nimbus::next_topology_id(const std::string& name) {
  const std::int64_t secs = now() / 1000;
  for (int n = 0;; ++n) {
    std::string id = name + "-" + std::to_string(secs) + (n ? "-" + std::to_string(n) : "");
    auto exists = store_.exists(paths_.topology(id));
    if (exists && !*exists) return id;
    if (!exists) return id;  // the create below reports the store's error
  }
}

// A request that no live node could ever hold (even empty) is refused at once,
// naming the component, what it needs and the largest free node.
Status Nimbus::check_fits(const scheduler::TopologyRequest& request) {
  auto children = store_.children(paths_.supervisors());
  if (!children || children->empty()) return Status::ok();  // nothing to compare with yet
  scheduler::Cluster cluster;
  for (const auto& id : *children) {
    auto node = store_.get(paths_.supervisor(id));
    if (!node) continue;
    auto info = decode_thrift<thrift::SupervisorInfo>(node->data, "SupervisorInfo");
    if (!info) continue;
    scheduler::NodeSpec n;
    n.id = scheduler::NodeId(info->id);
    n.rack = scheduler::RackId(info->rack);
    n.memory_mb = info->memory_capacity_mb;
    n.cpu = info->cpu_capacity;
    n.generic = info->generic_resources;
    cluster.nodes.push_back(std::move(n));
  }
  {
    std::lock_guard lock(mutex_);
    for (const auto& u : usage_) {
      scheduler::SlotUsage held;
      held.slot.node = u.node;
      held.memory_mb = u.memory_used_mb;
      cluster.used.push_back(std::move(held));
    }
  }
  if (std::string problem = scheduler::fit_problem(request, cluster); !problem.empty()) {
    return Status(ErrorCode::kInvalidArgument, std::move(problem));
  }
  return Status::ok();
}

Result<std::string> Nimbus::submit(const std::string& name, thrift::TopologyStructure structure,
                                   const std::map<std::string, thrift::ConfigEntry>& config,
                                   const std::string& code_blob_key, const std::string& submitter) {
  if (Status s = require_leader(); !s) return s;
  if (std::string problem = topology_name_problem(name); !problem.empty()) {
    return Status(ErrorCode::kInvalidArgument, problem);
  }
  structure.name = name;
  if (Status s = validate_structure(structure); !s) return s;
  auto topology_config = config_from_thrift(config);
  if (!topology_config) return topology_config.status();
  auto records = all_records();
  if (!records) return records.status();
  for (const auto& r : *records) {
    if (r.name != name) continue;
    if (r.status == thrift::TopologyStatus::KILLED) {
      // Killed, waiting out its kill's wait: gone at the deadline.
      const std::int64_t left_ms = std::max<std::int64_t>(0, r.kill_deadline_ms - now());
      return Status(ErrorCode::kAlreadyExists,
                    "a topology named '" + name + "' (" + r.id +
                        ") is being killed: it is removed " +
                        (left_ms > 0 ? "in " + std::to_string((left_ms + 999) / 1000) + " s"
                                     : std::string("now")) +
                        "; submit again then, or pick another name");
    }
    return Status(ErrorCode::kAlreadyExists, "a topology named '" + name + "' already exists (" +
                                                 r.id + "): kill it first or pick another name");
  }
  auto code = blobs_.info(code_blob_key);
  if (!code) {
    return Status(ErrorCode::kNotFound, "code blob '" + code_blob_key +
                                            "' was never uploaded (or its upload did not finish)");
  }
  const std::string id = next_topology_id(name);
  auto request = request_from_structure(id, structure, *topology_config);
  if (!request) return request.status();
  if (std::string problem = scheduler::validate(*request); !problem.empty()) {
    return Status(ErrorCode::kInvalidArgument, "topology '" + name + "': " + problem);
  }
  if (Status s = check_fits(*request); !s) return s;

  thrift::TopologyInfo stored;
  stored.summary.id = id;
  stored.summary.name = name;
  stored.__set_structure(structure);
  stored.__set_config(config);
  stored.__set_secret(security::random_bytes(32));  // the workers' proof of membership
  auto put = blobs_.put(topology_blob_key(id), encode_thrift(stored));
  if (!put) return put.status();

  thrift::TopologyRecord record;
  record.id = id;
  record.name = name;
  record.status = thrift::TopologyStatus::ACTIVE;
  record.launch_time_ms = now();
  record.code_blob_key = code_blob_key;
  record.code_sha256 = code->sha256;
  record.structure_blob_key = topology_blob_key(id);
  record.structure_sha256 = put->sha256;
  record.num_workers = request->workers;
  for (const auto& c : structure.components) record.component_executors[c.id] = c.parallelism;
  record.priority = request->priority;
  record.owner = submitter;
  try {
    security::TopologyAcl acl;
    security::read_acl_keys(*topology_config, acl);
    record.users = std::move(acl.users);
    record.readonly_users = std::move(acl.readonly_users);
    record.groups = std::move(acl.groups);
    record.readonly_groups = std::move(acl.readonly_groups);
  } catch (const ConfigError& e) {
    return Status(ErrorCode::kInvalidArgument, "topology '" + name + "': " + e.what());
  }
  if (auto created = store_.create(paths_.topology(id), encode_thrift(record)); !created) {
    (void)blobs_.remove(topology_blob_key(id));
    return created.status();
  }
  publish_replicas({record});
  logger_.info("submitted topology {} as {} ({} executors)", name, id, request->executors.size());
  trigger();
  return id;
}

namespace {

security::TopologyAcl acl_of(const thrift::TopologyRecord& record) {
  return security::TopologyAcl{
      record.name,   record.owner,           record.users, record.readonly_users,
      record.groups, record.readonly_groups, record.id};
}

}  // namespace

Result<security::TopologyAcl> Nimbus::topology_acl(const std::string& id_or_name) {
  auto found = find_record(id_or_name);
  if (!found) return found.status();
  return acl_of(found->first);
}

Result<thrift::WorkerToken> Nimbus::worker_token(const std::string& id_or_name) {
  auto found = find_record(id_or_name);
  if (!found) return found.status();
  return worker_tokens_.issue(found->first.id, found->first.owner, now());
}

Result<thrift::WorkerTokenInfo> Nimbus::verify_worker_token(const thrift::WorkerToken& token) {
  auto info = worker_tokens_.verify(token, now());
  if (!info) return info;
  auto found = find_record(info->topology_id);
  if (!found) {
    return Status(ErrorCode::kPermissionDenied, "worker token for topology '" + info->topology_id +
                                                    "', which is not running any more");
  }
  return info;
}

std::optional<security::TopologyAcl> Nimbus::blob_acl(const std::string& blob_key) {
  auto records = all_records();
  if (!records) return std::nullopt;
  for (const auto& r : *records) {
    if (r.code_blob_key == blob_key || r.structure_blob_key == blob_key ||
        blob_key.starts_with(checkpoint_key_prefix(r.id))) {
      return acl_of(r);
    }
  }
  return std::nullopt;
}

Status Nimbus::kill(const std::string& name, std::optional<int> wait_secs) {
  if (Status s = require_leader(); !s) return s;
  int timeout = options_.default_kill_wait_secs;
  if (!wait_secs) {
    // As Storm: by default the topology's message timeout, so that trees in
    // flight can complete (nimbus's own when the topology sets none, or its
    // structure cannot be read: a kill goes through regardless).
    if (auto found = find_record(name)) {
      if (auto loaded = load(found->first)) {
        timeout = static_cast<int>(
            config_int_or(loaded->config, keys::kTopologyMessageTimeoutSecs, timeout));
      }
    }
  }
  const int wait = std::max(0, wait_secs.value_or(timeout));
  const std::int64_t deadline = now() + wait * 1000LL;
  auto record = update_record(name, [&](thrift::TopologyRecord& r) -> Status {
    r.status = thrift::TopologyStatus::KILLED;
    r.kill_wait_secs = wait;
    r.kill_deadline_ms = deadline;
    r.status_reason = "killed; assignment removed after " + std::to_string(wait) + " s";
    return Status::ok();
  });
  if (!record) return record.status();
  logger_.info("killing topology {} (wait {} s)", record->id, wait);
  trigger();
  return Status::ok();
}

Status Nimbus::set_status(const std::string& name, thrift::TopologyStatus::type from_a,
                          thrift::TopologyStatus::type from_b, thrift::TopologyStatus::type to,
                          const char* verb) {
  if (Status s = require_leader(); !s) return s;
  return update_record(name,
                       [&](thrift::TopologyRecord& record) -> Status {
                         // Unschedulable: what it is once placed, and meanwhile
                         // in the workers that run on.
                         if (record.status == thrift::TopologyStatus::UNSCHEDULABLE) {
                           record.resume_status = to;
                           return Status::ok();
                         }
                         if (record.status != from_a && record.status != from_b) {
                           return Status(ErrorCode::kInvalidArgument,
                                         std::string("cannot ") + verb + " topology '" + name +
                                             "': it is " + thrift::to_string(record.status));
                         }
                         record.status = to;
                         return Status::ok();
                       })
      .status();
}

Status Nimbus::activate(const std::string& name) {
  return set_status(name, thrift::TopologyStatus::ACTIVE, thrift::TopologyStatus::INACTIVE,
                    thrift::TopologyStatus::ACTIVE, "activate");
}

Status Nimbus::deactivate(const std::string& name) {
  return set_status(name, thrift::TopologyStatus::ACTIVE, thrift::TopologyStatus::INACTIVE,
                    thrift::TopologyStatus::INACTIVE, "deactivate");
}

Status Nimbus::rebalance(const std::string& name, const thrift::RebalanceOptions& options) {
  if (Status s = require_leader(); !s) return s;
  auto found = find_record(name);
  if (!found) return found.status();
  thrift::TopologyRecord record = found->first;
  if (record.status == thrift::TopologyStatus::KILLED ||
      record.status == thrift::TopologyStatus::REBALANCING) {
    return Status(ErrorCode::kInvalidArgument, "cannot rebalance topology '" + name + "': it is " +
                                                   thrift::to_string(record.status));
  }
  auto loaded = load(record);
  if (!loaded) return loaded.status();
  if (options.__isset.num_workers && options.num_workers < 1) {
    return Status(ErrorCode::kInvalidArgument,
                  "cannot rebalance topology '" + name + "' to " +
                      std::to_string(options.num_workers) +
                      " workers (rebalance -n, numWorkers): at least 1");
  }
  if (options.__isset.num_workers &&
      loaded->request.strategy != scheduler::Strategy::kRoundRobin) {
    return Status(ErrorCode::kInvalidArgument,
                  "cannot rebalance topology '" + name + "' to " +
                      std::to_string(options.num_workers) +
                      " workers (rebalance -n, numWorkers): it is placed by the resource-aware "
                      "scheduler, which packs executors into workers by their memory "
                      "(topology.worker.max.heap.size.mb), so nothing was changed; change its "
                      "executors (rebalance -e, executors), or submit it with "
                      "topology.scheduler.strategy=round-robin to choose the number of workers");
  }
  if (options.__isset.num_executors) {
    for (const auto& [component, executors] : options.num_executors) {
      const thrift::ComponentDef* def = nullptr;
      for (const auto& c : loaded->structure.components) {
        if (c.id == component) def = &c;
      }
      if (def == nullptr) {
        return Status(ErrorCode::kInvalidArgument,
                      "topology '" + name + "' has no component '" + component + "'");
      }
      const int tasks = def->num_tasks > 0 ? def->num_tasks : def->parallelism;
      if (executors < 1 || executors > tasks) {
        return Status(ErrorCode::kInvalidArgument,
                      "component '" + component + "' has " + std::to_string(tasks) +
                          " tasks; it can run on 1 to " + std::to_string(tasks) +
                          " executors, not " + std::to_string(executors));
      }
    }
  }
  if (options.__isset.resource_overrides) {
    thrift::TopologyStructure changed = loaded->structure;
    if (Status s = apply_resource_overrides(changed, options.resource_overrides); !s) {
      return Status(ErrorCode::kInvalidArgument, "new resources: " + s.message());
    }
  }
  // As Storm: the spouts are deactivated for the wait, by default the
  // topology's message timeout, so that trees in flight can complete.
  const int wait = options.__isset.wait_secs
                       ? std::max(0, options.wait_secs)
                       : static_cast<int>(config_int_or(loaded->config,
                                                        keys::kTopologyMessageTimeoutSecs,
                                                        options_.default_kill_wait_secs));
  // Written over the record as it is now: a kill or a deactivate that came
  // after the checks above is kept (refused, or the state to return to).
  auto written = update_record(record.id, [&](thrift::TopologyRecord& now_record) -> Status {
    if (now_record.status == thrift::TopologyStatus::KILLED ||
        now_record.status == thrift::TopologyStatus::REBALANCING) {
      return Status(ErrorCode::kInvalidArgument, "cannot rebalance topology '" + name +
                                                     "': it is " +
                                                     thrift::to_string(now_record.status));
    }
    // In the record: whichever nimbus leads at the deadline applies it.
    now_record.__set_rebalance(options);
    now_record.rebalance_deadline_ms = now() + wait * 1000LL;
    now_record.resume_status = user_status(now_record);
    now_record.status = thrift::TopologyStatus::REBALANCING;
    now_record.status_reason =
        "rebalancing in " + std::to_string(wait) + " s (spouts deactivated)";
    return Status::ok();
  });
  if (!written) return written.status();
  trigger();
  return Status::ok();
}

Result<std::string> Nimbus::begin_upload(const std::string& blob_key) {
  if (Status s = require_leader(); !s) return s;
  return blobs_.begin_upload(blob_key);
}

Status Nimbus::upload_chunk(const std::string& session, const std::string& chunk) {
  return blobs_.upload_chunk(session, chunk);
}

Result<thrift::BlobSummary> Nimbus::finish_upload(const std::string& session, std::int64_t size,
                                                  const std::string& sha256) {
  if (size < 0) return Status(ErrorCode::kCorruption, "upload declares a negative size");
  auto info = blobs_.finish_upload(session, static_cast<std::uint64_t>(size), sha256);
  if (!info) return info.status();
  thrift::BlobSummary out;
  out.key = info->key;
  out.size = static_cast<std::int64_t>(info->size);
  out.sha256 = info->sha256;
  out.chunk_count = static_cast<std::int32_t>(info->chunk_count);
  return out;
}

Result<thrift::DownloadHandle> Nimbus::begin_download(const std::string& blob_key) {
  auto info = blobs_.info(blob_key);
  if (!info) return info.status();
  thrift::DownloadHandle handle;
  handle.blob.key = info->key;
  handle.blob.size = static_cast<std::int64_t>(info->size);
  handle.blob.sha256 = info->sha256;
  handle.blob.chunk_count = static_cast<std::int32_t>(info->chunk_count);
  std::lock_guard lock(mutex_);
  // Abandoned downloads are bounded: the oldest sessions go first.
  constexpr std::size_t kMaxDownloads = 1024;
  while (downloads_.size() >= kMaxDownloads) downloads_.erase(downloads_.begin());
  char session[32];
  std::snprintf(session, sizeof session, "d%016llu",
                static_cast<unsigned long long>(++next_download_));
  handle.session = session;
  downloads_[handle.session] = Download{blob_key, 0, info->chunk_count};
  return handle;
}

Result<std::string> Nimbus::download_chunk(const std::string& session) {
  Download download;
  {
    std::lock_guard lock(mutex_);
    auto it = downloads_.find(session);
    if (it == downloads_.end()) {
      return Status(ErrorCode::kNotFound, "download session '" + session + "' is unknown");
    }
    if (it->second.next >= it->second.chunks) {
      downloads_.erase(it);
      return std::string();
    }
    download = it->second;
    ++it->second.next;
  }
  return blobs_.read_chunk(download.key, download.next);
}

Status Nimbus::supervisor_heartbeat(const thrift::SupervisorHeartbeat& heartbeat) {
  if (Status s = require_leader(); !s) return s;
  const std::int64_t t = now();
  std::unique_lock lock(mutex_);
  const std::string& id = heartbeat.info.id;
  supervisor_beats_[id] = t;
  heartbeating_supervisors_.insert(id);
  if (heartbeat.__isset.failures && !heartbeat.failures.empty()) {
    supervisor_failures_[id] = {heartbeat.failures, t};
  } else {
    supervisor_failures_.erase(id);
  }
  for (const auto& w : heartbeat.workers) {
    const SlotKey key{w.topology_id, w.slot.node_id, w.slot.port};
    worker_beats_[key] = t;
    // From the worker's own uptime: a worker restarted in place (a crash,
    // a rebalance) starts its executors' uptime again.
    worker_started_[key] = t - std::max<std::int64_t>(0, w.uptime_secs) * 1000;
    if (w.__isset.stall) {
      worker_stalls_[key] = {w.stall, t};
    } else {
      worker_stalls_.erase(key);
    }
    if (w.__isset.fused && !w.fused.empty()) {
      worker_fused_[key] = {w.fused, t};
    } else {
      worker_fused_.erase(key);
    }
  }
  lock.unlock();
  record_errors(heartbeat);
  return Status::ok();
}

}  // namespace rstorm::nimbus
