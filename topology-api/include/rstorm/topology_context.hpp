// TopologyContext: what a task knows about where it runs: the topology's name,
// its component and task id, and the tasks of every component (for emit_direct);
// and where it registers its metrics and keeps its keyed state.
// Immutable after construction: thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rstorm/ids.hpp"
#include "rstorm/metrics.hpp"
#include "rstorm/state.hpp"

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
  // `state`: where state_store() opens this task's store (the runtime's, as
  // topology.state.provider says); null: an in-memory backend of this
  // context's own (tests).
  TopologyContext(std::string topology_name, std::string component_id, TaskId task,
                  int task_index, std::shared_ptr<const TaskLayout> layout,
                  std::shared_ptr<UserMetrics> metrics = nullptr,
                  std::shared_ptr<StateBackend> state = nullptr)
      : topology_name_(std::move(topology_name)),
        component_id_(std::move(component_id)),
        task_(task),
        task_index_(task_index),
        layout_(std::move(layout)),
        metrics_(metrics ? std::move(metrics) : std::make_shared<UserMetrics>()),
        state_(state ? std::move(state) : std::make_shared<InMemoryStateBackend>()) {}

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

  // This task's keyed state `name` (rstorm/state.hpp): a name of your choice,
  // not empty, without '\0', not starting with "__" (reserved). Ask in
  // open/prepare and keep it; it stays valid until close/cleanup returns.
  // Every call with one name gives a view of the same entries. Throws
  // StateError naming the task and where its store is when the store cannot
  // be opened (from prepare: the task cannot run), or when the name is not
  // allowed.
  template <typename K, typename V>
  KeyValueState<K, V> key_value_state(std::string_view name) const {
    return KeyValueState<K, V>(state_store(), std::string(name), task_, component_id_);
  }
  // This task's state store, opened on the first call (tasks that never ask
  // pay nothing), the same store after. Throws as key_value_state.
  std::shared_ptr<StateStore> state_store() const { return state_->open(task_, component_id_); }

 private:
  std::string topology_name_;
  std::string component_id_;
  TaskId task_;
  int task_index_;
  std::shared_ptr<const TaskLayout> layout_;
  // New members go last: earlier members keep their offsets.
  std::shared_ptr<UserMetrics> metrics_;
  std::shared_ptr<StateBackend> state_;
};

}  // namespace rstorm
