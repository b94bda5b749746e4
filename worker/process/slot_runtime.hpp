// SlotRuntime: the part of a topology that one worker process runs: the
// executors the assignment gives to this worker's slot, on the same plan
// (task ids, ackers, routes) every other worker of the topology computes. A
// thin layer over worker::TopologyRuntime: it works out from the assignment
// which plan executors run here and where every other one runs, and gives the
// runtime one RoutedSink per remote executor, which the worker points at the
// transport's sink of the peer running it (route()) and re-points when a new
// assignment moves that executor.
//
// Executors are matched to the assignment by component and ordinal: the k-th
// executor (by first task) of component C in the assignment is the k-th
// executor of C in the plan. Ackers: "__acker" executors of the assignment
// when nimbus lists them; otherwise topology.acker.executors (null: one per
// worker, Storm's default) spread over the workers in slot order.
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
};

class SlotRuntime {
 public:
  // Fails naming the component whose executor count differs between the
  // assignment and the topology, a factory that threw, or a bad config key.
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

  // Where every plan executor runs (index: plan executor index).
  const std::vector<SlotKey>& executor_slots() const { return executor_slots_; }
  const SlotKey& self() const { return self_; }
  // Points the sink of remote executor `executor` (plan index) at `sink`.
  // REQUIRES: that executor is not run here; `sink` outlives this runtime.
  void route(int executor, worker::TupleSink* sink);
  // Where the executors of `executors` (a newer assignment) run, by plan
  // executor index. Fails when that assignment changes what runs here, or the
  // number of ackers: the worker must then be restarted with a new plan.
  api::Result<std::vector<SlotKey>> layout_of(const std::vector<SpecExecutor>& executors) const;

  // The plan task ids run here.
  std::vector<TaskId> local_tasks() const;
  worker::TopologyRuntime& runtime() { return *runtime_; }
  // The executors run here (plan(), stats(), queue()) for metrics.
  const worker::TopologyRuntime& runtime() const { return *runtime_; }

  // Counters of the executors run here, per component.
  TopologyStats stats() const { return runtime_->stats(); }
  // The last few errors of each executor run here, tasks numbered as nimbus
  // numbers them. Any thread.
  std::vector<HeartbeatError> recent_errors() const;
  // The executors run here, as (component, first task, last task) of the
  // assignment (tasks as nimbus numbers them).
  const std::vector<SpecExecutor>& own_executors() const { return own_; }
  std::size_t num_ackers_here() const { return ackers_here_; }

 private:
  SlotRuntime() = default;

  SlotRuntimeOptions options_;
  int acker_count_ = 0;
  SlotKey self_;
  std::atomic<bool> active_{true};
  std::vector<SlotKey> executor_slots_;
  std::vector<std::unique_ptr<RoutedSink>> routed_;  // index: plan executor index (null: here)
  std::unique_ptr<worker::TopologyRuntime> runtime_;
  std::vector<SpecExecutor> own_;
  std::map<int, int> nimbus_task_;  // plan task id -> task id in the assignment
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

// Where every executor of `plan` runs under `executors` (index: plan executor
// index), given the ackers' layout. Fails naming a component whose executor
// count differs between the assignment and the plan.
api::Result<std::vector<SlotKey>> place_executors(const worker::TopologyPlan& plan,
                                                  const std::vector<SpecExecutor>& executors,
                                                  const AckerLayout& ackers);

}  // namespace rstorm::worker_process
