#include "scheduler/assignment_builder.hpp"

#include <algorithm>
#include <cmath>

#include "scheduler/network_cost.hpp"

namespace rstorm::scheduler {

AssignmentBuilder::AssignmentBuilder(ClusterState& state, const TopologyRequest& request)
    : state_(state),
      request_(request),
      executors_(request.executors),
      request_executors_(static_cast<std::uint32_t>(request.executors.size())),
      by_node_(state.node_count()),
      least_heap_(state.node_count(), INFINITY) {
  for (int i = 0; i < request.acker_executors.value_or(0); ++i) {
    ExecutorRequest acker;
    acker.component = kAckerComponent;
    acker.first_task = acker.last_task = -1 - i;  // system tasks are negative, as in Storm
    acker.onheap_mb = request.acker_onheap_mb;
    acker.offheap_mb = 0;
    acker.cpu = request.acker_cpu;
    executors_.push_back(std::move(acker));
  }
  worker_of_.assign(executors_.size(), kNoWorker);
}

std::uint32_t AssignmentBuilder::keep_current() {
  std::uint32_t kept = 0;
  for (std::uint32_t i = 0; i < request_.current.size() && i < executors_.size(); ++i) {
    const auto& slot = request_.current[i];
    if (!slot) continue;
    const std::uint32_t node = state_.find(slot->node);
    if (node == kNoNode) continue;
    std::uint32_t w = kNoWorker;
    for (std::uint32_t candidate : by_node_[node]) {
      if (workers_[candidate].port == slot->port) w = candidate;
    }
    if (w == kNoWorker) {
      if (!state_.has_port(node, slot->port)) continue;
      w = open_worker(node, slot->port);
    }
    add(i, w);
    ++kept;
  }
  return kept;
}

std::uint32_t AssignmentBuilder::open_worker(std::uint32_t node, int port) {
  state_.take_port(node, port);
  Worker worker;
  worker.node = node;
  worker.port = port;
  if (per_worker_ackers()) {
    worker.ackers = 1;
    worker.heap_mb = request_.acker_onheap_mb;
    worker.cpu = request_.acker_cpu;
    state_.charge(node, request_.acker_onheap_mb, request_.acker_cpu, {});
  }
  workers_.push_back(std::move(worker));
  const auto w = static_cast<std::uint32_t>(workers_.size() - 1);
  by_node_[node].push_back(w);
  least_heap_[node] = std::min(least_heap_[node], workers_[w].heap_mb);
  return w;
}

void AssignmentBuilder::add(std::uint32_t executor, std::uint32_t w) {
  const ExecutorRequest& e = executors_[executor];
  Worker& worker = workers_[w];
  worker.heap_mb += e.onheap_mb;
  double least = INFINITY;
  for (std::uint32_t other : by_node_[worker.node])
    least = std::min(least, workers_[other].heap_mb);
  least_heap_[worker.node] = least;
  worker.offheap_mb += e.offheap_mb;
  worker.cpu += e.cpu;
  if (executor < request_executors_) {
    worker.executors.push_back(executor);
  } else {
    ++worker.ackers;
  }
  worker_of_[executor] = w;
  state_.charge(worker.node, e.memory_mb(), e.cpu, e.generic);
}

TopologyPlacement AssignmentBuilder::finish(std::vector<std::string> warnings, int moved) const {
  TopologyPlacement out;
  out.topology = request_.id;
  out.strategy = request_.strategy;
  out.scheduled = true;
  out.warnings = std::move(warnings);
  out.moved_executors = moved;
  std::vector<ExecutorLocation> locations(request_executors_);
  out.executor_slots.resize(request_executors_);
  for (std::uint32_t i = 0; i < request_executors_; ++i) {
    const Worker& w = workers_[worker_of_[i]];
    out.executor_slots[i] = WorkerSlot{state_.node(w.node).spec->id, w.port};
    locations[i] = ExecutorLocation{worker_of_[i], w.node, state_.node(w.node).rack};
  }
  for (std::uint32_t i = request_executors_; i < executors_.size(); ++i) {
    const Worker& w = workers_[worker_of_[i]];
    out.acker_slots.push_back(WorkerSlot{state_.node(w.node).spec->id, w.port});
  }
  out.network = network_cost(request_, locations);
  std::vector<std::uint32_t> order(workers_.size());
  for (std::uint32_t w = 0; w < order.size(); ++w) order[w] = w;
  std::sort(order.begin(), order.end(), [this](std::uint32_t a, std::uint32_t b) {
    const Worker& x = workers_[a];
    const Worker& y = workers_[b];
    return x.node != y.node ? x.node < y.node : x.port < y.port;
  });
  for (std::uint32_t w : order) {
    const Worker& worker = workers_[w];
    if (worker.executors.empty() && worker.ackers == 0) continue;
    WorkerAssignment a;
    a.slot = WorkerSlot{state_.node(worker.node).spec->id, worker.port};
    a.rack = state_.rack_id(state_.node(worker.node).rack);
    for (std::uint32_t e : worker.executors) a.executors.push_back(ExecutorId(e));
    std::sort(a.executors.begin(), a.executors.end());
    a.ackers = worker.ackers;
    a.heap_mb = worker.heap_mb;
    a.offheap_mb = worker.offheap_mb;
    a.cpu = worker.cpu;
    out.workers.push_back(std::move(a));
  }
  return out;
}

}  // namespace rstorm::scheduler
