// What a topology asks of the scheduler: its executors with their resources,
// the component graph, and the scheduling settings of its config. The scheduler
// owns this model; the topology API and nimbus convert into it. Plain values,
// thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/cluster.hpp"
#include "scheduler/ids.hpp"

namespace rstorm::scheduler {

// topology.scheduler.strategy
enum class Strategy { kResourceAware, kRoundRobin };

// "resource-aware" or "round-robin"; nullopt for anything else.
std::optional<Strategy> parse_strategy(std::string_view name);
std::string_view strategy_name(Strategy strategy);

// Storm's defaults for one executor and one worker.
inline constexpr double kDefaultOnHeapMb = 128;  // topology.component.resources.onheap.memory.mb
inline constexpr double kDefaultOffHeapMb = 0;   // topology.component.resources.offheap.memory.mb
inline constexpr double kDefaultCpu = 10;        // topology.component.cpu.pcore.percent
inline constexpr double kDefaultWorkerMaxHeapMb = 768;  // topology.worker.max.heap.size.mb
inline constexpr char kAckerComponent[] = "__acker";
// topology.scheduler.improve.max.evaluations: candidate moves the local search
// after the greedy evaluates at most, over all its starts (a count, not a
// time, so the same input gives the same placement). Chosen from the quality
// bench (bench/scheduler/quality_bench.cpp): within 10% of the optimum on
// 93.3% of its instances with 500, 97.1% with 2,000, 98.6% with 5,000, 98.8%
// with 50,000; at about a microsecond per evaluation, a few milliseconds.
inline constexpr std::uint64_t kDefaultImproveMaxEvaluations = 5000;
// topology.scheduler.exact.max.executors: the exact solver (branch and bound)
// runs when the topology has at most this many executors to place and the
// cluster at most kExactMaxNodes candidate nodes; 0 turns it off.
inline constexpr int kDefaultExactMaxExecutors = 0;
// topology.fuse.executors (conf/defaults.yaml says the same).
inline constexpr bool kDefaultFuseExecutors = true;

struct ComponentSpec {
  std::string name;
  bool is_spout = false;
  int parallelism = 1;  // executors
  int tasks = 0;        // 0: one task per executor
  double onheap_mb = kDefaultOnHeapMb;
  double offheap_mb = kDefaultOffHeapMb;
  double cpu = kDefaultCpu;
  GenericResources generic;
  bool ticks = false;  // gets tick tuples (topology.tick.tuple.freq.secs > 0)
};

struct ExecutorRequest {
  std::string component;
  int first_task = 0;  // inclusive task range
  int last_task = 0;
  double onheap_mb = kDefaultOnHeapMb;
  double offheap_mb = kDefaultOffHeapMb;
  double cpu = kDefaultCpu;
  GenericResources generic;

  double memory_mb() const { return onheap_mb + offheap_mb; }
};

// A map keyed by component name, looked up once per executor: executors come
// grouped by component (add_component appends a component's executors
// together), so the entry of the executor before is tried first, at the
// cost of one string comparison instead of a search. Borrows `map`.
template <typename Map>
class ComponentLookup {
 public:
  explicit ComponentLookup(Map& map) : map_(map), last_(map.end()) {}
  // map.find(name)
  typename Map::iterator find(const std::string& name) {
    if (last_ == map_.end() || last_->first != name) last_ = map_.find(name);
    return last_;
  }
  // map[name]
  typename Map::mapped_type& operator[](const std::string& name) {
    if (last_ == map_.end() || last_->first != name) last_ = map_.try_emplace(name).first;
    return last_->second;
  }

 private:
  Map& map_;
  typename Map::iterator last_;
};

// Tuples flow from `from` to `to` (one input of `to`: a stream and a grouping).
struct Edge {
  std::string from;
  std::string to;
  bool local_or_shuffle = false;  // the input's grouping
  // The grouping gives the consumer's tasks unequal shares whatever the
  // load: global (every tuple to one task) or direct (the tasks the producer
  // picks). A bolt fed so is never a fused chain's head (fusion.hpp).
  bool uneven = false;
};

struct TopologyRequest {
  TopologyId id;
  std::vector<ComponentSpec> components;   // every component, spouts flagged
  std::vector<ExecutorRequest> executors;  // ExecutorId i is executors[i]
  std::vector<Edge> edges;
  int workers = 1;                                      // topology.workers (round-robin only)
  double worker_max_heap_mb = kDefaultWorkerMaxHeapMb;  // topology.worker.max.heap.size.mb
  // topology.acker.executors: nullopt = one acker in each worker (Storm's default),
  // N = N acker executors placed like any other executor (0 disables acking).
  std::optional<int> acker_executors;
  double acker_onheap_mb = kDefaultOnHeapMb;  // topology.acker.resources.onheap.memory.mb
  double acker_cpu = kDefaultCpu;             // topology.acker.cpu.pcore.percent
  int priority = 0;                           // topology.priority: lower is scheduled first
  Strategy strategy = Strategy::kResourceAware;
  std::uint64_t improve_max_evaluations = kDefaultImproveMaxEvaluations;
  int exact_max_executors = kDefaultExactMaxExecutors;
  // topology.fuse.executors: a bolt a worker may run on its producer's thread
  // (fusion.hpp) is placed with it, executor i beside executor i, as one unit.
  bool fuse_executors = kDefaultFuseExecutors;
  // Where each executor runs now (rescheduling); empty or nullopt = not placed.
  // Executors whose slot is still in the cluster stay where they are. With
  // acker_executors set it may go on with the ackers' slots (acker i, task
  // -1-i, at executors.size() + i), which then stay too.
  std::vector<std::optional<WorkerSlot>> current;
};

// Appends `spec` to request.components and its executors (tasks spread evenly,
// first executors get the extra task as in Storm) to request.executors.
void add_component(TopologyRequest& request, const ComponentSpec& spec);

}  // namespace rstorm::scheduler
