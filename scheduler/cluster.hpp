// The cluster model the scheduler places work on: nodes grouped in racks, each
// with memory (MB), CPU (points, 100 = one core), worker slots (ports) and
// generic resources, plus what other topologies already use. Plain values,
// thread-compatible.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "scheduler/ids.hpp"

namespace rstorm::scheduler {

// Named countable resources beyond memory and CPU, e.g. {"gpu.count", 2}.
// Always hard constraints.
using GenericResources = std::map<std::string, double>;

// Storm's supervisor defaults.
inline constexpr double kDefaultNodeMemoryMb = 4096;  // supervisor.memory.capacity.mb
inline constexpr double kDefaultNodeCpu = 400;        // supervisor.cpu.capacity
inline constexpr int kFirstSlotPort = 6700;           // supervisor.slots.ports starts here

struct NodeSpec {
  NodeId id;
  std::string host;  // defaults to the id when empty
  RackId rack;
  double memory_mb = kDefaultNodeMemoryMb;
  double cpu = kDefaultNodeCpu;
  std::vector<int> ports;  // one worker slot per port
  GenericResources generic;
};

// A worker slot taken by a topology the current call does not (re)schedule,
// with everything its executors use.
struct SlotUsage {
  WorkerSlot slot;
  TopologyId topology;
  double memory_mb = 0;
  double cpu = 0;
  GenericResources generic;
};

struct Cluster {
  std::vector<NodeSpec> nodes;
  std::vector<SlotUsage> used;
};

}  // namespace rstorm::scheduler
