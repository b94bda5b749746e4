#include "worker/process/worker_process.hpp"

#include <unistd.h>

#include <thread>

#include "rstorm/topology_library.hpp"

namespace rstorm::worker_process {
namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
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
  auto runtime = SlotRuntime::create(std::move(options), *topology);
  if (!runtime.ok()) {
    return Status(ErrorCode::kInvalidArgument,
                  "cannot run topology '" + s.topology_id + "': " + runtime.status().message());
  }
  process->runtime_ = std::move(runtime).value();
  process->apply_status();  // before start: an INACTIVE topology starts with quiet spouts
  process->started_ = std::chrono::steady_clock::now();
  process->runtime_->start();
  logger->info("worker for topology '{}' slot {}:{} runs {} executors ({} ackers)",
               s.topology_id, s.supervisor_id, s.port, process->runtime_->own_executors().size(),
               process->runtime_->num_ackers_here());
  Status written = process->write_heartbeat();
  if (!written) logger->warn("{}", written.to_string());
  return process;
}

WorkerProcess::~WorkerProcess() {
  if (runtime_) runtime_->stop();
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

Status WorkerProcess::write_heartbeat() {
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
  }
  h.transferred_remote_pending = runtime_->transferred_remote_pending();
  h.errors = runtime_->recent_errors();
  return write_file_atomically(spec_.heartbeat_file(), heartbeat_to_json(h));
}

void WorkerProcess::tick() {
  apply_status();
  Status written = write_heartbeat();
  if (!written) logger_->warn("{}", written.to_string());
}

void WorkerProcess::run(const std::atomic<bool>& stop) {
  const auto interval = std::chrono::milliseconds(spec_.heartbeat_interval_ms);
  const auto poll = std::min(interval, std::chrono::milliseconds(100));
  auto next_beat = std::chrono::steady_clock::now() + interval;
  while (!stop.load()) {
    std::this_thread::sleep_for(poll);
    apply_status();
    if (std::chrono::steady_clock::now() >= next_beat) {
      Status written = write_heartbeat();
      if (!written) logger_->warn("{}", written.to_string());
      next_beat += interval;
    }
  }
  logger_->info("worker for topology '{}' slot {}:{} stopping", spec_.topology_id,
                spec_.supervisor_id, spec_.port);
  runtime_->stop();
}

}  // namespace rstorm::worker_process
