// CheckpointUploader: reads, encodes and stores the tasks' checkpoint parts
// on a thread of its own (one per runtime), so that a task stops only to
// freeze its state (Executor::complete_barrier; a RocksDB snapshot) and goes
// on processing while its part is read and travels to the checkpoint store
// (nimbus, a folder). Once a part is stored, or could
// not be, its executor counts it (and reports a failure naming the task and
// the checkpoint: Executor::store_part), and the uploader tells the
// checkpoint coordinator, as the task would have. Parts are stored in the
// order they were submitted.
//
// Thread contract: submit() from any executor thread; start() and stop()
// from the runtime's owner. stop() drops what is still queued (the topology
// is stopping; its checkpoint is not complete) and waits for the part being
// stored, which a store bounds by its own timeout.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "rstorm/ids.hpp"
#include "rstorm/state.hpp"
#include "rstorm/worker/executor_stats.hpp"
#include "rstorm/worker/transfer.hpp"

namespace rstorm::worker {

class Executor;
struct ExecutorEnv;

class CheckpointUploader {
 public:
  struct Part {
    Executor* owner = nullptr;  // counts it and reports a failure
    TaskId task;
    std::int64_t checkpoint = 0;
    StateStore::Frozen state;  // the task's state at the barrier; empty: none
  };

  // `env` (its sinks complete) must outlive the uploader.
  explicit CheckpointUploader(const ExecutorEnv& env);
  ~CheckpointUploader();
  CheckpointUploader(const CheckpointUploader&) = delete;
  CheckpointUploader& operator=(const CheckpointUploader&) = delete;

  void start();
  void submit(Part part);
  void stop();

 private:
  void run();

  const ExecutorEnv& env_;
  ExecutorStats stats_;  // its Transfer's (not exported)
  Transfer transfer_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Part> queue_;  // guarded by mutex_
  bool stop_ = false;       // guarded by mutex_
  std::thread thread_;
};

}  // namespace rstorm::worker
