// PlanIndex: the lookups the codec needs from a TopologyPlan: which component
// a task belongs to, the plan StreamInfo of (source task, stream index) and the
// index of a StreamInfo within its component's streams. Built once; immutable
// afterwards, so thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "rstorm/ids.hpp"
#include "rstorm/tuple.hpp"
#include "rstorm/worker/topology_plan.hpp"

namespace rstorm::transport {

class PlanIndex {
 public:
  // `plan` is borrowed and must outlive the index.
  explicit PlanIndex(const worker::TopologyPlan& plan);

  // One more than the largest task id of the plan.
  std::size_t task_limit() const { return task_component_.size(); }
  bool is_task(TaskId task) const {
    return task.value >= 0 && static_cast<std::size_t>(task.value) < task_component_.size() &&
           task_component_[static_cast<std::size_t>(task.value)] != nullptr;
  }
  // nullptr when `task` is not a task of the plan.
  const worker::ComponentPlan* component_of(TaskId task) const {
    return is_task(task) ? task_component_[static_cast<std::size_t>(task.value)] : nullptr;
  }
  // The plan's StreamInfo for stream `index` of `task`'s component; nullptr
  // when there is no such task or stream.
  const StreamInfo* stream(TaskId task, std::int32_t index) const {
    const worker::ComponentPlan* c = component_of(task);
    if (c == nullptr || index < 0 || static_cast<std::size_t>(index) >= c->streams.size()) {
      return nullptr;
    }
    return &c->streams[static_cast<std::size_t>(index)]->info;
  }
  // The index of `info` among its component's plan streams, found by address
  // or else by (component, stream) name; -1 when the plan has no such stream.
  std::int32_t stream_index(const StreamInfo* info) const;

  const worker::TopologyPlan& plan() const { return plan_; }

 private:
  const worker::TopologyPlan& plan_;
  std::vector<const worker::ComponentPlan*> task_component_;
  std::unordered_map<const StreamInfo*, std::int32_t> by_address_;
};

}  // namespace rstorm::transport
