// WorkerProcess: the body of one rstorm-worker process. Loads the topology
// library named by the spec, builds the topology with the spec's config, runs
// this slot's executors (SlotRuntime), follows the desired status the
// supervisor writes into `<worker dir>/status` (ACTIVE: spouts activated,
// INACTIVE: deactivated), and writes `<worker dir>/heartbeat` (atomically,
// JSON: time_ms, pid, executors, counters) every heartbeat interval.
//
// Thread contract: single thread. run() blocks the calling thread until
// `stop` turns true (set from a signal handler in main.cpp), then stops the
// executors and writes a last heartbeat.
#pragma once

#include <atomic>
#include <memory>

#include <spdlog/logger.h>

#include "common/status.hpp"
#include "worker/process/slot_runtime.hpp"
#include "worker/process/worker_spec.hpp"

namespace rstorm::worker_process {

class WorkerProcess {
 public:
  // Loads, builds and starts the slot's executors. Fails naming the library,
  // the component or the config key at fault.
  static Result<std::unique_ptr<WorkerProcess>> start(WorkerSpec spec,
                                                      std::shared_ptr<spdlog::logger> logger);
  ~WorkerProcess();

  // Polls the status file and writes heartbeats until `stop`; then stops.
  void run(const std::atomic<bool>& stop);
  // Reads the status file once and applies it; writes one heartbeat.
  void tick();

  SlotRuntime& runtime() { return *runtime_; }

 private:
  WorkerProcess(WorkerSpec spec, std::shared_ptr<spdlog::logger> logger)
      : spec_(std::move(spec)), logger_(std::move(logger)) {}
  void apply_status();
  Status write_heartbeat();

  const WorkerSpec spec_;
  const std::shared_ptr<spdlog::logger> logger_;
  std::unique_ptr<SlotRuntime> runtime_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace rstorm::worker_process
