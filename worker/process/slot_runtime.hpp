// SlotRuntime: the part of a topology that one worker process runs: the
// executors the assignment gives to this worker's slot, built with the worker
// runtime's own pieces (make_plan, SpoutExecutor, BoltExecutor, AckerExecutor)
// on the same task layout every other worker of the topology computes.
//
// Executors are matched to the assignment by component and ordinal: the k-th
// executor (by first task) of component C in the assignment is the k-th
// executor of C in the plan. Ackers: "__acker" executors of the assignment
// when nimbus lists them; otherwise topology.acker.executors (null: one per
// worker, Storm's default) spread over the workers in slot order.
//
// Tasks run by other workers are remote. Until the transport lands, a batch
// for a remote executor goes to a RemotePendingSink: each tuple is counted in
// transferred_remote_pending() and the trees it belongs to are failed at their
// acker (when that acker runs here; otherwise the spout times the tree out), so
// spouts replay and nothing is silently dropped. Each remote destination is
// logged once, not per tuple.
//
// Thread contract: create/start/stop from one owner thread; activate(),
// deactivate(), stats() and transferred_remote_pending() from any thread.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "rstorm/local_cluster.hpp"
#include "rstorm/status.hpp"
#include "rstorm/topology.hpp"
#include "rstorm/worker/executor.hpp"
#include "rstorm/worker/topology_plan.hpp"
#include "worker/process/worker_spec.hpp"

namespace rstorm::worker_process {

class RemotePendingSink;

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

  // Counters of the executors run here, per component.
  TopologyStats stats() const;
  std::uint64_t transferred_remote_pending() const;
  // The last few errors of each executor run here, tasks numbered as nimbus
  // numbers them. Any thread.
  std::vector<HeartbeatError> recent_errors() const;
  // The executors run here, as (component, first task, last task) of the
  // assignment (tasks as nimbus numbers them).
  const std::vector<SpecExecutor>& own_executors() const { return own_; }
  std::size_t num_ackers_here() const { return ackers_here_; }

 private:
  SlotRuntime() = default;

  Topology topology_{TopologySpec{}, {}, {}};  // keeps the factories' library loaded
  std::unique_ptr<worker::TopologyPlan> plan_;
  worker::ExecutorEnv env_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> active_{true};
  std::vector<std::unique_ptr<RemotePendingSink>> remote_sinks_;
  std::vector<std::unique_ptr<worker::Executor>> executors_;  // the ones run here
  std::vector<SpecExecutor> own_;
  std::map<int, int> nimbus_task_;  // plan task id -> task id in the assignment
  std::size_t ackers_here_ = 0;
  std::chrono::steady_clock::time_point started_;
  bool running_ = false;
};

// Which acker executors (indices 0..count-1) the worker at `slot_index` of
// `num_workers` runs, and how many ackers the topology has. Exposed for tests.
struct AckerLayout {
  int count = 0;
  std::vector<int> here;
};
api::Result<AckerLayout> acker_layout(const std::vector<SpecExecutor>& executors,
                                      const Config& config, const std::string& node_id, int port);

}  // namespace rstorm::worker_process
