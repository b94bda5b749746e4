#include "worker/process/worker_process.hpp"

#include <thrift/Thrift.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <sstream>
#include <thread>

#include "common/metrics/security_config.hpp"
#include "common/process_info.hpp"
#include "common/security/tls.hpp"
#include "common/thrift/codec.hpp"
#include "rstorm/topology_library.hpp"
#include "rstorm/worker/state_backends.hpp"
#include "worker/process/nimbus_checkpoint_store.hpp"

namespace rstorm::worker_process {
namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The transport's settings from the topology's config (defaults as in
// conf/defaults.yaml when a key is absent).
Result<transport::TransportOptions> transport_options(const WorkerSpec& spec,
                                                      const worker::TopologyPlan& plan,
                                                      std::vector<TaskId> local_tasks,
                                                      std::shared_ptr<spdlog::logger> logger) {
  transport::TransportOptions o;
  o.topology_id = spec.topology_id;
  o.self = transport::WorkerAddress{spec.host, spec.port};
  o.local_tasks = std::move(local_tasks);
  o.batch_size = plan.settings.batch_size;
  o.logger = std::move(logger);
  try {
    const Config& c = spec.config;
    o.flush_interval = std::chrono::milliseconds(
        std::max<std::int64_t>(1, worker::config_int(c, "topology.batch.flush.interval.millis", 1)));
    o.max_frame_bytes = static_cast<std::size_t>(
        worker::config_int(c, "worker.transport.max.frame.bytes", 16 << 20));
    o.max_buffered_bytes = static_cast<std::size_t>(
        worker::config_int(c, "worker.transport.buffer.bytes", 8 << 20));
    o.reconnect_min = std::chrono::milliseconds(
        std::max<std::int64_t>(1, worker::config_int(c, "storm.messaging.netty.min_wait_ms", 100)));
    o.reconnect_max = std::max(o.reconnect_min, std::chrono::milliseconds(worker::config_int(
                                                    c, "storm.messaging.netty.max_wait_ms", 1000)));
    o.authenticate = c.get_bool("storm.messaging.netty.authentication", false);
    if (c.get_bool("storm.messaging.netty.tls.enable", false)) {
      o.tls = security::tls_files_from_config(c, "storm.messaging.netty.tls");
      if (!o.tls || !o.tls->complete()) {
        return Status(ErrorCode::kInvalidArgument,
                      "storm.messaging.netty.tls.enable is on but storm.messaging.netty.tls."
                      "cert.path, .key.path and .ca.path are not all set");
      }
    }
  } catch (const ConfigError& e) {
    return Status(ErrorCode::kInvalidArgument, e.what());
  }
  if (o.authenticate) {
    if (spec.secret.empty()) {
      return Status(ErrorCode::kInvalidArgument,
                    "storm.messaging.netty.authentication is on but topology '" + spec.topology_id +
                        "' has no secret in this worker's spec (from nimbus)");
    }
    o.secret = spec.secret;
  }
  return o;
}

// This worker's /metrics, guarded as its storm.metrics.tls.* and .auth.* keys say.
api::Result<std::unique_ptr<worker::WorkerMetrics>> start_metrics(const WorkerSpec& s,
                                                                  worker::ExecutorSource source) {
  metrics::ServerSecurity security;
  try {
    security = metrics::server_security_from_config(s.config);
  } catch (const ConfigError& e) {
    return api::Status::error(e.what());
  }
  return worker::WorkerMetrics::start(
      s.config.get_string("storm.metrics.host", "127.0.0.1"),
      s.port + static_cast<int>(s.config.get_int("worker.metrics.port.offset", 1000)),
      s.topology_name, std::move(source), security);
}

}  // namespace

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::start(WorkerSpec spec,
                                                            std::shared_ptr<spdlog::logger> logger) {
  auto loaded = load_topology_library(spec.library.string());
  if (!loaded.ok()) return Status(ErrorCode::kInvalidArgument, loaded.status().message());
  auto topology = loaded->build(spec.config);
  if (!topology.ok()) {
    return Status(ErrorCode::kInvalidArgument, "topology in '" + spec.library.string() +
                                                   "' does not build: " +
                                                   topology.status().message());
  }
  std::unique_ptr<WorkerProcess> process(new WorkerProcess(std::move(spec), logger));
  const WorkerSpec& s = process->spec_;
  SlotRuntimeOptions options;
  options.topology_name = s.topology_name;
  options.config = s.config;
  options.executors = s.executors;
  options.node_id = s.supervisor_id;
  options.port = s.port;
  options.logger = logger;
  options.seed = std::hash<std::string>()(s.topology_id) ^ static_cast<std::uint64_t>(s.port) ^
                 static_cast<std::uint64_t>(::getpid());
  // Keyed state: RocksDB under this worker's folder unless the config says
  // otherwise. The folder outlives the process (the supervisor keeps it), so
  // a restarted worker of this slot finds its tasks' state again.
  worker::StateBackendDefaults state;
  state.provider = "rocksdb";
  state.dir = s.worker_dir / "state";
  state.topology = s.topology_id;
  auto backend = worker::make_state_backend(s.config, state);
  if (!backend.ok()) {
    return Status(ErrorCode::kInvalidArgument,
                  "cannot run topology '" + s.topology_id + "': " + backend.status().message());
  }
  options.state_backend = std::move(backend).value();
  auto checkpoints = process->open_checkpoints();
  if (!checkpoints) {
    return Status(ErrorCode::kInvalidArgument,
                  "cannot run topology '" + s.topology_id + "': " + checkpoints.status().message());
  }
  process->checkpoints_ = std::move(checkpoints).value();
  options.checkpoint_store = process->checkpoints_;
  auto runtime = SlotRuntime::create(std::move(options), *topology);
  if (!runtime.ok()) {
    return Status(ErrorCode::kInvalidArgument,
                  "cannot run topology '" + s.topology_id + "': " + runtime.status().message());
  }
  process->runtime_ = std::move(runtime).value();
  SlotRuntime& rt = *process->runtime_;
  try {
    const std::int64_t secs =
        worker::config_int(s.config, keys::kTopologyStallTimeoutSecs, 10);
    if (secs < 1) {
      return Status(ErrorCode::kInvalidArgument,
                    std::string(keys::kTopologyStallTimeoutSecs) + " must be at least 1, got " +
                        std::to_string(secs));
    }
    process->stall_timeout_ = std::chrono::seconds(secs);
  } catch (const ConfigError& e) {
    return Status(ErrorCode::kInvalidArgument, e.what());
  }

  process->data_plane_ = std::make_unique<DataPlane>(rt, logger);
  auto topts = transport_options(s, rt.runtime().plan(), rt.local_tasks(), logger);
  if (!topts) return topts.status();
  // Workers of two recovery epochs must not exchange tuples: the older
  // ones' state is about to be thrown away.
  if (process->checkpoints_)
    topts->topology_id += "#epoch-" + std::to_string(process->checkpoints_->epoch());
  auto transport = transport::Transport::start(rt.runtime().plan(), std::move(topts).value(),
                                               process->data_plane_.get());
  if (!transport) {
    return Status(transport.code(), "worker of topology '" + s.topology_id + "' cannot listen on " +
                                        s.host + ":" + std::to_string(s.port) + ": " +
                                        transport.status().message());
  }
  process->transport_ = std::move(transport).value();
  if (Status routed = process->apply_routes(s, rt.task_slots()); !routed) return routed;
  process->data_plane_->start(process->transport_.get());

  process->apply_status();  // before start: an INACTIVE topology starts with quiet spouts
  process->started_ = std::chrono::steady_clock::now();
  rt.start();
  const bool tls = s.config.get_bool("storm.messaging.netty.tls.enable", false);
  const bool authenticated = s.config.get_bool("storm.messaging.netty.authentication", false);
  logger->info(
      "worker for topology '{}' slot {}:{} listens on {}:{} ({}{}), runs {} executors "
      "({} ackers), assignment version {}",
      s.topology_id, s.supervisor_id, s.port, s.host, s.port, tls ? "mutual TLS" : "plaintext",
      authenticated ? ", peers authenticated" : "", rt.own_executors().size(), rt.num_ackers_here(),
      s.assignment_version);
  // /metrics at slot port + worker.metrics.port.offset; a port in use or a bad
  // storm.metrics.tls/auth key is logged, not fatal (the supervisor checked the keys).
  const worker::TopologyRuntime& executors = rt.runtime();
  auto metrics = start_metrics(s, [&executors](const worker::ExecutorVisitor& visit) {
    for (const auto& e : executors.executors()) visit(*e);
  });
  if (metrics.ok()) {
    process->metrics_ = std::move(metrics).value();
    const WorkerProcess* self = process.get();
    process->metrics_->add([self, topology = s.topology_name](metrics::Snapshot& out) {
      const worker::StallReport stall = self->stall();
      out.gauge("rstorm_topology_stalled",
                "1 while a spout of this worker has waited topology.stall.timeout.secs without "
                "progress (trees pending, none completed)",
                {{"topology", topology}}, stall.stalled() ? 1.0 : 0.0);
      out.gauge("rstorm_topology_stalled_seconds",
                "The longest time a spout of this worker has waited without progress",
                {{"topology", topology}}, static_cast<double>(stall.stalled_ms) / 1000);
      for (const auto& [name, value] : self->data_plane_counters()) {
        const metrics::Labels l = {{"topology", topology}};
        const double v = static_cast<double>(value);
        if (name == "throttled_tasks") {
          out.gauge("rstorm_transport_throttled_tasks",
                    "Local tasks this worker currently asks its senders to hold", l, v);
        } else if (name == "remote_throttled_ms") {
          out.counter("rstorm_transport_remote_throttled_seconds_total",
                      "Time this worker's senders were held by a throttled peer", l, v / 1000);
        } else {
          out.counter("rstorm_transport_" + name + "_total",
                      "Worker-to-worker data plane: " + name, l, v);
        }
      }
      if (self->transport_) {
        for (const auto& [peer, sent] : self->transport_->peer_tuples_sent()) {
          out.counter("rstorm_transport_peer_tuples_sent_total",
                      "Envelopes (tuples and acker messages) written to one peer worker",
                      {{"topology", topology}, {"peer", peer.to_string()}},
                      static_cast<double>(sent));
        }
      }
    });
  } else {
    logger->warn("no /metrics: {}", metrics.status().message());
  }
  Status written = process->write_heartbeat();
  if (!written) logger->warn("{}", written.to_string());
  return process;
}

WorkerProcess::~WorkerProcess() { shutdown(); }

void WorkerProcess::shutdown() {
  if (stopped_) return;
  stopped_ = true;
  // Executors first (no new sends), then the data plane's thread (nothing
  // left to fail trees for), then the transport (unsent envelopes are counted).
  const auto t0 = std::chrono::steady_clock::now();
  if (runtime_) runtime_->stop();
  const auto t1 = std::chrono::steady_clock::now();
  if (data_plane_) data_plane_->stop();
  if (transport_) transport_->stop();
  const auto t2 = std::chrono::steady_clock::now();
  auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  logger_->info("executors stopped in {} ms, data plane in {} ms", ms(t1 - t0), ms(t2 - t1));
}

Status WorkerProcess::apply_routes(const WorkerSpec& spec, const std::vector<SlotKey>& slots) {
  std::map<SlotKey, transport::PeerWorker> peers;
  for (std::size_t t = 1; t < slots.size(); ++t) {
    const SlotKey& slot = slots[t];
    if (slot == runtime_->self()) continue;
    auto [it, added] = peers.try_emplace(slot);
    if (added) {
      std::string host = spec.host_of(slot.node_id);
      if (host.empty()) {
        return Status(ErrorCode::kInvalidArgument,
                      "the assignment gives no host for node '" + slot.node_id + "' (node_hosts)");
      }
      it->second.address = transport::WorkerAddress{std::move(host), slot.port};
    }
    const TaskId task(static_cast<int>(t));
    it->second.tasks.push_back(task);
    runtime_->route(task, transport_->sink(it->second.address));
  }
  std::vector<transport::PeerWorker> list;
  for (auto& [slot, peer] : peers) list.push_back(std::move(peer));
  logger_->info("[topology={}] {} peer workers (assignment version {})", spec.topology_id,
                list.size(), spec.assignment_version);
  transport_->set_peers(std::move(list));
  return Status::ok();
}

void WorkerProcess::follow_assignment() {
  auto text = read_whole_file(spec_.spec_file());
  if (!text) return;  // removed while stopping, or not written by a supervisor
  auto next = spec_from_json(*text);
  if (!next) {
    logger_->warn("ignoring {}: {}", spec_.spec_file().string(), next.status().to_string());
    return;
  }
  if (next->assignment_version == spec_.assignment_version) return;
  auto slots = runtime_->layout_of(next->executors);
  if (!slots.ok()) {
    logger_->warn("assignment version {} of topology '{}' changes this worker ({}): exiting so "
                  "that the supervisor starts it again",
                  next->assignment_version, spec_.topology_id, slots.status().message());
    restart_needed_ = true;
    return;
  }
  logger_->info("assignment version {} -> {} of topology '{}': executors of other workers changed; "
                "re-routed",
                spec_.assignment_version, next->assignment_version, spec_.topology_id);
  if (Status s = apply_routes(*next, *slots); !s) {
    logger_->warn("assignment version {}: {}; exiting so that the supervisor starts it again",
                  next->assignment_version, s.to_string());
    restart_needed_ = true;
    return;
  }
  spec_ = std::move(next).value();
}

Result<std::shared_ptr<worker::SharedCheckpointStore>> WorkerProcess::connect_checkpoint_store(
    std::chrono::milliseconds timeout, std::string* where) {
  const WorkerSpec& s = spec_;
  std::string kind = "nimbus";
  std::filesystem::path dir = s.worker_dir.parent_path().parent_path() / "checkpoints";
  try {
    if (const Config::Entry* e = s.config.find(keys::kTopologyStateCheckpointStore);
        e != nullptr && !e->value.is_null()) {
      kind = s.config.get_string(keys::kTopologyStateCheckpointStore);
    }
    if (const Config::Entry* e = s.config.find(keys::kTopologyStateCheckpointDir);
        e != nullptr && !e->value.is_null()) {
      dir = s.config.get_string(keys::kTopologyStateCheckpointDir);
    }
  } catch (const ConfigError& e) {
    return Status(ErrorCode::kInvalidArgument, e.what());
  }
  if (kind == "folder") {
    dir /= s.topology_id;
    if (where != nullptr) *where = dir.string();
    return std::shared_ptr<worker::SharedCheckpointStore>(
        std::make_shared<worker::FolderCheckpointStore>(dir));
  }
  if (kind != "nimbus") {
    return Status(ErrorCode::kInvalidArgument,
                  std::string(keys::kTopologyStateCheckpointStore) + " is '" + kind +
                      "', which keeps checkpoints in one process; a cluster's workers share "
                      "them through nimbus (nimbus, the default) or a folder (folder)");
  }
  nimbus::NimbusClient::Options options;
  try {
    auto token = read_whole_file(s.worker_dir / kWorkerTokenFile);
    if (token) {
      auto decoded = decode_thrift<thrift::WorkerToken>(*token, "WorkerToken");
      if (!decoded) return decoded.status();
      options = nimbus::NimbusClient::worker_options_from_config(s.config, *decoded);
    } else {
      options = nimbus::NimbusClient::options_from_config(s.config);
    }
  } catch (const ConfigError& e) {
    return Status(ErrorCode::kInvalidArgument, e.what());
  }
  options.timeout = timeout;
  // A checkpoint that cannot reach nimbus is reported naming the task and
  // checkpoint; Thrift's own line per refused socket would only flood the log.
  apache::thrift::GlobalOutput.setOutputFunction([](const char*) {});
  auto client = nimbus::NimbusClient::connect(options);
  if (!client) {
    return Status(client.code(),
                  "cannot reach nimbus for the checkpoints: " + client.status().message());
  }
  if (where != nullptr) *where = "nimbus at " + (*client)->address().to_string();
  return std::shared_ptr<worker::SharedCheckpointStore>(std::make_shared<NimbusCheckpointStore>(
      std::shared_ptr<nimbus::NimbusClient>(std::move(client).value()), s.topology_id));
}

Result<std::shared_ptr<worker::SharedCheckpointStore>> WorkerProcess::open_checkpoints() {
  const WorkerSpec& s = spec_;
  auto settings = worker::checkpoint_settings(s.config);
  if (!settings.ok()) return Status(ErrorCode::kInvalidArgument, settings.status().message());
  if (!settings->enabled) return std::shared_ptr<worker::SharedCheckpointStore>();
  std::string where;
  auto probe = connect_checkpoint_store(std::chrono::seconds(30), &where);
  if (!probe) return probe.status();
  // The epoch is polled often, with a short timeout and on its own
  // connection: a part being uploaded must not delay it.
  auto watch = connect_checkpoint_store(std::chrono::seconds(2), nullptr);
  if (!watch) return watch.status();
  epoch_watch_ = *watch;
  const auto started = s.worker_dir / "checkpoint-started";
  const auto exited = s.worker_dir / "checkpoint-epoch-exit";
  std::error_code ec;
  const bool ran_before = std::filesystem::exists(started, ec);
  const bool left_for_epoch = std::filesystem::exists(exited, ec);
  const auto stopped = s.worker_dir / "checkpoint-stopped";
  const bool was_stopped = std::filesystem::exists(stopped, ec);
  auto complete = (*probe)->complete_checkpoints();
  if (!complete.ok()) return Status(ErrorCode::kIoError, complete.status().message());
  const bool has_checkpoints = !complete->empty();
  auto read = (*probe)->read_epoch();
  if (!read.ok()) return Status(ErrorCode::kIoError, read.status().message());
  std::int64_t epoch = *read;
  std::string why;
  if (ran_before && !left_for_epoch) {
    why = was_stopped ? "this worker starts again after it was stopped (its executors changed, "
                        "or its supervisor restarted it)"
                      : "this worker starts again after an unexpected end";
  } else if (!ran_before && has_checkpoints) {
    why = "this worker joins a topology that has checkpoints (its executors moved here)";
  }
  if (!why.empty()) {
    auto moved = (*probe)->bump_epoch();
    if (!moved.ok()) {
      return Status(ErrorCode::kIoError,
                    "checkpoints in " + where + ": " + moved.status().message());
    }
    epoch = *moved;
    logger_->warn(
        "[topology={}] {}: recovery epoch {} -> {}; every worker of the topology "
        "restarts and restores the last complete checkpoint from {}",
        s.topology_id, why, epoch - 1, epoch, where);
  }
  std::filesystem::remove(exited, ec);
  std::filesystem::remove(stopped, ec);
  if (Status w = write_file_atomically(started, std::to_string(epoch) + "\n"); !w) return w;
  logger_->info("[topology={}] checkpoints in {} (recovery epoch {})", s.topology_id, where, epoch);
  return (*probe)->in_epoch(epoch);
}

void WorkerProcess::follow_epoch() {
  if (!checkpoints_ || !epoch_watch_) return;
  auto now = epoch_watch_->read_epoch();
  if (!now.ok()) {
    // Nimbus may be failing over: the epoch is read again next time.
    const auto t = std::chrono::steady_clock::now();
    if (t - epoch_unreadable_logged_ > std::chrono::seconds(10)) {
      epoch_unreadable_logged_ = t;
      logger_->warn("[topology={}] {}", spec_.topology_id, now.status().message());
    }
    return;
  }
  if (*now <= checkpoints_->epoch()) return;
  logger_->warn(
      "[topology={}] recovery epoch {} -> {} (another worker restarted): exiting so "
      "that the supervisor starts this one again on the last complete checkpoint",
      spec_.topology_id, checkpoints_->epoch(), *now);
  Status w = write_file_atomically(spec_.worker_dir / "checkpoint-epoch-exit",
                                   std::to_string(*now) + "\n");
  if (!w) logger_->warn("{}", w.to_string());
  restart_needed_ = true;
  epoch_exit_ = true;
}

namespace {

// Whether `mark` ("<pid> <start ticks>", supervisor_file) names a live
// process: the pid alive with the same start time (not a reused pid).
bool supervisor_alive(const std::string& mark) {
  std::istringstream in(mark);
  long pid = 0;
  std::uint64_t ticks = 0;
  if (!(in >> pid >> ticks) || pid <= 0) return true;  // unreadable: not ours to judge
  const auto start = process_start_ticks(static_cast<pid_t>(pid));
  return start && (ticks == 0 || *start == ticks);
}

}  // namespace

void WorkerProcess::check_supervisor() {
  if (spec_.orphan_timeout_ms <= 0) return;
  auto mark = read_whole_file(spec_.supervisor_file());
  if (!mark) return;  // not started by a supervisor (a bench, a test)
  const auto now = std::chrono::steady_clock::now();
  if (supervisor_alive(*mark)) {
    if (supervisor_gone_since_) {
      logger_->info("[topology={}] a supervisor took this worker over again", spec_.topology_id);
    }
    supervisor_gone_since_.reset();
    return;
  }
  if (!supervisor_gone_since_) {
    supervisor_gone_since_ = now;
    logger_->warn("[topology={}] the supervisor of this worker (process {}) is gone; it stops "
                  "in {} ms unless a restarted supervisor takes it over",
                  spec_.topology_id, mark->substr(0, mark->find(' ')), spec_.orphan_timeout_ms);
    return;
  }
  if (now - *supervisor_gone_since_ >= std::chrono::milliseconds(spec_.orphan_timeout_ms)) {
    logger_->error("[topology={}] no supervisor took this worker over within {} ms (a "
                   "little less than nimbus.supervisor.timeout.secs): nimbus runs its executors "
                   "elsewhere from then on, so it stops rather than run them twice",
                   spec_.topology_id, spec_.orphan_timeout_ms);
    orphaned_ = true;
  }
}

void WorkerProcess::apply_status() {
  auto text = read_whole_file(spec_.status_file());
  if (!text) return;  // no file yet: keep the current state
  std::string word = *text;
  while (!word.empty() && std::isspace(static_cast<unsigned char>(word.back()))) word.pop_back();
  const bool want_active = word == kStatusActive;
  if (word != kStatusActive && word != kStatusInactive) return;
  if (want_active != runtime_->active()) {
    logger_->info("topology '{}' is now {}: spouts {}", spec_.topology_id, word,
                  want_active ? "activated" : "deactivated");
    if (want_active) {
      runtime_->activate();
    } else {
      runtime_->deactivate();
    }
  }
}

std::map<std::string, std::uint64_t> WorkerProcess::data_plane_counters() const {
  std::map<std::string, std::uint64_t> out;
  if (transport_) {
    const transport::TransportStats t = transport_->stats();
    out["tuples_sent"] = t.tuples_sent;
    out["tuples_received"] = t.tuples_received;
    out["frames_sent"] = t.frames_sent;
    out["frames_received"] = t.frames_received;
    out["bytes_sent"] = t.bytes_sent;
    out["bytes_received"] = t.bytes_received;
    out["connects"] = t.connects;
    out["reconnects"] = t.reconnects;
    out["connection_errors"] = t.connection_errors;
    out["peers_stopped"] = t.peers_stopped;
    out["frames_rejected"] = t.frames_rejected;
    out["connections_refused"] = t.connections_refused;
    out["remote_backpressure_events"] = t.remote_backpressure_events;
    out["remote_throttled_ms"] = t.remote_throttled_ns / 1'000'000;
    out["local_backpressure_events"] = t.local_backpressure_events;
  }
  if (data_plane_) {
    const DataPlaneCounters d = data_plane_->counters();
    out["undeliverable"] = d.undeliverable_envelopes;
    out["trees_failed_undeliverable"] = d.trees_failed;
    out["backpressure_engaged"] = d.backpressure_engaged;
    out["backpressure_released"] = d.backpressure_released;
    out["throttled_tasks"] = d.throttled_tasks;
  }
  return out;
}

Status WorkerProcess::write_heartbeat() {
  // A worker is started once every task is open or prepared: until then its
  // supervisor (and `submit --wait`) sees no heartbeat, and a task whose open
  // or prepare throws ends the worker before it ever looks started.
  if (!runtime_->runtime().ready()) return Status::ok();
  announced_ = true;
  WorkerHeartbeatFile h;
  h.time_ms = now_ms();
  h.pid = ::getpid();
  h.topology_id = spec_.topology_id;
  h.port = spec_.port;
  h.active = runtime_->active();
  h.uptime_secs = std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::steady_clock::now() - started_)
                      .count();
  h.executors = runtime_->own_executors();
  for (const auto& c : runtime_->stats().components) {
    h.components[c.id] = {{"emitted", c.emitted},   {"transferred", c.transferred},
                          {"acked", c.acked},       {"failed", c.failed},
                          {"executed", c.executed}, {"errors", c.errors}};
    if (!c.fused_into.empty()) h.fused[c.id] = c.fused_into;
  }
  h.data_plane = data_plane_counters();
  runtime_->log_errors_not_logged();
  h.errors = runtime_->recent_errors();
  const worker::StallReport stall = this->stall();
  if (stall.stalled()) {
    h.stalled_ms = stall.stalled_ms;
    h.stall_pending = stall.pending;
    h.stalled_spouts = stall.stalled_spouts;
    h.queued = stall.queued;
    h.full_queues = stall.full_queues;
  }
  if (stall.stalled() != stall_logged_) {
    stall_logged_ = stall.stalled();
    if (stall_logged_) {
      auto join = [](const std::vector<std::string>& v) {
        std::string out;
        for (const auto& c : v) out += (out.empty() ? "" : ", ") + c;
        return out.empty() ? std::string("none") : out;
      };
      logger_->warn("[topology={}] no progress for {} s: {} trees pending at {}; tuples queued "
                    "at {}; queues full: {}",
                    spec_.topology_id, stall.stalled_ms / 1000, stall.pending,
                    join(stall.stalled_spouts), join(stall.queued), join(stall.full_queues));
    } else {
      logger_->info("[topology={}] progress again", spec_.topology_id);
    }
  }
  return write_file_atomically(spec_.heartbeat_file(), heartbeat_to_json(h));
}

void WorkerProcess::tick() {
  apply_status();
  follow_assignment();
  Status written = write_heartbeat();
  if (!written) logger_->warn("{}", written.to_string());
}

void WorkerProcess::run(const std::atomic<bool>& stop) {
  const auto interval = std::chrono::milliseconds(spec_.heartbeat_interval_ms);
  const auto poll = std::min(interval, std::chrono::milliseconds(100));
  auto next_beat = std::chrono::steady_clock::now() + interval;
  while (!stop.load() && !restart_needed_ && !orphaned_) {
    std::this_thread::sleep_for(poll);
    if (std::string fatal = runtime_->runtime().fatal_error(); !fatal.empty()) {
      failure_ = std::move(fatal);
      logger_->error("[topology={}] {}: the worker ends", spec_.topology_id, failure_);
      break;
    }
    apply_status();
    follow_epoch();
    if (restart_needed_) break;
    if (!announced_) {
      Status written = write_heartbeat();  // the first as soon as every task is ready
      if (!written) logger_->warn("{}", written.to_string());
    }
    if (std::chrono::steady_clock::now() >= next_beat) {
      check_supervisor();
      if (orphaned_) break;
      follow_assignment();
      Status written = write_heartbeat();
      if (!written) logger_->warn("{}", written.to_string());
      next_beat += interval;
    }
  }
  if (epoch_exit_) {
    // Everything this worker holds belongs to an epoch being thrown away:
    // nothing to hand over or flush, and waiting on peers that now refuse
    // it would only delay the recovery. Exit at once, for a restart.
    logger_->info("worker for topology '{}' slot {}:{} exits at once for the new recovery epoch",
                  spec_.topology_id, spec_.supervisor_id, spec_.port);
    logger_->flush();
    std::_Exit(3);
  }
  logger_->info("worker for topology '{}' slot {}:{} stopping", spec_.topology_id,
                spec_.supervisor_id, spec_.port);
  if (checkpoints_) {
    // A stop asked for (a rebalance, a kill, the supervisor): the next start
    // here still moves the recovery epoch (what this worker's tasks held
    // since the last checkpoint is gone), and says why.
    Status w = write_file_atomically(spec_.worker_dir / "checkpoint-stopped", "stopped\n");
    if (!w) logger_->warn("{}", w.to_string());
  }
  shutdown();
}

}  // namespace rstorm::worker_process
