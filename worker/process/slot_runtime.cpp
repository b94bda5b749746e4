#include "worker/process/slot_runtime.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "rstorm/worker/acker_executor.hpp"
#include "rstorm/worker/bolt_executor.hpp"
#include "rstorm/worker/spout_executor.hpp"

namespace rstorm::worker_process {

using worker::Batch;
using worker::Envelope;
using worker::MessageKind;

constexpr char kAcker[] = "__acker";

// A kFail control message for tree `root`. Written against both layouts of
// Envelope (plain fields, or set_control() as the runtime is moving to).
template <typename E>
void make_fail(E& e, TaskId acker, std::uint64_t root) {
  e.dest = acker;
  if constexpr (requires { e.set_control(MessageKind::kFail, root, 0, TaskId()); }) {
    e.set_control(MessageKind::kFail, root, 0, TaskId());
  } else {
    e.kind = MessageKind::kFail;
    e.root = root;
  }
}

// The sink for an executor run by another worker (see the class comment).
// try_push runs on the producing executor's thread; counters are atomics.
class RemotePendingSink final : public worker::TupleSink {
 public:
  RemotePendingSink(const worker::TopologyPlan& plan, const worker::ExecutorEnv& env,
                    std::string destination, std::shared_ptr<spdlog::logger> logger)
      : plan_(plan), env_(env), destination_(std::move(destination)), logger_(std::move(logger)) {}

  bool try_push(Batch& batch) override {
    std::uint64_t tuples = 0;
    for (Envelope& e : batch) {
      if (e.kind != MessageKind::kTuple) continue;
      ++tuples;
      const auto& anchors = e.tuple.anchors();
      for (std::size_t i = 0; i < anchors.size(); ++i) fail_tree(anchors[i].root);
    }
    if (tuples > 0) pending_.fetch_add(tuples, std::memory_order_relaxed);
    if (!logged_.exchange(true)) {
      logger_->warn(
          "[topology={}] tuples for {} are not delivered: no transport between workers yet; "
          "counted as transferred_remote_pending and their trees failed so spouts replay "
          "(logged once per destination)",
          plan_.name, destination_);
    }
    batch.clear();
    return true;
  }

  // Never full. (No `override`: the runtime's TupleSink gains this hook in a
  // change that is in progress; this compiles against either version.)
  void wait_for_space(std::chrono::microseconds) {}

  std::uint64_t pending() const { return pending_.load(std::memory_order_relaxed); }

 private:
  // Fails tree `root` at its acker when that acker runs in this worker.
  void fail_tree(std::uint64_t root) {
    if (plan_.acker_tasks.empty() || root == 0) return;
    const TaskId acker = plan_.acker_tasks[root % plan_.acker_tasks.size()];
    const int index = env_.task_sink[static_cast<std::size_t>(acker.value)];
    worker::TupleSink* sink = env_.sinks[static_cast<std::size_t>(index)];
    if (dynamic_cast<RemotePendingSink*>(sink) != nullptr) return;  // remote acker: times out
    Batch fail(1);
    make_fail(fail[0], acker, root);
    while (!sink->try_push(fail)) {
      if (env_.stopping->load(std::memory_order_relaxed)) return;
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  const worker::TopologyPlan& plan_;
  const worker::ExecutorEnv& env_;
  const std::string destination_;
  const std::shared_ptr<spdlog::logger> logger_;
  std::atomic<std::uint64_t> pending_{0};
  std::atomic<bool> logged_{false};
};

namespace {

bool by_first_task(const SpecExecutor& a, const SpecExecutor& b) {
  return a.task_start < b.task_start;
}

// Distinct slots of the assignment in (node, port) order.
std::vector<std::pair<std::string, int>> slots_of(const std::vector<SpecExecutor>& executors) {
  std::set<std::pair<std::string, int>> slots;
  for (const auto& e : executors) slots.emplace(e.node_id, e.port);
  return {slots.begin(), slots.end()};
}

template <typename T, typename Make>
api::Result<std::vector<std::unique_ptr<T>>> make_instances(const worker::ExecutorPlan& ep,
                                                            Make make) {
  std::vector<std::unique_ptr<T>> out;
  const std::string& id = ep.component->id;
  for (std::size_t i = 0; i < ep.tasks.size(); ++i) {
    try {
      auto instance = make(id);
      if (!instance) {
        return api::Status::error("component '" + id + "': its factory returned no instance");
      }
      out.push_back(std::move(instance));
    } catch (const std::exception& e) {
      return api::Status::error("component '" + id + "': its factory threw: " + e.what());
    }
  }
  return out;
}

}  // namespace

api::Result<AckerLayout> acker_layout(const std::vector<SpecExecutor>& executors,
                                      const Config& config, const std::string& node_id,
                                      int port) {
  AckerLayout layout;
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
      if (a.node_id == node_id && a.port == port) layout.here.push_back(i);
    }
    return layout;
  }
  const auto slots = slots_of(executors);
  const auto self = std::find(slots.begin(), slots.end(), std::make_pair(node_id, port));
  const int workers = static_cast<int>(slots.size());
  const int index = static_cast<int>(self - slots.begin());
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
  if (self == slots.end()) return layout;
  for (int i = 0; i < layout.count; ++i) {
    if (i % workers == index) layout.here.push_back(i);
  }
  return layout;
}

api::Result<std::unique_ptr<SlotRuntime>> SlotRuntime::create(SlotRuntimeOptions options,
                                                              const Topology& topology) {
  auto ackers = acker_layout(options.executors, options.config, options.node_id, options.port);
  if (!ackers.ok()) return ackers.status();
  Config config;
  for (const auto& [key, entry] : options.config.entries()) {
    if (!entry.value.is_null()) config.set(key, entry.value, entry.origin);
  }
  config.set("topology.acker.executors", static_cast<std::int64_t>(ackers->count),
             "assignment");
  auto plan = worker::make_plan(options.topology_name, config, topology);
  if (!plan.ok()) return plan.status();

  std::unique_ptr<SlotRuntime> rt(new SlotRuntime());
  rt->topology_ = topology;
  rt->plan_ = std::move(plan).value();
  worker::TopologyPlan& p = *rt->plan_;

  // Plan executors by component, in task order; assignment executors likewise.
  std::map<std::string, std::vector<int>> plan_by_component;
  for (const auto& ep : p.executors) plan_by_component[ep.component->id].push_back(ep.index);
  std::map<std::string, std::vector<SpecExecutor>> assigned;
  for (const auto& e : options.executors) {
    if (e.component != kAcker) assigned[e.component].push_back(e);
  }
  std::vector<bool> here(p.executors.size(), false);
  for (auto& [component, list] : assigned) {
    std::sort(list.begin(), list.end(), by_first_task);
    const auto& planned = plan_by_component[component];
    if (planned.size() != list.size()) {
      return api::Status::error("component '" + component + "': the assignment has " +
                                std::to_string(list.size()) + " executors, the topology " +
                                std::to_string(planned.size()));
    }
    for (std::size_t k = 0; k < list.size(); ++k) {
      if (list[k].node_id == options.node_id && list[k].port == options.port) {
        here[static_cast<std::size_t>(planned[k])] = true;
        rt->own_.push_back(list[k]);
        const auto& tasks = p.executors[static_cast<std::size_t>(planned[k])].tasks;
        for (std::size_t i = 0; i < tasks.size(); ++i) {
          rt->nimbus_task_[tasks[i].value] = list[k].task_start + static_cast<int>(i);
        }
      }
    }
  }
  for (const auto& [component, planned] : plan_by_component) {
    if (component != kAcker && assigned.count(component) == 0) {
      return api::Status::error("component '" + component + "' is not in the assignment");
    }
  }
  const auto& acker_executors = plan_by_component[kAcker];
  for (int i : ackers->here) {
    here[static_cast<std::size_t>(acker_executors[static_cast<std::size_t>(i)])] = true;
    rt->own_.push_back(SpecExecutor{kAcker, -1 - i, -1 - i, options.node_id, options.port});
  }
  rt->ackers_here_ = ackers->here.size();

  // local-or-shuffle prefers the tasks of this worker.
  std::set<int> local_tasks;
  for (const auto& ep : p.executors) {
    if (!here[static_cast<std::size_t>(ep.index)]) continue;
    for (auto t : ep.tasks) local_tasks.insert(t.value);
  }
  for (auto& component : p.components) {
    for (auto& stream : component->streams) {
      for (auto& sub : stream->subscriptions) {
        sub.local_tasks.clear();
        for (auto t : sub.tasks) {
          if (local_tasks.count(t.value)) sub.local_tasks.push_back(t);
        }
      }
    }
  }

  rt->env_.plan = rt->plan_.get();
  rt->env_.task_sink = p.task_executor;
  rt->env_.sinks.assign(p.executors.size(), nullptr);
  rt->env_.logger = options.logger;
  rt->env_.stopping = &rt->stopping_;
  for (const auto& ep : p.executors) {
    if (here[static_cast<std::size_t>(ep.index)]) continue;
    std::string destination = "component '" + ep.component->id + "' tasks " +
                              std::to_string(ep.tasks.front().value) + ".." +
                              std::to_string(ep.tasks.back().value) + " (another worker)";
    auto sink = std::make_unique<RemotePendingSink>(p, rt->env_, std::move(destination),
                                                    options.logger);
    rt->env_.sinks[static_cast<std::size_t>(ep.index)] = sink.get();
    rt->remote_sinks_.push_back(std::move(sink));
  }
  try {
    for (const auto& ep : p.executors) {
      if (!here[static_cast<std::size_t>(ep.index)]) continue;
      const std::uint64_t s = options.seed ^ (0x9e3779b97f4a7c15ULL * (ep.index + 1));
      std::unique_ptr<worker::Executor> ex;
      if (ep.component->role == worker::ExecutorRole::kSpout) {
        auto spouts = make_instances<Spout>(
            ep, [&](const std::string& id) { return topology.create_spout(id); });
        if (!spouts.ok()) return spouts.status();
        ex = std::make_unique<worker::SpoutExecutor>(rt->env_, ep, std::move(spouts).value(), s);
      } else if (ep.component->role == worker::ExecutorRole::kBolt) {
        auto bolts = make_instances<Bolt>(
            ep, [&](const std::string& id) { return topology.create_bolt(id); });
        if (!bolts.ok()) return bolts.status();
        ex = std::make_unique<worker::BoltExecutor>(rt->env_, ep, std::move(bolts).value(), s);
      } else {
        ex = std::make_unique<worker::AckerExecutor>(rt->env_, ep, s);
      }
      rt->env_.sinks[static_cast<std::size_t>(ep.index)] = &ex->queue();
      rt->executors_.push_back(std::move(ex));
    }
  } catch (const ConfigError& e) {
    return api::Status::error(e.what());
  }
  return rt;
}

SlotRuntime::~SlotRuntime() { stop(); }

void SlotRuntime::start() {
  started_ = std::chrono::steady_clock::now();
  running_ = true;
  for (auto& ex : executors_) ex->start();
}

void SlotRuntime::activate() {
  active_.store(true);
  for (auto& ex : executors_) ex->set_active(true);
}

void SlotRuntime::deactivate() {
  active_.store(false);
  for (auto& ex : executors_) ex->set_active(false);
}

void SlotRuntime::stop() {
  if (!running_) return;
  running_ = false;
  stopping_.store(true, std::memory_order_relaxed);
  for (auto& ex : executors_) ex->stop();
  for (auto& ex : executors_) ex->join();
}

std::uint64_t SlotRuntime::transferred_remote_pending() const {
  std::uint64_t n = 0;
  for (const auto& s : remote_sinks_) n += s->pending();
  return n;
}

std::vector<HeartbeatError> SlotRuntime::recent_errors() const {
  std::vector<HeartbeatError> out;
  for (const auto& ex : executors_) {
    for (auto& e : ex->recent_errors()) {
      auto it = nimbus_task_.find(e.task.value);
      out.push_back({ex->plan().component->id, it == nimbus_task_.end() ? e.task.value : it->second,
                     e.time_ms, std::move(e.message)});
    }
  }
  return out;
}

TopologyStats SlotRuntime::stats() const {
  TopologyStats out;
  out.name = plan_->name;
  out.uptime_secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  for (const auto& c : plan_->components) {
    ComponentStats cs;
    cs.id = c->id;
    cs.is_spout = c->role == worker::ExecutorRole::kSpout;
    cs.is_system = c->role == worker::ExecutorRole::kAcker;
    for (const auto& ex : executors_) {
      if (ex->plan().component != c.get()) continue;
      const worker::ExecutorStats& s = ex->stats();
      auto get = [](const std::atomic<std::uint64_t>& a) {
        return a.load(std::memory_order_relaxed);
      };
      ++cs.executors;
      cs.tasks += static_cast<int>(ex->plan().tasks.size());
      cs.emitted += get(s.emitted);
      cs.transferred += get(s.transferred);
      cs.acked += get(s.acked);
      cs.failed += get(s.failed);
      cs.executed += get(s.executed);
      cs.errors += get(s.errors);
      out.in_flight += ex->in_flight();
    }
    if (cs.executors > 0) out.components.push_back(std::move(cs));
  }
  return out;
}

}  // namespace rstorm::worker_process
