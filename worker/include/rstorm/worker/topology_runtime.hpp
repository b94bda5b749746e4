// TopologyRuntime: the running executors of one topology in this process: its
// plan, the task instances, one executor thread per executor (spouts, bolts,
// ackers) and their queues. It is the composition root of the worker runtime:
// it builds every piece and stops them (spouts first) on stop().
//
// Local mode runs every executor of the plan. A worker process runs only some
// (ExecutorPlacement::run_here) and gives the runtime a TupleSink for each of
// the others (a transport to the worker that runs it); deliver_remote() is the
// entry point for batches that arrive from other workers.
//
// Thread contract: create/start/stop from one owner thread; stats(),
// in_flight(), activate()/deactivate() and deliver_remote() from any thread.
#pragma once

#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "rstorm/config.hpp"
#include "rstorm/local_cluster.hpp"
#include "rstorm/status.hpp"
#include "rstorm/topology.hpp"
#include "rstorm/worker/checkpoint_uploader.hpp"
#include "rstorm/worker/executor.hpp"
#include "rstorm/worker/topology_plan.hpp"

namespace rstorm::worker {

// Which executors of a plan run in this process, and where tuples for the
// others go.
struct ExecutorPlacement {
  // Index: plan executor index; true: run here. Empty: every executor.
  std::vector<bool> run_here;
  // Index: task id; the sink of a task not run here (borrowed, must outlive
  // the runtime). Unused for tasks run here. Per task, not per executor: how
  // other workers group their tasks into executors may change (a rebalance)
  // while this runtime keeps running.
  std::vector<TupleSink*> remote_task_sinks;
  // Index: plan executor index; which worker runs it, as a number (the same
  // number for the same worker). Empty: every executor runs here. Fusion
  // needs it: a bolt runs on its producer's threads only if every worker
  // holds as many executors of one as of the other.
  std::vector<std::uint32_t> worker_of;
};

// Whether the executors run here make progress (see Executor::stalled_ns).
struct StallReport {
  // The longest time a spout run here has waited without progress (0: none
  // waits).
  std::int64_t stalled_ms = 0;
  // Spout components with an executor waiting at least the threshold, and the
  // trees pending at them.
  std::vector<std::string> stalled_spouts;
  std::uint64_t pending = 0;
  // Components with tuples waiting in a receive queue here, and those with a
  // queue at least 90 % full.
  std::vector<std::string> queued;
  std::vector<std::string> full_queues;

  bool stalled() const { return !stalled_spouts.empty(); }
};

class TopologyRuntime {
 public:
  // Plans the topology and makes every task's spout or bolt instance (the
  // factories run here, on the caller's thread), with local mode's keyed
  // state: topology.state.provider, null meaning memory; RocksDB stores under
  // topology.state.rocksdb.dir, else <storm.local.dir>/state/<name>. Fails
  // naming the component whose factory threw or returned nothing, or the
  // config key at fault.
  static api::Result<std::unique_ptr<TopologyRuntime>> create(
      const std::string& name, const Config& config, const Topology& topology,
      std::shared_ptr<spdlog::logger> logger, std::uint64_t seed);
  // Runs the executors `placement` selects of an already made plan (the
  // caller may have adjusted it, e.g. local-or-shuffle's local tasks, or set
  // its state backend).
  // REQUIRES: every task not run here has a remote sink.
  static api::Result<std::unique_ptr<TopologyRuntime>> create(
      std::unique_ptr<TopologyPlan> plan, const Topology& topology,
      std::shared_ptr<spdlog::logger> logger, std::uint64_t seed, ExecutorPlacement placement);
  ~TopologyRuntime();

  void start();
  void activate();
  void deactivate();
  // Stops every executor and joins its thread; tasks close on their threads.
  void stop();

  // Reliable tuples emitted by spouts and not yet acked, failed or timed out.
  std::uint64_t in_flight() const;
  TopologyStats stats() const;
  // The spouts that waited at least `threshold` without progress, and the
  // queues that are full now. Any thread.
  StallReport stall_report(std::chrono::milliseconds threshold) const;
  const TopologyPlan& plan() const { return *plan_; }
  // Why the executors run here cannot all run (a task's open or prepare
  // threw): the first executor's Executor::fatal_error(); empty otherwise.
  std::string fatal_error() const;
  // Whether every executor run here has opened or prepared its tasks.
  bool ready() const;
  // Whether this runtime runs spouts and every one of them has finished (a
  // bounded input is all emitted; its trees may still be pending).
  bool spouts_finished() const;
  // The spout components some executor of which has a task that has not
  // called finish() yet, in the topology's order.
  std::vector<std::string> unfinished_spouts() const;
  // The executors run here (for metrics: plan(), stats(), queue()). Fixed after create().
  const std::vector<std::unique_ptr<Executor>>& executors() const { return executors_; }

  // Whether task `task` runs here (false for ids outside the plan).
  bool runs_task(TaskId task) const;
  // The sink of task `task`: its executor's queue here, or the remote sink.
  // REQUIRES: `task` is a task of the plan.
  TupleSink* sink_of(TaskId task) const {
    return env_.sinks[static_cast<std::size_t>(env_.task_sink[static_cast<std::size_t>(task.value)])];
  }

  // Hands envelopes that came from another worker to the local executors'
  // queues. Never waits and never refuses (the network reader must not stop
  // because one executor is full): a full queue takes them into its overflow,
  // and the caller throttles that executor's senders. Returns false when some
  // went to an overflow. `batch` comes back empty or holding envelopes a
  // queue's consumer finished with (a recycled batch: to be overwritten,
  // never delivered again); envelopes for tasks not run here are moved to
  // `*foreign` (the caller fails their trees). `owed`: not null, a parked
  // consumer with only a few batches queued is left asleep and its queue
  // appended here, for the caller to wake (ReceiveQueue::wake) once it has
  // delivered what it read.
  bool deliver_remote(Batch& batch, Batch* foreign, std::vector<ReceiveQueue*>* owed = nullptr);

 private:
  explicit TopologyRuntime(const Topology& topology) : topology_(topology) {}
  // Index into executors_ of the executor running `task`; -1 when not here.
  int local_executor_of(TaskId task) const;
  // Checkpoints: every task run here takes its state from the newest
  // complete checkpoint that can be read (checkpoint.hpp, read_checkpoint).
  api::Status restore_checkpoint();
  // topology.fuse.executors: joins producer -> consumer pairs that can share
  // a thread (see the definition) before the executors start.
  void fuse_executors(const std::vector<std::uint32_t>& worker_of);

  Topology topology_;  // keeps the factories' library loaded
  std::unique_ptr<TopologyPlan> plan_;
  ExecutorEnv env_;
  std::atomic<bool> stopping_{false};
  std::vector<std::unique_ptr<Executor>> executors_;  // the ones run here
  std::vector<std::unique_ptr<TupleSink>> inline_sinks_;  // one per fused member
  std::vector<int> local_index_;  // sink index -> index in executors_, or -1
  bool partial_ = false;          // not every executor of the plan runs here
  std::mutex deliver_mutex_;
  std::vector<Batch> deliver_scratch_;  // GUARDED_BY(deliver_mutex_); index: executors_
  std::chrono::steady_clock::time_point started_;
  bool running_ = false;
  // With checkpoints; after the executors (stopped after them, destroyed
  // before them).
  std::unique_ptr<CheckpointUploader> uploader_;
};

}  // namespace rstorm::worker
