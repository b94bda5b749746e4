// AssignmentBuilder: the workers one topology gets while a scheduler places it.
// Opening a worker takes a slot (and charges its acker when the topology runs
// one acker per worker); adding an executor charges its node. finish() turns
// the result into a TopologyPlacement with its network cost. Single thread,
// borrows the state and the request for its lifetime.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/cluster_state.hpp"
#include "scheduler/placement.hpp"
#include "scheduler/request.hpp"

namespace rstorm::scheduler {

inline constexpr std::uint32_t kNoWorker = UINT32_MAX;

class AssignmentBuilder {
 public:
  struct Worker {
    std::uint32_t node = kNoNode;
    int port = 0;
    double heap_mb = 0;
    double offheap_mb = 0;
    double cpu = 0;
    int ackers = 0;
    std::vector<std::uint32_t> executors;  // request executors only (not ackers)
  };

  AssignmentBuilder(ClusterState& state, const TopologyRequest& request);

  // Every executor to place: the request's, then explicit ackers (component
  // kAckerComponent) when topology.acker.executors is set.
  const std::vector<ExecutorRequest>& executors() const { return executors_; }
  std::uint32_t request_executor_count() const { return request_executors_; }
  bool per_worker_ackers() const { return !request_.acker_executors.has_value(); }
  // Memory and CPU one new worker costs before any executor (its acker).
  double worker_memory_mb() const { return per_worker_ackers() ? request_.acker_onheap_mb : 0; }
  double worker_cpu() const { return per_worker_ackers() ? request_.acker_cpu : 0; }

  // Charges every executor of request.current whose slot is still in the
  // cluster (free, or already opened by this builder); returns how many.
  std::uint32_t keep_current();

  // REQUIRES: `port` is free on `node`.
  std::uint32_t open_worker(std::uint32_t node, int port);
  void add(std::uint32_t executor, std::uint32_t worker);

  const std::vector<std::uint32_t>& workers_on(std::uint32_t node) const { return by_node_[node]; }
  // The least heap of the topology's workers on `node` (infinity without
  // any): no worker there has room for more than max heap minus this.
  double least_worker_heap(std::uint32_t node) const { return least_heap_[node]; }
  const Worker& worker(std::uint32_t w) const { return workers_[w]; }
  std::uint32_t worker_count() const { return static_cast<std::uint32_t>(workers_.size()); }
  std::uint32_t worker_of(std::uint32_t executor) const { return worker_of_[executor]; }

  TopologyPlacement finish(std::vector<std::string> warnings, int moved) const;

 private:
  ClusterState& state_;
  const TopologyRequest& request_;
  std::vector<ExecutorRequest> executors_;
  std::uint32_t request_executors_ = 0;
  std::vector<Worker> workers_;
  std::vector<std::vector<std::uint32_t>> by_node_;
  std::vector<double> least_heap_;  // per node, see least_worker_heap()
  std::vector<std::uint32_t> worker_of_;
};

}  // namespace rstorm::scheduler
