#include "rstorm/worker/topology_plan.hpp"

#include <algorithm>
#include <set>

#include "rstorm/config_schema.hpp"

namespace rstorm::worker {
namespace {

api::Result<RuntimeSettings> read_settings(const Config& c) {
  RuntimeSettings s;
  try {
    s.acker_executors = static_cast<int>(config_int(c, keys::kTopologyAckerExecutors, 1));
    s.message_timeout = std::chrono::seconds(config_int(c, keys::kTopologyMessageTimeoutSecs, 30));
    s.max_spout_pending = static_cast<int>(config_int(c, keys::kTopologyMaxSpoutPending, 0));
    s.receive_buffer_size =
        static_cast<std::size_t>(config_int(c, keys::kTopologyExecutorReceiveBufferSize, 8192));
    s.batch_size = static_cast<std::size_t>(config_int(c, keys::kTopologyTransferBatchSize, 256));
    s.wait_spin = std::chrono::microseconds(
        std::clamp<std::int64_t>(config_int(c, keys::kTopologyExecutorWaitSpinMicros, 5), 0,
                                 1'000'000));
    if (const Config::Entry* e = c.find(keys::kTopologyFuseExecutors);
        e != nullptr && !e->value.is_null()) {
      s.fuse_executors = c.get_bool(keys::kTopologyFuseExecutors);
    }
    s.spout_wait_park = std::chrono::microseconds(
        std::clamp<std::int64_t>(config_int(c, keys::kTopologySpoutWaitParkMicros, 1000), 1,
                                 1'000'000));
  } catch (const ConfigError& e) {
    return api::Status::error(e.what());
  }
  if (s.acker_executors < 0) {
    return api::Status::error(std::string(keys::kTopologyAckerExecutors) +
                              " must not be negative, got " + std::to_string(s.acker_executors));
  }
  if (s.message_timeout.count() < 1) {
    return api::Status::error(std::string(keys::kTopologyMessageTimeoutSecs) +
                              " must be at least 1, got " +
                              std::to_string(s.message_timeout.count()));
  }
  if (s.batch_size < 1 || s.batch_size > 65536) s.batch_size = 256;
  if (s.receive_buffer_size < s.batch_size) s.receive_buffer_size = s.batch_size * 2;
  return s;
}

std::string range_text(int first, int last) {
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

// Assigns task ids: components in the topology's order from 1, then the
// ackers. A component's tasks go to the executors `layout` gives it, or else
// split over its parallelism as Storm splits them (the first tasks % executors
// executors get one task more).
api::Status assign_tasks(TopologyPlan& plan, const Topology& topology,
                         const ExecutorLayout* layout) {
  auto shared_layout = std::make_shared<TaskLayout>();
  shared_layout->task_component.push_back("");  // id 0 is unused
  int next = 1;
  auto add_executor = [&](const ComponentPlan* cp, int first, int last) {
    ExecutorPlan ep;
    ep.index = static_cast<int>(plan.executors.size());
    ep.component = cp;
    for (int t = first; t <= last; ++t) ep.tasks.emplace_back(t);
    plan.executors.push_back(std::move(ep));
  };
  auto add_component = [&](std::unique_ptr<ComponentPlan> cp, int tasks,
                           int parallelism) -> api::Status {
    const int first = next;
    for (int i = 0; i < tasks; ++i) {
      cp->tasks.emplace_back(next++);
      shared_layout->task_component.push_back(cp->id);
    }
    shared_layout->component_tasks[cp->id] = cp->tasks;
    const auto* given = layout == nullptr ? nullptr : [&]() -> const std::vector<std::pair<int, int>>* {
      auto it = layout->find(cp->id);
      return it == layout->end() ? nullptr : &it->second;
    }();
    if (given != nullptr) {
      std::vector<std::pair<int, int>> ranges = *given;
      std::sort(ranges.begin(), ranges.end());
      int expected = first;
      for (const auto& [lo, hi] : ranges) {
        if (lo != expected || hi < lo || hi >= next) {
          std::string have;
          for (const auto& [a, b] : ranges) have += (have.empty() ? "" : ", ") + range_text(a, b);
          return api::Status::error(
              "component '" + cp->id + "': the assignment's executors hold tasks " + have +
              ", but the topology's tasks are " + range_text(first, next - 1) +
              " (is this the library the topology was submitted with?)");
        }
        add_executor(cp.get(), lo, hi);
        expected = hi + 1;
      }
      if (expected != next) {
        return api::Status::error("component '" + cp->id + "': the assignment's executors hold " +
                                  "tasks up to " + std::to_string(expected - 1) +
                                  ", but the topology's tasks are " +
                                  range_text(first, next - 1));
      }
    } else {
      int at = first;
      for (int e = 0; e < parallelism; ++e) {
        const int count = tasks / parallelism + (e < tasks % parallelism ? 1 : 0);
        if (count > 0) add_executor(cp.get(), at, at + count - 1);
        at += count;
      }
    }
    plan.components.push_back(std::move(cp));
    return api::Status::ok();
  };
  for (const auto& spec : topology.components()) {
    // As nimbus checks what `rstorm submit` sends: `rstorm local` and the
    // test harness run what the schema refuses no more than a cluster does.
    if (api::Status s = validate_config(spec.config); !s.is_ok()) {
      return api::Status::error("component '" + spec.id + "': " + s.message());
    }
    auto cp = std::make_unique<ComponentPlan>();
    cp->id = spec.id;
    cp->role = spec.kind == ComponentKind::kSpout ? ExecutorRole::kSpout : ExecutorRole::kBolt;
    cp->config = plan.config;
    cp->config.merge(spec.config);
    const int parallelism = std::max(1, std::min(spec.parallelism, spec.num_tasks));
    if (auto s = add_component(std::move(cp), spec.num_tasks, parallelism); !s.is_ok()) return s;
  }
  if (layout != nullptr) {
    for (const auto& [component, ranges] : *layout) {
      if (topology.component(component) == nullptr) {
        return api::Status::error("the assignment has component '" + component +
                                  "', which the topology does not");
      }
    }
  }
  if (plan.settings.acker_executors > 0) {
    auto acker = std::make_unique<ComponentPlan>();
    acker->id = std::string(kAckerComponent);
    acker->role = ExecutorRole::kAcker;
    acker->config = plan.config;
    int n = plan.settings.acker_executors;
    const ComponentPlan* cp = acker.get();
    const int first = next;
    for (int i = 0; i < n; ++i) {
      acker->tasks.emplace_back(next++);
      shared_layout->task_component.push_back(acker->id);
    }
    shared_layout->component_tasks[acker->id] = acker->tasks;
    for (int t = first; t < next; ++t) add_executor(cp, t, t);
    plan.components.push_back(std::move(acker));
    plan.acker_tasks = plan.components.back()->tasks;
  }
  plan.task_executor.assign(static_cast<std::size_t>(next), -1);
  for (const auto& ep : plan.executors) {
    for (TaskId t : ep.tasks) plan.task_executor[static_cast<std::size_t>(t.value)] = ep.index;
  }
  plan.layout = std::move(shared_layout);
  return api::Status::ok();
}

// Builds every component's output streams and their subscribers.
void build_routes(TopologyPlan& plan, const Topology& topology) {
  for (const auto& spec : topology.components()) {
    ComponentPlan* cp = nullptr;
    for (auto& c : plan.components) {
      if (c->id == spec.id) cp = c.get();
    }
    for (const auto& s : spec.streams) {
      auto route = std::make_unique<StreamRoute>();
      route->info = StreamInfo{spec.id, s.id, s.fields, false};
      route->direct = s.direct;
      cp->streams.push_back(std::move(route));
    }
  }
  for (const auto& spec : topology.components()) {
    const ComponentPlan* subscriber = plan.find_component(spec.id);
    for (const auto& in : spec.inputs) {
      auto* source = const_cast<ComponentPlan*>(plan.find_component(in.component));
      auto* route = const_cast<StreamRoute*>(source->find_stream(in.stream));
      Subscription sub;
      sub.component = spec.id;
      sub.type = in.grouping.type;
      sub.tasks = subscriber->tasks;
      sub.local_tasks = subscriber->tasks;  // one worker: every task is local
      for (const auto& f : in.grouping.fields) {
        sub.field_indices.push_back(static_cast<int>(*route->info.fields.index_of(f)));
      }
      sub.counter_index = plan.num_counters++;
      route->subscriptions.push_back(std::move(sub));
    }
  }
}

// Groups components that reach each other along subscriptions (strongly
// connected components; a topology has few, so reachability by DFS is enough).
void find_cycles(TopologyPlan& plan) {
  const std::size_t n = plan.components.size();
  std::vector<std::vector<std::size_t>> next(n);
  auto index_of = [&](std::string_view id) {
    for (std::size_t i = 0; i < n; ++i) {
      if (plan.components[i]->id == id) return i;
    }
    return n;
  };
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto& route : plan.components[i]->streams) {
      for (const auto& sub : route->subscriptions) {
        const std::size_t j = index_of(sub.component);
        if (j < n) next[i].push_back(j);
      }
    }
  }
  std::vector<std::vector<char>> reach(n, std::vector<char>(n, 0));
  for (std::size_t from = 0; from < n; ++from) {
    std::vector<std::size_t> stack{from};
    while (!stack.empty()) {
      const std::size_t at = stack.back();
      stack.pop_back();
      for (std::size_t j : next[at]) {
        if (!reach[from][j]) {
          reach[from][j] = 1;
          stack.push_back(j);
        }
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    int group = static_cast<int>(i);
    for (std::size_t j = 0; j < i; ++j) {
      if (reach[i][j] && reach[j][i]) {
        group = plan.components[j]->cycle_group;
        break;
      }
    }
    plan.components[i]->cycle_group = group;
  }
}

// Checkpoints: who sends barriers to whom, and who coordinates. A barrier
// must reach every task from every upstream task before the task can store
// its part, which a cycle would never let happen: refused, naming it.
api::Status plan_checkpoints(TopologyPlan& plan) {
  std::map<std::string, std::set<std::int32_t>> upstream;
  for (const auto& cp : plan.components) {
    if (cp->role == ExecutorRole::kAcker) continue;
    std::set<std::int32_t> down;
    for (const auto& route : cp->streams) {
      for (const auto& sub : route->subscriptions) {
        const ComponentPlan* to = plan.find_component(sub.component);
        if (to == cp.get() || to->cycle_group == cp->cycle_group) {
          return api::Status::error(
              std::string(keys::kTopologyStateCheckpointing) + " is on, but '" + cp->id + "' -> '" +
              to->id +
              "' closes a cycle: a checkpoint's barrier could never reach every input of a task "
              "on it (turn checkpoints off, or break the cycle)");
        }
        for (TaskId t : sub.tasks) down.insert(t.value);
        for (TaskId t : cp->tasks) upstream[sub.component].insert(t.value);
      }
    }
    for (std::int32_t t : down) cp->downstream_tasks.emplace_back(t);
    plan.checkpoint_tasks += static_cast<int>(cp->tasks.size());
    if (cp->role == ExecutorRole::kSpout &&
        (plan.checkpoint_coordinator.value <= 0 ||
         cp->tasks.front().value < plan.checkpoint_coordinator.value)) {
      plan.checkpoint_coordinator = cp->tasks.front();
    }
  }
  for (const auto& cp : plan.components) {
    for (std::int32_t t : upstream[cp->id]) cp->upstream_tasks.emplace_back(t);
  }
  if (plan.checkpoint_coordinator.value <= 0) {
    return api::Status::error(std::string(keys::kTopologyStateCheckpointing) +
                              " is on, but the topology has no spout to start checkpoints at");
  }
  // Fused executors run their members by function call, with no queue to
  // hold an input in while a barrier is aligned.
  plan.settings.fuse_executors = false;
  return api::Status::ok();
}

}  // namespace

std::int64_t config_int(const Config& config, std::string_view key, std::int64_t fallback) {
  const Config::Entry* e = config.find(key);
  if (e == nullptr || e->value.is_null()) return fallback;
  return config.get_int(key);
}

const ComponentPlan* TopologyPlan::find_component(std::string_view id) const {
  for (const auto& c : components) {
    if (c->id == id) return c.get();
  }
  return nullptr;
}

// What the windowed bolts need from the adaptive spout (RuntimeSettings).
// The window's keys were checked when the topology was built; here only
// their values are read.
void size_windows(TopologyPlan& plan) {
  auto int_or = [](const Config& c, std::string_view key, std::int64_t fallback) {
    const Config::Entry* e = c.find(key);
    return e != nullptr && e->value.is_int() ? e->value.as_int() : fallback;
  };
  for (const auto& cp : plan.components) {
    const Config& c = cp->config;
    const std::int64_t length_count = int_or(c, keys::kWindowLengthCount, 0);
    const std::int64_t length_ms = int_or(c, keys::kWindowLengthDurationMs, 0);
    if (length_count <= 0 && length_ms <= 0) continue;
    const std::int64_t slide_count = int_or(c, keys::kWindowSlidingIntervalCount, 0);
    const std::int64_t slide_ms = int_or(c, keys::kWindowSlidingIntervalDurationMs, 0);
    const Config::Entry* ts_field = c.find(keys::kTupleTimestampFieldName);
    const bool event_time = ts_field != nullptr && ts_field->value.is_string();
    const auto tasks = static_cast<double>(cp->tasks.size());
    if (event_time) {
      // Longer than the watermark's period (acks come at least that often
      // while input flows), shorter than the idleness timeout (so that the
      // spout sends more before its silence reads as an idle input).
      const std::int64_t interval = int_or(c, keys::kWatermarkEventIntervalMs, 1000);
      const std::int64_t idle = int_or(c, keys::kWatermarkIdleTimeoutMs, 5000);
      std::int64_t starve = 2 * interval;
      if (idle > 0) starve = std::min(starve, idle / 2);
      const auto ms = std::chrono::milliseconds(std::max<std::int64_t>(starve, 100));
      plan.settings.window_starve =
          plan.settings.window_starve.count() == 0 ? ms : std::min(plan.settings.window_starve, ms);
    }
    if (length_count > 0) {
      // A count slide adds up to a slide's tuples; a slide in time lets the
      // window take any number meanwhile: allow twice the length.
      const std::int64_t per_task =
          length_count + (slide_count > 0 ? slide_count : length_count);
      plan.settings.window_min_pending += static_cast<double>(per_task) * tasks;
    } else {
      std::int64_t hold = length_ms + std::max<std::int64_t>(slide_ms, 0);
      if (event_time) {
        hold += int_or(c, keys::kTupleTimestampMaxLagMs, 0) +
                int_or(c, keys::kWatermarkEventIntervalMs, 1000);
      }
      plan.settings.window_hold =
          std::max(plan.settings.window_hold, std::chrono::milliseconds(hold));
    }
  }
}

api::Result<std::unique_ptr<TopologyPlan>> make_plan(const std::string& name, const Config& config,
                                                     const Topology& topology,
                                                     const ExecutorLayout* layout) {
  auto plan = std::make_unique<TopologyPlan>();
  plan->name = name;
  plan->config = config;
  plan->config.set(std::string(keys::kTopologyName), name, "submit");
  auto settings = read_settings(plan->config);
  if (!settings.ok()) return settings.status();
  plan->settings = *settings;
  if (auto s = assign_tasks(*plan, topology, layout); !s.is_ok()) return s;
  size_windows(*plan);
  build_routes(*plan, topology);
  find_cycles(*plan);
  auto checkpoint = checkpoint_settings(plan->config);
  if (!checkpoint.ok()) return checkpoint.status();
  plan->checkpoint = *checkpoint;
  if (plan->checkpoint.enabled) {
    if (auto s = plan_checkpoints(*plan); !s.is_ok()) return s;
  }
  return plan;
}

}  // namespace rstorm::worker
