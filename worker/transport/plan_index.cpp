#include "worker/transport/plan_index.hpp"

namespace rstorm::transport {

PlanIndex::PlanIndex(const worker::TopologyPlan& plan) : plan_(plan) {
  std::size_t limit = plan.task_executor.size();
  for (const auto& c : plan.components) {
    for (TaskId t : c->tasks) limit = std::max(limit, static_cast<std::size_t>(t.value) + 1);
  }
  task_component_.assign(limit, nullptr);
  for (const auto& c : plan.components) {
    for (TaskId t : c->tasks) {
      if (t.value >= 0) task_component_[static_cast<std::size_t>(t.value)] = c.get();
    }
    for (std::size_t i = 0; i < c->streams.size(); ++i) {
      by_address_.emplace(&c->streams[i]->info, static_cast<std::int32_t>(i));
    }
  }
}

std::int32_t PlanIndex::stream_index(const StreamInfo* info) const {
  if (info == nullptr) return -1;
  if (auto it = by_address_.find(info); it != by_address_.end()) return it->second;
  const worker::ComponentPlan* c = plan_.find_component(info->component);
  if (c == nullptr) return -1;
  for (std::size_t i = 0; i < c->streams.size(); ++i) {
    if (c->streams[i]->info.stream == info->stream) return static_cast<std::int32_t>(i);
  }
  return -1;
}

}  // namespace rstorm::transport
