#include "supervisor/supervisor.hpp"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <fstream>
#include <iterator>

#include "common/thrift/codec.hpp"
#include "worker/transport/transport.hpp"

namespace rstorm::supervisor {

namespace wp = worker_process;
using Clock = std::chrono::steady_clock;

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool same_executors(std::vector<wp::SpecExecutor> a, std::vector<wp::SpecExecutor> b) {
  auto key = [](const wp::SpecExecutor& e) {
    return std::tie(e.component, e.task_start, e.task_end);
  };
  auto less = [&](const auto& x, const auto& y) { return key(x) < key(y); };
  std::sort(a.begin(), a.end(), less);
  std::sort(b.begin(), b.end(), less);
  return a == b;
}

// The last non-empty line of `log` (a worker's log), for a failure that left
// no `failure` file (a crash): usually what the worker said last.
std::string last_log_line(const std::filesystem::path& log) {
  std::ifstream in(log, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - 4096);
  in.seekg(from);
  std::string tail((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  const auto nl = tail.rfind('\n');
  return nl == std::string::npos ? tail : tail.substr(nl + 1);
}

// Back-off before restarting a worker that failed `failures` times in a row:
// none for the first, then 1 s doubling up to 30 s.
std::chrono::milliseconds restart_backoff(int failures) {
  if (failures <= 1) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(std::min<std::int64_t>(30'000, 500LL << std::min(failures - 1, 6)));
}

// A worker that ran at least this long before failing starts a new series.
constexpr std::chrono::seconds kHealthyRun{60};

}  // namespace

std::optional<std::string> busy_port(const std::string& host, int port) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io);
  const Status s = transport::listen_on(acceptor, transport::WorkerAddress{host, port});
  if (s || s.code() != ErrorCode::kUnavailable) return std::nullopt;
  const std::string& why = s.message();
  return why.substr(why.rfind(": ") + 2);  // the system's words ("Address already in use")
}

Supervisor::Supervisor(SupervisorOptions options, CoordinationStore& store,
                       KeyValueStore& local_store, NimbusLink& nimbus, Logger logger)
    : options_(std::move(options)),
      store_(store),
      local_(local_store),
      nimbus_(nimbus),
      logger_(std::move(logger)),
      paths_(options_.zookeeper_root),
      launcher_(options_, nimbus_, logger_) {}

Supervisor::~Supervisor() {
  watches_.close();
  stop();
}

Status Supervisor::start() {
  if (options_.id.empty()) {
    auto id = local_.supervisor_id();
    if (!id) return id.status();
    id_ = *id;
  } else {
    id_ = options_.id;
  }
  start_time_ms_ = now_ms();
  std::error_code ec;
  std::filesystem::create_directories(options_.local_dir / "workers", ec);
  if (ec) {
    return Status(ErrorCode::kIoError,
                  "cannot create " + (options_.local_dir / "workers").string() + ": " + ec.message());
  }
  if (Status s = paths_.ensure_directories(store_); !s) return s;
  recover();
  session_listener_ = store_.add_session_listener([this](SessionEvent event) {
    if (event == SessionEvent::kExpired || event == SessionEvent::kNewSession) {
      std::lock_guard lock(mutex_);
      armed_.clear();  // the old session's watches are gone
      reregister_ = event == SessionEvent::kNewSession;
      dirty_ = true;
    } else if (event == SessionEvent::kConnected) {
      std::lock_guard lock(mutex_);
      dirty_ = true;
    }
    wake_.notify_all();
  });
  check_ports();
  if (Status s = register_node(); !s) return s;
  logger_.info("supervisor {} registered: host {}, rack {}, {} MB, {} CPU points, {} slots",
               id_, options_.host, options_.rack, options_.memory_mb, options_.cpu,
               info().slots.size());
  next_heartbeat_ = Clock::now();
  started_ = true;
  thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
  return Status::ok();
}

void Supervisor::stop(StopMode mode) {
  if (!started_) return;
  started_ = false;
  stopping_.store(true);  // the control thread launches no worker from now on
  thread_.request_stop();
  wake_.notify_all();
  if (mode == StopMode::kStopWorkers) {
    // Before the join: the control thread may wait in a ZooKeeper call for a
    // long time (ZooKeeper down), and the workers must go either way.
    std::vector<ProcessId> ids;
    {
      std::lock_guard lock(mutex_);
      for (const auto& [port, slot] : slots_) ids.push_back(slot.record.process);
    }
    const int killed = terminate_processes(ids, options_.shutdown_wait);
    logger_.info("supervisor {} stopped {} workers ({} needed SIGKILL)", id_, ids.size(), killed);
  }
  if (thread_.joinable()) thread_.join();
  store_.remove_session_listener(session_listener_);
  if (mode == StopMode::kStopWorkers) {
    std::vector<ProcessId> ids;
    for (const auto& [port, slot] : slots_) ids.push_back(slot.record.process);
    (void)terminate_processes(ids, options_.shutdown_wait);  // gone already, barring a race
    for (const auto& [port, slot] : slots_) {
      (void)local_.remove_worker(port);
      launcher_.clean_worker_dir(slot.record.topology_id, port);
    }
    std::lock_guard lock(mutex_);
    slots_.clear();
  }
  if (Status s = store_.remove(paths_.supervisor(id_)); !s && s.code() != ErrorCode::kNotFound) {
    logger_.warn("supervisor {} could not unregister ({}): nimbus sees it gone when its "
                 "ZooKeeper session expires",
                 id_, s.message());
  }
}

thrift::SupervisorInfo Supervisor::info() const {
  thrift::SupervisorInfo info;
  info.id = id_;
  info.host = options_.host;
  info.rack = options_.rack;
  info.memory_capacity_mb = options_.memory_mb;
  info.cpu_capacity = options_.cpu;
  info.generic_resources = options_.generic;
  {
    std::lock_guard lock(mutex_);
    for (int port : options_.ports) {
      if (!busy_ports_.count(port)) info.slots.push_back(port);
    }
    if (!busy_ports_.empty()) info.__set_busy_slots(busy_ports_);
    for (const auto& [port, slot] : slots_) info.used_slots.push_back(port);
  }
  info.start_time_ms = start_time_ms_;
  info.heartbeat_time_ms = now_ms();
  info.version = "0.1.0";
  info.__set_logviewer_port(options_.logviewer_port);
  info.__set_logviewer_https(options_.logviewer_https);
  return info;
}

std::vector<WorkerView> Supervisor::workers() const {
  std::lock_guard lock(mutex_);
  std::vector<WorkerView> out;
  for (const auto& [port, slot] : slots_) {
    out.push_back(WorkerView{slot.record.topology_id, port, slot.record.process.pid,
                             slot.record.assignment_version, slot.launches, slot.adopted,
                             slot.executors});
  }
  return out;
}

std::uint64_t Supervisor::rounds() const {
  std::lock_guard lock(mutex_);
  return rounds_;
}

std::uint64_t Supervisor::heartbeats_sent() const {
  std::lock_guard lock(mutex_);
  return heartbeats_;
}

void Supervisor::mark_dirty() {
  {
    std::lock_guard lock(mutex_);
    dirty_ = true;
  }
  wake_.notify_all();
}

Status Supervisor::register_node() {
  const std::string path = paths_.supervisor(id_);
  const std::string data = encode_thrift(info());
  auto created = store_.create(path, data, CreateMode::kEphemeral);
  if (created) return Status::ok();
  if (created.code() != ErrorCode::kAlreadyExists) return created.status();
  // Our own node (same session), or one left by an earlier run whose session
  // has not expired yet: replace it so that it belongs to this session.
  auto existing = store_.get(path);
  if (existing && existing->ephemeral_owner == store_.session_id()) {
    return store_.set(path, data).status();
  }
  (void)store_.remove(path);
  return store_.create(path, data, CreateMode::kEphemeral).status();
}

bool Supervisor::check_ports() {
  std::map<int, std::string> busy;
  for (int port : options_.ports) {
    {
      std::lock_guard lock(mutex_);
      auto it = slots_.find(port);
      if (it != slots_.end() && it->second.record.process.pid > 0 &&
          process_alive(it->second.record.process)) {
        continue;  // our worker holds it
      }
    }
    if (auto why = busy_port(options_.host, port)) busy.emplace(port, std::move(*why));
  }
  std::lock_guard lock(mutex_);
  if (busy == busy_ports_) return false;
  for (const auto& [port, why] : busy) {
    if (!busy_ports_.count(port)) {
      logger_.warn(
          "slot port {} of {} is in use by another process ({}): not offered to nimbus until "
          "it is free (supervisor.slots.ports)",
          port, options_.host, why);
    }
  }
  for (const auto& [port, why] : busy_ports_) {
    if (!busy.count(port)) logger_.info("slot port {} is free again: offered to nimbus", port);
  }
  busy_ports_ = std::move(busy);
  return true;
}

void Supervisor::update_registration() {
  auto set = store_.set(paths_.supervisor(id_), encode_thrift(info()));
  registration_stale_ = !set;
  if (!set) logger_.warn("cannot update this supervisor's slots in ZooKeeper: {}",
                         set.status().message());
}

void Supervisor::recover() {
  auto records = local_.workers();
  if (!records) {
    logger_.error("cannot read local state: {}", records.status().to_string());
    return;
  }
  for (const auto& r : *records) {
    const bool ours = process_alive(r.process) &&
                      process_command_line(r.process.pid).find("rstorm-worker") != std::string::npos;
    if (!ours) {
      logger_.info("worker of topology '{}' on port {} (pid {}) from an earlier run is gone",
                   r.topology_id, r.port, r.process.pid);
      (void)local_.remove_worker(r.port);
      launcher_.clean_worker_dir(r.topology_id, r.port);
      continue;
    }
    Slot slot;
    slot.record = r;
    slot.adopted = true;
    slot.launches = 1;
    slot.heartbeat_seen = true;
    slot.launched_at = Clock::now();
    auto spec = wp::read_spec_file(launcher_.worker_dir(r.topology_id, r.port) / "spec.json");
    if (spec) slot.executors = spec->own_executors();
    // The worker stops once its supervisor has been gone too long: this
    // one takes it over.
    if (Status s = launcher_.write_supervisor_mark(r.topology_id, r.port); !s) {
      logger_.warn("worker of topology '{}' on port {}: {}", r.topology_id, r.port, s.message());
    }
    logger_.info("adopted worker of topology '{}' on port {} (pid {}) from an earlier run",
                 r.topology_id, r.port, r.process.pid);
    std::lock_guard lock(mutex_);
    slots_[r.port] = std::move(slot);
  }
}

void Supervisor::run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    round();
    std::unique_lock lock(mutex_);
    const auto until = std::min(Clock::now() + options_.monitor_frequency, next_heartbeat_);
    // A worker that exits is noticed within 100 ms rather than at the next
    // round: its restart (and, with checkpoints, every worker's recovery)
    // waits on it.
    while (!stop.stop_requested() && Clock::now() < until) {
      const auto step = std::min(until, Clock::now() + std::chrono::milliseconds(100));
      if (wake_.wait_until(lock, stop, step, [&] { return dirty_; })) break;
      if (worker_exited_locked()) break;
    }
  }
}

bool Supervisor::worker_exited_locked() const {
  for (const auto& [port, slot] : slots_) {
    // One already seen to exit waits for its back-off in round().
    if (slot.next_launch != Clock::time_point()) continue;
    if (slot.record.process.pid > 0 && !process_alive(slot.record.process)) return true;
  }
  return false;
}

void Supervisor::round() {
  bool reregister = false;
  {
    std::lock_guard lock(mutex_);
    dirty_ = false;
    std::swap(reregister, reregister_);
  }
  if (reregister) {
    if (Status s = register_node(); !s) {
      logger_.warn("cannot re-register after a new session: {}", s.to_string());
      std::lock_guard lock(mutex_);
      reregister_ = true;
    } else {
      logger_.info("supervisor {} registered again after its session expired", id_);
    }
  }
  std::map<std::string, bool> active;
  auto desired = read_desired(&active);
  reconcile(desired, active);
  {
    std::vector<std::pair<std::string, int>> workers;
    {
      std::lock_guard lock(mutex_);
      for (const auto& [port, slot] : slots_) workers.emplace_back(slot.record.topology_id, port);
    }
    launcher_.renew_worker_tokens(workers, std::chrono::duration_cast<std::chrono::milliseconds>(
                                               std::chrono::system_clock::now().time_since_epoch())
                                               .count());
  }
  if (Clock::now() >= next_heartbeat_) {
    if (check_ports() || registration_stale_) update_registration();
    send_heartbeat();
    next_heartbeat_ = Clock::now() + options_.heartbeat_frequency;
  }
  std::lock_guard lock(mutex_);
  ++rounds_;
}

void Supervisor::arm(const std::string& path, bool children) {
  const std::string key = (children ? "c:" : "d:") + path;
  {
    std::lock_guard lock(mutex_);
    if (!armed_.insert(key).second) return;
  }
  auto fired = watches_.guard([this, key](const WatchEvent&) {
    {
      std::lock_guard lock(mutex_);
      armed_.erase(key);
      dirty_ = true;
    }
    wake_.notify_all();
  });
  const bool ok = children ? store_.children(path, fired).is_ok() : store_.get(path, fired).is_ok();
  if (!ok) {
    std::lock_guard lock(mutex_);
    armed_.erase(key);  // nothing was set: try again next round
  }
}

bool Supervisor::read_active(const std::string& topology_id) {
  const std::string path = paths_.topology(topology_id);
  arm(path, false);
  auto node = store_.get(path);
  if (!node) return true;  // no record (yet): run
  auto record = decode_thrift<thrift::TopologyRecord>(node->data, "TopologyRecord");
  if (!record) return true;
  // As Storm: spouts are deactivated while a kill or a rebalance waits. An
  // unschedulable topology's workers that run on keep what the user set.
  if (record->status == thrift::TopologyStatus::UNSCHEDULABLE) {
    return record->resume_status != thrift::TopologyStatus::INACTIVE;
  }
  return record->status != thrift::TopologyStatus::INACTIVE &&
         record->status != thrift::TopologyStatus::KILLED &&
         record->status != thrift::TopologyStatus::REBALANCING;
}

std::map<int, Supervisor::Desired> Supervisor::read_desired(std::map<std::string, bool>* active) {
  std::map<int, Desired> desired;
  arm(paths_.assignments(), true);
  auto ids = store_.children(paths_.assignments());
  if (!ids) {
    // Unreachable store: keep what runs rather than stop everything.
    for (const auto& [port, slot] : slots_) desired[port].assignment.topology_id = "";
    return desired;
  }
  for (const auto& topology_id : *ids) {
    const std::string path = paths_.assignment(topology_id);
    arm(path, false);
    auto node = store_.get(path);
    if (!node) continue;
    auto assignment = decode_thrift<thrift::Assignment>(node->data, "Assignment");
    if (!assignment) {
      logger_.warn("ignoring assignment {}: {}", path, assignment.status().to_string());
      continue;
    }
    bool mine = false;
    for (const auto& e : assignment->executors) {
      if (e.slot.node_id != id_) continue;
      if (std::find(options_.ports.begin(), options_.ports.end(), e.slot.port) ==
          options_.ports.end()) {
        logger_.warn("assignment of '{}' uses port {}, which is not a slot of this supervisor",
                     topology_id, e.slot.port);
        continue;
      }
      Desired& d = desired[e.slot.port];
      if (!d.assignment.topology_id.empty() && d.assignment.topology_id != topology_id) {
        logger_.warn("port {} is assigned to both '{}' and '{}'; keeping '{}'", e.slot.port,
                     d.assignment.topology_id, topology_id, d.assignment.topology_id);
        continue;
      }
      d.assignment = *assignment;
      d.executors.push_back(wp::SpecExecutor{e.executor.component, e.executor.task_start,
                                             e.executor.task_end, id_, e.slot.port});
      mine = true;
    }
    if (mine) (*active)[topology_id] = read_active(topology_id);
  }
  return desired;
}

void Supervisor::reconcile(const std::map<int, Desired>& desired,
                           const std::map<std::string, bool>& active) {
  // Keep running workers whose assignment is unreadable for now (see read_desired).
  auto keep_as_is = [&](int port) {
    auto it = desired.find(port);
    return it != desired.end() && it->second.assignment.topology_id.empty();
  };
  std::vector<int> ports;
  for (const auto& [port, slot] : slots_) ports.push_back(port);
  for (int port : ports) {
    if (keep_as_is(port)) continue;
    const Slot& slot = slots_.at(port);
    auto it = desired.find(port);
    if (it == desired.end()) {
      stop_worker(port, "no longer assigned");
    } else if (it->second.assignment.topology_id != slot.record.topology_id) {
      stop_worker(port, "port reassigned to '" + it->second.assignment.topology_id + "'");
    } else if (!same_executors(it->second.executors, slot.executors)) {
      stop_worker(port, "its executors changed");
    }
  }
  std::set<std::string> code_in_use;
  for (const auto& [port, d] : desired) {
    if (d.assignment.topology_id.empty()) continue;
    code_in_use.insert(d.assignment.code_sha256);
    const bool is_active = active.count(d.assignment.topology_id) == 0 ||
                           active.at(d.assignment.topology_id);
    auto it = slots_.find(port);
    if (it == slots_.end()) {
      start_worker(port, d, is_active, 1);
      continue;
    }
    Slot& slot = it->second;
    if (slot.record.assignment_version != d.assignment.version) {
      // Same executors here, other changes elsewhere: the worker stays and
      // follows the new spec (where its peers run now).
      auto spec = launcher_.prepare(d.assignment, id_, port);
      Status updated = spec ? launcher_.update_spec(*spec) : spec.status();
      if (!updated) {
        logger_.warn("cannot update the spec of the worker of '{}' on port {}: {}",
                     d.assignment.topology_id, port, updated.to_string());
      } else {
        slot.record.assignment_version = d.assignment.version;
        (void)local_.put_worker(slot.record);
      }
    }
    const std::string key = d.assignment.topology_id + "-" + std::to_string(port);
    auto written = status_written_.find(key);
    if (written == status_written_.end() || written->second != is_active) {
      if (launcher_.write_status(d.assignment.topology_id, port, is_active)) {
        status_written_[key] = is_active;
      }
    }
    check_health(port);
  }
  if (!desired.empty() || slots_.empty()) launcher_.remove_code_except(code_in_use);
}

void Supervisor::start_worker(int port, const Desired& d, bool active, int launches) {
  if (stopping_.load()) return;
  const std::string& topology_id = d.assignment.topology_id;
  auto spec = launcher_.prepare(d.assignment, id_, port);
  Result<ProcessId> process = spec ? launcher_.launch(*spec, active) : Result<ProcessId>(spec.status());
  if (!process) {
    logger_.error("cannot start the worker of topology '{}' on port {}: {}", topology_id, port,
                  process.status().to_string());
    record_failure(port, topology_id, "the supervisor cannot start the worker: " +
                                          process.status().message(), "not started");
    return;  // retried next round
  }
  Slot slot;
  slot.record = WorkerRecord{topology_id, port, *process, d.assignment.version, now_ms()};
  slot.launches = launches;
  slot.launched_at = Clock::now();
  slot.executors = d.executors;
  if (Status s = local_.put_worker(slot.record); !s) {
    logger_.error("cannot record worker on port {} in local state: {}", port, s.to_string());
  }
  status_written_[topology_id + "-" + std::to_string(port)] = active;
  logger_.info("started worker of topology '{}' on port {} (pid {}, {} executors, launch {})",
               topology_id, port, process->pid, d.executors.size(), launches);
  std::lock_guard lock(mutex_);
  slots_[port] = std::move(slot);
}

void Supervisor::stop_worker(int port, const std::string& why) {
  const Slot slot = slots_.at(port);
  failures_.erase(port);
  logger_.info("stopping worker of topology '{}' on port {} (pid {}): {}",
               slot.record.topology_id, port, slot.record.process.pid, why);
  terminate_processes({slot.record.process}, options_.shutdown_wait);
  (void)local_.remove_worker(port);
  launcher_.clean_worker_dir(slot.record.topology_id, port);
  status_written_.erase(slot.record.topology_id + "-" + std::to_string(port));
  bool topology_left = true;
  {
    std::lock_guard lock(mutex_);
    slots_.erase(port);
    for (const auto& [p, s] : slots_) {
      if (s.record.topology_id == slot.record.topology_id) topology_left = false;
    }
  }
  if (topology_left) launcher_.forget_topology(slot.record.topology_id);
}

void Supervisor::record_failure(int port, const std::string& topology_id, std::string reason,
                                std::string exit_status) {
  thrift::WorkerFailure& f = failures_[port];
  const std::int64_t t = now_ms();
  if (f.topology_id != topology_id) {
    f = thrift::WorkerFailure();
    f.topology_id = topology_id;
    f.slot.node_id = id_;
    f.slot.port = port;
    f.host = options_.host;
    f.first_time_ms = t;
  } else {
    ++f.restarts;
  }
  f.reason = std::move(reason);
  f.exit_status = std::move(exit_status);
  f.last_time_ms = t;
  f.__isset.running_since_ms = false;
  logger_.warn("worker of topology '{}' on port {} failed ({}, {} restarts): {}", topology_id,
               port, f.exit_status, f.restarts, f.reason);
  next_heartbeat_ = Clock::now();  // tell nimbus now, not at the next beat
}

void Supervisor::check_health(int port) {
  Slot& slot = slots_.at(port);
  std::string problem;
  bool exited = false;
  bool stopped_for_restart = false;  // exit code 3
  if (!process_alive(slot.record.process)) {
    exited = true;
    auto how = slot.adopted ? std::nullopt : exit_status_of(slot.record.process.pid);
    problem = "its process exited" + (how ? " (" + *how + ")" : std::string());
    const auto dir = launcher_.worker_dir(slot.record.topology_id, port);
    auto said = wp::read_whole_file(dir / "failure");
    std::string reason = said ? *said : std::string();
    while (!reason.empty() && (reason.back() == '\n' || reason.back() == '\r')) reason.pop_back();
    if (reason.empty()) {
      const std::string last = last_log_line(dir / "worker.log");
      reason = "the worker exited" + (how ? " with " + *how : std::string()) +
               " while still assigned, without saying why" +
               (last.empty() ? "" : "; its log ends: " + last);
    }
    // A worker stopping for a new assignment or recovery epoch (exit code
    // 3) is no failure: restarted at once, with no back-off.
    stopped_for_restart = how == "exit code 3";
    // Recorded once per exit: a slot backing off is looked at every round
    // until its restart (next_launch set), and each look is not a restart.
    if (!stopped_for_restart && slot.next_launch == Clock::time_point()) {
      record_failure(port, slot.record.topology_id, std::move(reason), how.value_or("unknown"));
    }
  } else {
    const auto file = launcher_.worker_dir(slot.record.topology_id, port) / "heartbeat";
    auto text = wp::read_whole_file(file);
    auto beat = text ? wp::heartbeat_from_json(*text) : Result<wp::WorkerHeartbeatFile>(text.status());
    if (beat && beat->pid == slot.record.process.pid) {
      slot.heartbeat_seen = true;
      const auto age = std::chrono::milliseconds(now_ms() - beat->time_ms);
      auto f = failures_.find(port);
      if (f != failures_.end() && f->second.topology_id == slot.record.topology_id) {
        if (beat->uptime_secs >= kHealthyRun.count()) {
          slot.failures = 0;
          failures_.erase(f);
        } else if (!f->second.__isset.running_since_ms && age <= options_.worker_timeout) {
          // Running again: the record stays until the run proves healthy,
          // but nobody should read "failing" off a worker that heartbeats.
          f->second.__set_running_since_ms(beat->time_ms - beat->uptime_secs * 1000);
          next_heartbeat_ = Clock::now();
        }
      }
      if (age > options_.worker_timeout) {
        problem = "its last heartbeat is " + std::to_string(age.count()) + " ms old (timeout " +
                  std::to_string(options_.worker_timeout.count()) + " s)";
        // Hung (or stopped): killed and restarted below, which describe
        // shows as any other failure of the worker.
        record_failure(port, slot.record.topology_id,
                       "the worker stopped heartbeating: " + problem +
                           " (supervisor.worker.timeout.secs); killed and restarted",
                       "hung");
      }
    } else if (Clock::now() - slot.launched_at > options_.worker_start_timeout) {
      problem = "no heartbeat within supervisor.worker.start.timeout.secs (" +
                std::to_string(options_.worker_start_timeout.count()) + " s)";
      record_failure(port, slot.record.topology_id, "the worker " + problem, "hung at start");
    }
  }
  if (problem.empty()) return;
  // Restart, backing off exponentially while it keeps failing within a minute
  // of its start (a library that cannot load, a bolt whose prepare throws, a
  // crash in the first tuples), so that a crash loop does not burn the node.
  if (exited && slot.next_launch == Clock::time_point() && !stopped_for_restart) {
    const bool quick = Clock::now() - slot.launched_at < kHealthyRun;
    slot.failures = quick ? slot.failures + 1 : 1;
    slot.next_launch = Clock::now() + restart_backoff(slot.failures);
  }
  if (Clock::now() < slot.next_launch) return;
  logger_.warn("restarting worker of topology '{}' on port {} (pid {}): {}",
               slot.record.topology_id, port, slot.record.process.pid, problem);
  terminate_processes({slot.record.process}, std::chrono::milliseconds(0));
  const int failures = exited ? slot.failures : slot.failures + 1;
  const int launches = slot.launches + 1;
  Desired d;
  // Re-read the spec's inputs from the current assignment.
  auto node = store_.get(paths_.assignment(slot.record.topology_id));
  auto assignment = node ? decode_thrift<thrift::Assignment>(node->data, "Assignment")
                         : Result<thrift::Assignment>(node.status());
  if (!assignment) return;  // gone: the next round stops it
  d.assignment = *assignment;
  d.executors = slot.executors;
  const bool active = status_written_[slot.record.topology_id + "-" + std::to_string(port)];
  {
    std::lock_guard lock(mutex_);
    slots_.erase(port);
  }
  start_worker(port, d, active, launches);
  auto it = slots_.find(port);
  if (it != slots_.end()) it->second.failures = failures;
}

void Supervisor::send_heartbeat() {
  thrift::SupervisorHeartbeat heartbeat;
  heartbeat.info = info();
  for (const auto& [port, slot] : slots_) {
    const auto file = launcher_.worker_dir(slot.record.topology_id, port) / "heartbeat";
    auto text = wp::read_whole_file(file);
    if (!text) continue;
    auto beat = wp::heartbeat_from_json(*text);
    if (!beat || beat->pid != slot.record.process.pid) continue;
    thrift::WorkerHeartbeat w;
    w.topology_id = slot.record.topology_id;
    w.slot.node_id = id_;
    w.slot.port = port;
    for (const auto& e : beat->executors) {
      thrift::ExecutorInfo info;
      info.task_start = e.task_start;
      info.task_end = e.task_end;
      info.component = e.component;
      w.executors.push_back(std::move(info));
    }
    w.time_ms = beat->time_ms;
    w.uptime_secs = beat->uptime_secs;
    if (!beat->errors.empty()) {
      std::vector<thrift::ErrorInfo> errors;
      for (const auto& e : beat->errors) {
        thrift::ErrorInfo info;
        info.component = e.component;
        info.message = e.message;
        info.__set_time_ms(e.time_ms);
        info.__set_host(options_.host);
        info.__set_port(port);
        info.__set_task_id(e.task);
        errors.push_back(std::move(info));
      }
      w.__set_errors(std::move(errors));
    }
    if (beat->stalled_ms > 0) {
      thrift::StallInfo stall;
      stall.stalled_secs = beat->stalled_ms / 1000;
      stall.pending = static_cast<std::int64_t>(beat->stall_pending);
      stall.stalled_spouts = beat->stalled_spouts;
      stall.queued = beat->queued;
      stall.full_queues = beat->full_queues;
      w.__set_stall(std::move(stall));
    }
    if (!beat->fused.empty()) w.__set_fused(beat->fused);
    heartbeat.workers.push_back(std::move(w));
  }
  if (!failures_.empty()) {
    std::vector<thrift::WorkerFailure> failures;
    for (const auto& [port, f] : failures_) failures.push_back(f);
    heartbeat.__set_failures(std::move(failures));
  }
  Status sent = nimbus_.supervisor_heartbeat(heartbeat);
  if (!sent) {
    logger_.warn("heartbeat to nimbus failed: {}", sent.to_string());
    return;
  }
  std::lock_guard lock(mutex_);
  ++heartbeats_;
}

}  // namespace rstorm::supervisor
