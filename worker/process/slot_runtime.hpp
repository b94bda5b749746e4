// SlotRuntime: the part of a topology that one worker process runs: the
// executors the assignment gives to this worker's slot, on the same plan
// (task ids, ackers, routes) every other worker of the topology computes. A
// thin layer over worker::TopologyRuntime: it works out from the assignment
// which plan executors run here and where every other one runs, and gives the
// runtime one RoutedSink per remote executor, which the worker points at the
// transport's sink of the peer running it (route()) and re-points when a new
// assignment moves that executor.
//
// The plan's executors are the assignment's: each component's tasks grouped
// as the assignment groups them (a rebalance changes how many executors a
// component has, never its task ids, which run from 1 as in the topology
// API). Tuples for another worker go through one RoutedSink per remote task,
// so a new assignment that regroups or moves only other workers' executors
// is followed by re-routing, without a restart. Ackers: "__acker" executors
// of the assignment when nimbus lists them; otherwise topology.acker.executors
// (null: one per worker, Storm's default) spread over the workers in slot
// order; they take the task ids after the components'.
//
// Thread contract: create/start/stop from one owner thread; route(),
// activate(), deactivate(), stats(), recent_errors() from any thread.
#pragma once

#include <atomic>
#include <compare>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "rstorm/local_cluster.hpp"
#include "rstorm/status.hpp"
#include "rstorm/topology.hpp"
#include "rstorm/worker/topology_plan.hpp"
#include "rstorm/worker/topology_runtime.hpp"
#include "worker/process/worker_spec.hpp"

namespace rstorm::worker_process {

// A worker of the assignment: (supervisor id, port).
struct SlotKey {
  std::string node_id;
  int port = 0;
  friend auto operator<=>(const SlotKey&, const SlotKey&) = default;
  friend bool operator==(const SlotKey&, const SlotKey&) = default;
};

// The sink the runtime holds for an executor of another worker: forwards to
// whatever route() last pointed it at (a transport sink). Until routed it
// refuses every push (producers wait, nothing is dropped). Thread-safe.
class RoutedSink final : public worker::TupleSink {
 public:
  void set_target(worker::TupleSink* target) { target_.store(target, std::memory_order_release); }
  worker::TupleSink* target() const { return target_.load(std::memory_order_acquire); }
  bool try_push(worker::Batch& batch) override {
    worker::TupleSink* t = target();
    return t != nullptr && t->try_push(batch);
  }
  bool try_push_recycling(worker::Batch& batch) override {
    worker::TupleSink* t = target();
    return t != nullptr && t->try_push_recycling(batch);
  }
  // The worker routes every sink before its executors and its data plane
  // start, so a forced push finds a target; before that it waits for one.
  void force_push(worker::Batch& batch) override;
  void wait_for_space(std::chrono::microseconds timeout) override;

 private:
  std::atomic<worker::TupleSink*> target_{nullptr};
};

struct SlotRuntimeOptions {
  std::string topology_name;
  Config config;                        // the topology's config
  std::vector<SpecExecutor> executors;  // the whole assignment
  std::string node_id;                  // this worker's slot
  int port = 0;
  std::shared_ptr<spdlog::logger> logger;  // REQUIRES: not null
  std::uint64_t seed = 1;
  // Where the tasks run here keep their keyed state; null: in memory.
  std::shared_ptr<StateBackend> state_backend;
  // Where checkpoints are kept (topology.state.checkpointing); null: memory.
  std::shared_ptr<worker::CheckpointStore> checkpoint_store;
};

class SlotRuntime {
 public:
  // Fails naming a component whose tasks differ between the assignment and
  // the topology, a factory that threw, or a bad config key.
  static api::Result<std::unique_ptr<SlotRuntime>> create(SlotRuntimeOptions options,
                                                          const Topology& topology);
  ~SlotRuntime();
  SlotRuntime(const SlotRuntime&) = delete;
  SlotRuntime& operator=(const SlotRuntime&) = delete;

  void start();
  void activate();
  void deactivate();
  bool active() const { return active_.load(); }
  void stop();

  // Where every task runs (index: task id; entry 0 unused), ackers included.
  const std::vector<SlotKey>& task_slots() const { return task_slots_; }
  const SlotKey& self() const { return self_; }
  // Points the sink of remote task `task` at `sink`.
  // REQUIRES: that task is not run here; `sink` outlives this runtime.
  void route(TaskId task, worker::TupleSink* sink);
  // Where every task runs under `executors` (a newer assignment), as
  // task_slots(). Fails when that assignment changes the executors run here
  // (a component's tasks regrouped here, an executor moving in or out) or the
  // ackers: the worker must then be restarted with a new plan.
  api::Result<std::vector<SlotKey>> layout_of(const std::vector<SpecExecutor>& executors) const;

  // The plan task ids run here.
  std::vector<TaskId> local_tasks() const;
  worker::TopologyRuntime& runtime() { return *runtime_; }
  // The executors run here (plan(), stats(), queue()) for metrics.
  const worker::TopologyRuntime& runtime() const { return *runtime_; }

  // Counters of the executors run here, per component.
  TopologyStats stats() const { return runtime_->stats(); }
  // The last few errors of each executor run here. Any thread.
  std::vector<HeartbeatError> recent_errors() const;
  // Executor::log_errors_not_logged of each executor (the heartbeat's).
  void log_errors_not_logged();
  // The executors run here, as (component, first task, last task) of the
  // assignment; ackers as -1, -2, ... as nimbus lists them.
  const std::vector<SpecExecutor>& own_executors() const { return own_; }
  std::size_t num_ackers_here() const { return ackers_here_; }

 private:
  SlotRuntime() = default;

  SlotRuntimeOptions options_;
  int acker_count_ = 0;
  SlotKey self_;
  std::atomic<bool> active_{true};
  std::vector<int> ackers_here_list_;  // acker indices run here
  std::vector<SlotKey> task_slots_;    // index: task id
  std::vector<std::unique_ptr<RoutedSink>> routed_;  // index: task id (null: here)
  std::unique_ptr<worker::TopologyRuntime> runtime_;
  std::vector<SpecExecutor> own_;
  std::size_t ackers_here_ = 0;
};

// How many acker executors the topology has, which of them (indices
// 0..count-1) the worker at (node_id, port) runs, and the slot of each.
struct AckerLayout {
  int count = 0;
  std::vector<int> here;
  std::vector<SlotKey> slots;  // index: acker index
};
api::Result<AckerLayout> acker_layout(const std::vector<SpecExecutor>& executors,
                                      const Config& config, const std::string& node_id, int port);

// The executors of each component under `executors`, for make_plan.
worker::ExecutorLayout executor_layout(const std::vector<SpecExecutor>& executors);

// Where every task of `plan` runs under `executors` (index: task id), given
// the ackers' layout. Fails naming a task the assignment leaves out or gives
// to a component it does not belong to.
api::Result<std::vector<SlotKey>> place_tasks(const worker::TopologyPlan& plan,
                                              const std::vector<SpecExecutor>& executors,
                                              const AckerLayout& ackers);

}  // namespace rstorm::worker_process
