#include "worker/process/slot_runtime.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <thread>
#include <tuple>

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

// Distinct slots of the assignment in (node, port) order.
std::vector<SlotKey> slots_of(const std::vector<SpecExecutor>& executors) {
  std::set<SlotKey> slots;
  for (const auto& e : executors) slots.insert(SlotKey{e.node_id, e.port});
  return {slots.begin(), slots.end()};
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

worker::ExecutorLayout executor_layout(const std::vector<SpecExecutor>& executors) {
  worker::ExecutorLayout layout;
  for (const auto& e : executors) {
    if (e.component != kAcker) layout[e.component].emplace_back(e.task_start, e.task_end);
  }
  return layout;
}

api::Result<std::vector<SlotKey>> place_tasks(const worker::TopologyPlan& plan,
                                              const std::vector<SpecExecutor>& executors,
                                              const AckerLayout& ackers) {
  if (static_cast<int>(plan.acker_tasks.size()) != ackers.count) {
    return api::Status::error("the assignment has " + std::to_string(ackers.count) +
                              " ackers, the plan " + std::to_string(plan.acker_tasks.size()));
  }
  std::vector<SlotKey> out(plan.task_executor.size());
  std::vector<char> placed(plan.task_executor.size(), 0);
  for (const auto& e : executors) {
    if (e.component == kAcker) continue;
    const worker::ComponentPlan* cp = plan.find_component(e.component);
    if (cp == nullptr) {
      return api::Status::error("the assignment has component '" + e.component +
                                "', which the topology does not");
    }
    for (int t = e.task_start; t <= e.task_end; ++t) {
      const auto task = static_cast<std::size_t>(t);
      if (t < 1 || task >= out.size() || plan.layout->task_component[task] != e.component) {
        return api::Status::error("the assignment gives task " + std::to_string(t) +
                                  " to component '" + e.component +
                                  "', which the topology's tasks of it do not include");
      }
      out[task] = SlotKey{e.node_id, e.port};
      placed[task] = 1;
    }
  }
  for (std::size_t i = 0; i < plan.acker_tasks.size(); ++i) {
    const auto task = static_cast<std::size_t>(plan.acker_tasks[i].value);
    out[task] = ackers.slots[i];
    placed[task] = 1;
  }
  for (std::size_t t = 1; t < out.size(); ++t) {
    if (!placed[t]) {
      return api::Status::error("the assignment places no executor for task " + std::to_string(t) +
                                " of component '" + plan.layout->task_component[t] + "'");
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
  // The assignment's executors, not the parallelism compiled into the
  // library: a rebalance may have changed how many a component has.
  const worker::ExecutorLayout layout = executor_layout(options.executors);
  auto made = worker::make_plan(options.topology_name, config, topology, &layout);
  if (!made.ok()) return made.status();
  std::unique_ptr<worker::TopologyPlan> plan = std::move(made).value();
  if (options.state_backend) plan->state_backend = options.state_backend;
  if (options.checkpoint_store) plan->checkpoint_store = options.checkpoint_store;
  auto slots = place_tasks(*plan, options.executors, *ackers);
  if (!slots.ok()) return slots.status();

  std::unique_ptr<SlotRuntime> rt(new SlotRuntime());
  rt->self_ = SlotKey{options.node_id, options.port};
  rt->acker_count_ = ackers->count;
  rt->ackers_here_list_ = ackers->here;
  rt->task_slots_ = std::move(slots).value();
  const std::size_t n = plan->executors.size();
  worker::ExecutorPlacement placement;
  placement.run_here.assign(n, false);
  placement.remote_task_sinks.assign(rt->task_slots_.size(), nullptr);
  rt->routed_.resize(rt->task_slots_.size());
  for (std::size_t t = 1; t < rt->task_slots_.size(); ++t) {
    if (rt->task_slots_[t] == rt->self_) continue;
    rt->routed_[t] = std::make_unique<RoutedSink>();
    placement.remote_task_sinks[t] = rt->routed_[t].get();
  }
  std::set<int> local_tasks;
  std::map<SlotKey, std::uint32_t> worker_number;
  placement.worker_of.assign(n, 0);
  for (const auto& ep : plan->executors) {
    const auto first = static_cast<std::size_t>(ep.tasks.front().value);
    const SlotKey& slot = rt->task_slots_[first];
    placement.worker_of[static_cast<std::size_t>(ep.index)] =
        worker_number.emplace(slot, static_cast<std::uint32_t>(worker_number.size())).first->second;
    placement.run_here[static_cast<std::size_t>(ep.index)] = slot == rt->self_;
    if (!placement.run_here[static_cast<std::size_t>(ep.index)]) continue;
    for (auto t : ep.tasks) local_tasks.insert(t.value);
    if (ep.component->role == worker::ExecutorRole::kAcker) continue;
    rt->own_.push_back(SpecExecutor{ep.component->id, ep.tasks.front().value,
                                    ep.tasks.back().value, options.node_id, options.port});
  }
  for (int i : ackers->here) {
    rt->own_.push_back(SpecExecutor{kAcker, -1 - i, -1 - i, options.node_id, options.port});
  }
  rt->ackers_here_ = ackers->here.size();

  // local-or-shuffle prefers the tasks of this worker.
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

void SlotRuntime::route(TaskId task, worker::TupleSink* sink) {
  routed_.at(static_cast<std::size_t>(task.value))->set_target(sink);
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
  if (ackers->here != ackers_here_list_) {
    return api::Status::error("the ackers this worker runs change");
  }
  auto slots = place_tasks(runtime_->plan(), executors, *ackers);
  if (!slots.ok()) return slots.status();
  // The same executors here (same components, same task ranges)?
  auto key = [](const SpecExecutor& e) { return std::tie(e.component, e.task_start, e.task_end); };
  auto less = [&](const SpecExecutor& a, const SpecExecutor& b) { return key(a) < key(b); };
  std::vector<SpecExecutor> mine, next, left, came;
  for (const auto& e : own_) {
    if (e.component != kAcker) mine.push_back(e);
  }
  for (const auto& e : executors) {
    if (e.component != kAcker && SlotKey{e.node_id, e.port} == self_) next.push_back(e);
  }
  std::sort(mine.begin(), mine.end(), less);
  std::sort(next.begin(), next.end(), less);
  std::set_difference(mine.begin(), mine.end(), next.begin(), next.end(), std::back_inserter(left),
                      less);
  std::set_difference(next.begin(), next.end(), mine.begin(), mine.end(), std::back_inserter(came),
                      less);
  auto name = [](const SpecExecutor& e) {
    return e.component + "[" + std::to_string(e.task_start) +
           (e.task_end != e.task_start ? "-" + std::to_string(e.task_end) : std::string()) + "]";
  };
  if (!left.empty()) return api::Status::error("executor " + name(left.front()) + " leaves this worker");
  if (!came.empty()) return api::Status::error("executor " + name(came.front()) + " comes to this worker");
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

void SlotRuntime::log_errors_not_logged() {
  for (const auto& ex : runtime_->executors()) ex->log_errors_not_logged();
}

std::vector<HeartbeatError> SlotRuntime::recent_errors() const {
  std::vector<HeartbeatError> out;
  for (const auto& ex : runtime_->executors()) {
    for (auto& e : ex->recent_errors()) {
      out.push_back({ex->plan().component->id, e.task.value, e.time_ms, std::move(e.message)});
    }
  }
  return out;
}

}  // namespace rstorm::worker_process
