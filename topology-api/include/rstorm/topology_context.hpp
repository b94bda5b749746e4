// TopologyContext: what a task knows about where it runs: the topology's name,
// its component and task id, and the tasks of every component (for emit_direct).
// Immutable after construction: thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rstorm/ids.hpp"
#include "rstorm/metrics.hpp"

namespace rstorm {

// Task ids of every component of a running topology, shared by its tasks.
struct TaskLayout {
  std::map<std::string, std::vector<TaskId>, std::less<>> component_tasks;
  std::vector<std::string> task_component;  // index: task id; "" for unused ids
};

class TopologyContext {
 public:
  // `metrics`: where counter()/gauge()/histogram() register (the runtime's, so
  // that they are exported); null: a store of this context's own (tests).
  TopologyContext(std::string topology_name, std::string component_id, TaskId task,
                  int task_index, std::shared_ptr<const TaskLayout> layout,
                  std::shared_ptr<UserMetrics> metrics = nullptr)
      : topology_name_(std::move(topology_name)),
        component_id_(std::move(component_id)),
        task_(task),
        task_index_(task_index),
        layout_(std::move(layout)),
        metrics_(metrics ? std::move(metrics) : std::make_shared<UserMetrics>()) {}

  const std::string& topology_name() const { return topology_name_; }
  const std::string& component_id() const { return component_id_; }
  TaskId this_task() const { return task_; }
  // 0 .. number of this component's tasks - 1.
  int this_task_index() const { return task_index_; }
  // Tasks of `component`, ascending (empty for an unknown component).
  const std::vector<TaskId>& component_tasks(std::string_view component) const;
  const std::vector<TaskId>& this_component_tasks() const { return component_tasks(component_id_); }
  // The component that runs `task` ("" when unknown).
  const std::string& component_of(TaskId task) const;

  // This task's user metrics (rstorm/metrics.hpp): register in open/prepare,
  // keep the reference, update anywhere on the task's thread or others.
  CounterMetric& counter(std::string_view name, std::string_view help = "") const;
  GaugeMetric& gauge(std::string_view name, std::string_view help = "") const;
  HistogramMetric& histogram(std::string_view name, std::vector<double> bounds,
                             std::string_view help = "") const;
  const std::shared_ptr<UserMetrics>& metrics() const { return metrics_; }

 private:
  std::string topology_name_;
  std::string component_id_;
  TaskId task_;
  int task_index_;
  std::shared_ptr<const TaskLayout> layout_;
  std::shared_ptr<UserMetrics> metrics_;  // last: earlier members keep their offsets
};

}  // namespace rstorm
