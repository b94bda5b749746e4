// TopologyRuntime: one running topology in this process: its plan, the task
// instances, one executor thread per executor (spouts, bolts, ackers) and
// their queues. It is the composition root of the worker runtime: it builds
// every piece and stops them (spouts first) on stop().
//
// The seam for a later transport: deliver() is the entry point for batches
// that arrive from other workers; tasks not run here would be given a remote
// TupleSink in ExecutorEnv::sinks. Today every task is local.
//
// Thread contract: create/start/stop from one owner thread; stats(),
// in_flight(), activate()/deactivate() and deliver() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "rstorm/config.hpp"
#include "rstorm/local_cluster.hpp"
#include "rstorm/status.hpp"
#include "rstorm/topology.hpp"
#include "rstorm/worker/executor.hpp"
#include "rstorm/worker/topology_plan.hpp"

namespace rstorm::worker {

class TopologyRuntime {
 public:
  // Plans the topology and makes every task's spout or bolt instance (the
  // factories run here, on the caller's thread). Fails naming the component
  // whose factory threw or returned nothing, or the config key at fault.
  static api::Result<std::unique_ptr<TopologyRuntime>> create(
      const std::string& name, const Config& config, const Topology& topology,
      std::shared_ptr<spdlog::logger> logger, std::uint64_t seed);
  ~TopologyRuntime();

  void start();
  void activate();
  void deactivate();
  // Stops every executor and joins its thread; tasks close on their threads.
  void stop();

  // Reliable tuples emitted by spouts and not yet acked, failed or timed out.
  std::uint64_t in_flight() const;
  TopologyStats stats() const;
  const TopologyPlan& plan() const { return *plan_; }

  // Hands a batch that came from another worker to the local executors.
  void deliver(Batch&& batch);

 private:
  explicit TopologyRuntime(const Topology& topology) : topology_(topology) {}

  Topology topology_;  // keeps the factories' library loaded
  std::unique_ptr<TopologyPlan> plan_;
  ExecutorEnv env_;
  std::atomic<bool> stopping_{false};
  std::vector<std::unique_ptr<Executor>> executors_;
  std::chrono::steady_clock::time_point started_;
  bool running_ = false;
};

}  // namespace rstorm::worker
