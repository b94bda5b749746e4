// WorkerProcess: the body of one rstorm-worker process, its composition root.
// Loads the topology library named by the spec, builds the topology with the
// spec's config, runs this slot's executors (SlotRuntime), listens on its slot
// port on its supervisor's host and connects to the other workers of the
// assignment (transport::Transport, joined to the runtime by DataPlane),
// follows the desired status the supervisor writes into `<worker dir>/status`
// (ACTIVE: spouts activated, INACTIVE: deactivated), follows new assignment
// versions the supervisor writes into spec.json (executors of other workers
// moved: peers and routes updated in place), and writes
// `<worker dir>/heartbeat` (atomically, JSON: time_ms, pid, executors,
// counters, data plane counters) every heartbeat interval.
//
// Thread contract: single thread. run() blocks the calling thread until
// `stop` turns true (set from a signal handler in main.cpp) or the worker
// needs a restart (restart_needed()), then stops everything (runtime,
// transport, data plane, in that order) and writes a last heartbeat.
#pragma once

#include <optional>

#include <atomic>
#include <memory>

#include <spdlog/logger.h>

#include "common/status.hpp"
#include "rstorm/worker/runtime_metrics.hpp"
#include "worker/process/data_plane.hpp"
#include "worker/process/slot_runtime.hpp"
#include "worker/process/worker_spec.hpp"
#include "worker/transport/transport.hpp"

namespace rstorm::worker_process {

class WorkerProcess {
 public:
  // Loads, builds and starts the slot's executors and the transport. Fails
  // naming the library, the component, the config key at fault, or the
  // address that cannot be bound.
  static Result<std::unique_ptr<WorkerProcess>> start(WorkerSpec spec,
                                                      std::shared_ptr<spdlog::logger> logger);
  ~WorkerProcess();

  // Polls the status and spec files and writes heartbeats until `stop` or a
  // needed restart; then stops.
  void run(const std::atomic<bool>& stop);
  // Reads the status and spec files once and applies them; writes one heartbeat.
  void tick();
  // A new assignment changes what this worker runs (or the number of
  // ackers): it must exit so that its supervisor starts it again.
  bool restart_needed() const { return restart_needed_; }
  // Set when run() ended because an executor cannot run (its open or prepare
  // threw): the reason, for the supervisor (WorkerSpec::failure_file()).
  const std::string& failure() const { return failure_; }

  SlotRuntime& runtime() { return *runtime_; }
  const WorkerSpec& spec() const { return spec_; }
  // Counters of the data plane, as the heartbeat's "data_plane" holds them.
  std::map<std::string, std::uint64_t> data_plane_counters() const;
  // Whether this worker's spouts have waited topology.stall.timeout.secs
  // without progress, and which queues are full. Any thread.
  worker::StallReport stall() const {
    return runtime_->runtime().stall_report(stall_timeout_);
  }

 private:
  WorkerProcess(WorkerSpec spec, std::shared_ptr<spdlog::logger> logger)
      : spec_(std::move(spec)), logger_(std::move(logger)) {}
  void apply_status();
  // Points every remote executor at the peer that runs it and gives the
  // transport the peers of `spec`.
  Status apply_routes(const WorkerSpec& spec, const std::vector<SlotKey>& slots);
  // Re-reads spec.json; applies a newer assignment version.
  void follow_assignment();
  void shutdown();
  Status write_heartbeat();
  // Checkpoints on a cluster: the store of this worker's epoch (nimbus, or
  // a folder), moving the epoch on when this worker restarts after an
  // unexpected end or a stop, or joins a topology that has checkpoints (checkpoint.hpp,
  // SharedCheckpointStore). Sets epoch_watch_.
  Result<std::shared_ptr<worker::SharedCheckpointStore>> open_checkpoints();
  // The store topology.state.checkpoint.store names, in epoch 0; `where`
  // receives its name for messages.
  Result<std::shared_ptr<worker::SharedCheckpointStore>> connect_checkpoint_store(
      std::chrono::milliseconds timeout, std::string* where);
  // Whether another worker moved the epoch on: this one must restart.
  void follow_epoch();
  // Whether the supervisor named in the spec's supervisor_file has been
  // gone for orphan_timeout_ms: then this worker must stop (orphaned_).
  void check_supervisor();

  WorkerSpec spec_;  // the assignment version last applied
  const std::shared_ptr<spdlog::logger> logger_;
  std::unique_ptr<SlotRuntime> runtime_;
  std::unique_ptr<DataPlane> data_plane_;
  std::unique_ptr<transport::Transport> transport_;
  std::chrono::steady_clock::time_point started_;
  bool restart_needed_ = false;
  bool epoch_exit_ = false;  // another worker moved the recovery epoch on
  bool orphaned_ = false;    // its supervisor is gone for good (check_supervisor)
  std::optional<std::chrono::steady_clock::time_point> supervisor_gone_since_;
  std::string failure_;
  bool announced_ = false;  // a heartbeat was written (every task was ready)
  bool stopped_ = false;
  std::chrono::milliseconds stall_timeout_{10'000};  // topology.stall.timeout.secs
  bool stall_logged_ = false;                        // main thread: the stall was logged
  std::shared_ptr<worker::SharedCheckpointStore> checkpoints_;  // null: no checkpoints
  std::shared_ptr<worker::SharedCheckpointStore> epoch_watch_;  // polled by follow_epoch
  std::chrono::steady_clock::time_point epoch_unreadable_logged_{};
  std::unique_ptr<worker::WorkerMetrics> metrics_;  // /metrics; destroyed first
};

}  // namespace rstorm::worker_process
