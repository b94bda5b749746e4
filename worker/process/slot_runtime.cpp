#include "worker/process/slot_runtime.hpp"

#include <algorithm>
#include <set>
#include <thread>

namespace rstorm::worker_process {

constexpr char kAcker[] = "__acker";

void RoutedSink::wait_for_space(std::chrono::microseconds timeout) {
  if (worker::TupleSink* t = target()) {
    t->wait_for_space(timeout);
  } else {
    std::this_thread::sleep_for(timeout);  // not routed yet
  }
}

void RoutedSink::force_push(worker::Batch& batch) {
  worker::TupleSink* t = target();
  while (t == nullptr) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    t = target();
  }
  t->force_push(batch);
}

namespace {

bool by_first_task(const SpecExecutor& a, const SpecExecutor& b) {
  return a.task_start < b.task_start;
}

// Distinct slots of the assignment in (node, port) order.
std::vector<SlotKey> slots_of(const std::vector<SpecExecutor>& executors) {
  std::set<SlotKey> slots;
  for (const auto& e : executors) slots.insert(SlotKey{e.node_id, e.port});
  return {slots.begin(), slots.end()};
}

// Assignment executors by component (ackers left out), each list in task order.
std::map<std::string, std::vector<SpecExecutor>> by_component(
    const std::vector<SpecExecutor>& executors) {
  std::map<std::string, std::vector<SpecExecutor>> out;
  for (const auto& e : executors) {
    if (e.component != kAcker) out[e.component].push_back(e);
  }
  for (auto& [component, list] : out) std::sort(list.begin(), list.end(), by_first_task);
  return out;
}

}  // namespace

api::Result<AckerLayout> acker_layout(const std::vector<SpecExecutor>& executors,
                                      const Config& config, const std::string& node_id,
                                      int port) {
  AckerLayout layout;
  const SlotKey self{node_id, port};
  std::vector<SpecExecutor> ackers;
  for (const auto& e : executors) {
    if (e.component == kAcker) ackers.push_back(e);
  }
  if (!ackers.empty()) {
    // Listed by nimbus: ids -1, -2, ... as the scheduler numbers system tasks.
    std::sort(ackers.begin(), ackers.end(),
              [](const auto& a, const auto& b) { return a.task_start > b.task_start; });
    layout.count = static_cast<int>(ackers.size());
    for (int i = 0; i < layout.count; ++i) {
      const auto& a = ackers[static_cast<std::size_t>(i)];
      layout.slots.push_back(SlotKey{a.node_id, a.port});
      if (layout.slots.back() == self) layout.here.push_back(i);
    }
    return layout;
  }
  const auto slots = slots_of(executors);
  const int workers = static_cast<int>(slots.size());
  const auto* entry = config.find("topology.acker.executors");
  if (entry == nullptr || entry->value.is_null()) {
    layout.count = workers;  // one per worker
  } else {
    try {
      layout.count = static_cast<int>(config.get_int("topology.acker.executors"));
    } catch (const ConfigError& e) {
      return api::Status::error(e.what());
    }
    if (layout.count < 0) {
      return api::Status::error("topology.acker.executors must not be negative, got " +
                                std::to_string(layout.count));
    }
  }
  if (workers == 0) return layout;
  for (int i = 0; i < layout.count; ++i) {
    layout.slots.push_back(slots[static_cast<std::size_t>(i % workers)]);
    if (layout.slots.back() == self) layout.here.push_back(i);
  }
  return layout;
}

api::Result<std::vector<SlotKey>> place_executors(const worker::TopologyPlan& plan,
                                                  const std::vector<SpecExecutor>& executors,
                                                  const AckerLayout& ackers) {
  std::map<std::string, std::vector<int>> planned;  // component -> plan executor indices
  for (const auto& ep : plan.executors) planned[ep.component->id].push_back(ep.index);
  const auto assigned = by_component(executors);
  std::vector<SlotKey> out(plan.executors.size());
  for (const auto& [component, indices] : planned) {
    if (component == kAcker) {
      if (static_cast<int>(indices.size()) != ackers.count) {
        return api::Status::error("the assignment has " + std::to_string(ackers.count) +
                                  " ackers, the plan " + std::to_string(indices.size()));
      }
      for (std::size_t i = 0; i < indices.size(); ++i) {
        out[static_cast<std::size_t>(indices[i])] = ackers.slots[i];
      }
      continue;
    }
    auto it = assigned.find(component);
    if (it == assigned.end()) {
      return api::Status::error("component '" + component + "' is not in the assignment");
    }
    if (it->second.size() != indices.size()) {
      return api::Status::error("component '" + component + "': the assignment has " +
                                std::to_string(it->second.size()) + " executors, the topology " +
                                std::to_string(indices.size()));
    }
    for (std::size_t k = 0; k < indices.size(); ++k) {
      out[static_cast<std::size_t>(indices[k])] = SlotKey{it->second[k].node_id, it->second[k].port};
    }
  }
  for (const auto& [component, list] : assigned) {
    if (planned.count(component) == 0) {
      return api::Status::error("the assignment has component '" + component +
                                "', which the topology does not");
    }
  }
  return out;
}

api::Result<std::unique_ptr<SlotRuntime>> SlotRuntime::create(SlotRuntimeOptions options,
                                                              const Topology& topology) {
  auto ackers = acker_layout(options.executors, options.config, options.node_id, options.port);
  if (!ackers.ok()) return ackers.status();
  Config config;
  for (const auto& [key, entry] : options.config.entries()) {
    if (!entry.value.is_null()) config.set(key, entry.value, entry.origin);
  }
  config.set("topology.acker.executors", static_cast<std::int64_t>(ackers->count), "assignment");
  auto made = worker::make_plan(options.topology_name, config, topology);
  if (!made.ok()) return made.status();
  std::unique_ptr<worker::TopologyPlan> plan = std::move(made).value();
  auto slots = place_executors(*plan, options.executors, *ackers);
  if (!slots.ok()) return slots.status();

  std::unique_ptr<SlotRuntime> rt(new SlotRuntime());
  rt->self_ = SlotKey{options.node_id, options.port};
  rt->acker_count_ = ackers->count;
  rt->executor_slots_ = std::move(slots).value();
  const std::size_t n = plan->executors.size();
  worker::ExecutorPlacement placement;
  placement.run_here.assign(n, false);
  placement.remote_sinks.assign(n, nullptr);
  rt->routed_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    placement.run_here[i] = rt->executor_slots_[i] == rt->self_;
    if (placement.run_here[i]) continue;
    rt->routed_[i] = std::make_unique<RoutedSink>();
    placement.remote_sinks[i] = rt->routed_[i].get();
  }

  // The executors run here, numbered as the assignment numbers them.
  const auto assigned = by_component(options.executors);
  std::map<std::string, int> ordinal;
  for (const auto& ep : plan->executors) {
    const std::string& component = ep.component->id;
    const int k = ordinal[component]++;
    if (!placement.run_here[static_cast<std::size_t>(ep.index)] || component == kAcker) continue;
    const SpecExecutor& e = assigned.at(component)[static_cast<std::size_t>(k)];
    rt->own_.push_back(e);
    for (std::size_t i = 0; i < ep.tasks.size(); ++i) {
      rt->nimbus_task_[ep.tasks[i].value] = e.task_start + static_cast<int>(i);
    }
  }
  for (int i : ackers->here) {
    rt->own_.push_back(SpecExecutor{kAcker, -1 - i, -1 - i, options.node_id, options.port});
  }
  rt->ackers_here_ = ackers->here.size();

  // local-or-shuffle prefers the tasks of this worker.
  std::set<int> local_tasks;
  for (const auto& ep : plan->executors) {
    if (!placement.run_here[static_cast<std::size_t>(ep.index)]) continue;
    for (auto t : ep.tasks) local_tasks.insert(t.value);
  }
  for (auto& component : plan->components) {
    for (auto& stream : component->streams) {
      for (auto& sub : stream->subscriptions) {
        sub.local_tasks.clear();
        for (auto t : sub.tasks) {
          if (local_tasks.count(t.value)) sub.local_tasks.push_back(t);
        }
      }
    }
  }
  auto runtime = worker::TopologyRuntime::create(std::move(plan), topology, options.logger,
                                                 options.seed, std::move(placement));
  if (!runtime.ok()) return runtime.status();
  rt->runtime_ = std::move(runtime).value();
  rt->options_ = std::move(options);
  return rt;
}

SlotRuntime::~SlotRuntime() { stop(); }

void SlotRuntime::start() { runtime_->start(); }

void SlotRuntime::activate() {
  active_.store(true);
  runtime_->activate();
}

void SlotRuntime::deactivate() {
  active_.store(false);
  runtime_->deactivate();
}

void SlotRuntime::stop() {
  if (runtime_) runtime_->stop();
}

void SlotRuntime::route(int executor, worker::TupleSink* sink) {
  routed_.at(static_cast<std::size_t>(executor))->set_target(sink);
}

api::Result<std::vector<SlotKey>> SlotRuntime::layout_of(
    const std::vector<SpecExecutor>& executors) const {
  auto ackers = acker_layout(executors, options_.config, self_.node_id, self_.port);
  if (!ackers.ok()) return ackers.status();
  if (ackers->count != acker_count_) {
    return api::Status::error("the number of ackers changes from " +
                              std::to_string(acker_count_) + " to " +
                              std::to_string(ackers->count));
  }
  auto slots = place_executors(runtime_->plan(), executors, *ackers);
  if (!slots.ok()) return slots.status();
  for (std::size_t i = 0; i < slots->size(); ++i) {
    if (((*slots)[i] == self_) != (executor_slots_[i] == self_)) {
      return api::Status::error("executor " + std::to_string(i) + " of component '" +
                                runtime_->plan().executors[i].component->id + "' " +
                                ((*slots)[i] == self_ ? "moves here" : "moves away"));
    }
  }
  return slots;
}

std::vector<TaskId> SlotRuntime::local_tasks() const {
  std::vector<TaskId> out;
  for (const auto& ex : runtime_->executors()) {
    for (TaskId t : ex->plan().tasks) out.push_back(t);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<HeartbeatError> SlotRuntime::recent_errors() const {
  std::vector<HeartbeatError> out;
  for (const auto& ex : runtime_->executors()) {
    for (auto& e : ex->recent_errors()) {
      auto it = nimbus_task_.find(e.task.value);
      out.push_back({ex->plan().component->id, it == nimbus_task_.end() ? e.task.value : it->second,
                     e.time_ms, std::move(e.message)});
    }
  }
  return out;
}

}  // namespace rstorm::worker_process
