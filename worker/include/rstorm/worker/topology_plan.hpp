// TopologyPlan: a built topology laid out for running: task ids, executors and
// the tasks each runs, the routing table of every output stream (which tasks
// of which subscriber, by which grouping), the acker tasks and the runtime
// settings read from the config. Immutable once made: thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rstorm/config.hpp"
#include "rstorm/metrics.hpp"
#include "rstorm/status.hpp"
#include "rstorm/topology.hpp"
#include "rstorm/topology_context.hpp"
#include "rstorm/tuple.hpp"
#include "rstorm/worker/checkpoint.hpp"

namespace rstorm::worker {

// One subscriber of a stream.
struct Subscription {
  std::string component;
  GroupingType type = GroupingType::kShuffle;
  std::vector<TaskId> tasks;        // the subscriber's tasks, ascending
  std::vector<TaskId> local_tasks;  // those in this worker (local-or-shuffle)
  std::vector<int> field_indices;   // kFields: positions of the grouping fields
  int counter_index = 0;            // slot of the producer's round-robin counter
};

struct StreamRoute {
  StreamInfo info;  // tuples on this stream point here: stable address
  bool direct = false;
  std::vector<Subscription> subscriptions;
};

enum class ExecutorRole { kSpout, kBolt, kAcker };

struct ComponentPlan {
  std::string id;
  ExecutorRole role = ExecutorRole::kBolt;
  Config config;  // topology config with the component's entries on top
  std::vector<TaskId> tasks;
  std::vector<std::unique_ptr<StreamRoute>> streams;
  // The strongly connected component of the component graph this one is in
  // (its own index when it is on no cycle). Two components with the same
  // `cycle_group` reach each other: an edge between them closes a cycle.
  int cycle_group = 0;
  // With checkpoints: the tasks that send to this component's tasks (every
  // task of every component it subscribes to, ascending, once each), whose
  // barriers a task aligns, and the tasks this one's barriers go to.
  std::vector<TaskId> upstream_tasks;
  std::vector<TaskId> downstream_tasks;

  // nullptr when the component declares no such stream.
  const StreamRoute* find_stream(std::string_view stream) const {
    for (const auto& s : streams) {
      if (s->info.stream == stream) return s.get();
    }
    return nullptr;
  }
};

struct ExecutorPlan {
  int index = 0;
  const ComponentPlan* component = nullptr;
  std::vector<TaskId> tasks;  // contiguous ids
};

// Settings from the config, with Storm's meanings.
struct RuntimeSettings {
  int acker_executors = 1;                        // topology.acker.executors
  std::chrono::seconds message_timeout{30};       // topology.message.timeout.secs
  int max_spout_pending = 0;                      // topology.max.spout.pending (0: no bound)
  std::size_t receive_buffer_size = 8192;         // topology.executor.receive.buffer.size
  // Tuples per transfer batch. A partial batch is flushed when its producer
  // ends a burst (an executor loop), which bounds its wait by one burst, well
  // under topology.batch.flush.interval.millis's 1 ms under load.
  std::size_t batch_size = 256;  // topology.transfer.batch.size
  // Idle executors (IdleStrategy): spin this long, then park until woken.
  std::chrono::microseconds wait_spin{5};  // topology.executor.wait.spin.micros
  // A spout whose next_tuple emitted nothing waits this long.
  std::chrono::microseconds spout_wait_park{1000};  // topology.spout.wait.park.micros
  // Run a bolt on its producer's thread where possible (TopologyRuntime).
  bool fuse_executors = true;  // topology.fuse.executors
  // Windowed bolts hold their tuples unacked while the tuples are in a
  // window. The adaptive spout (max_spout_pending 0) keeps at least
  // window_min_pending trees in flight per task, so that a count window can
  // fill, and expects trees to take window_hold longer, so that a duration
  // window does not read as congestion.
  double window_min_pending = 0;
  std::chrono::milliseconds window_hold{0};
  // Event-time windows release their tuples only as the watermark moves,
  // which needs new input: a spout at its adaptive bound with nothing
  // completed for this long doubles the bound (0: no event-time window).
  std::chrono::milliseconds window_starve{0};
};

struct TopologyPlan {
  std::string name;
  Config config;
  RuntimeSettings settings;
  std::vector<std::unique_ptr<ComponentPlan>> components;  // user components, then __acker
  std::vector<ExecutorPlan> executors;
  std::vector<int> task_executor;  // index: task id; -1 for unused ids
  std::vector<TaskId> acker_tasks;
  std::shared_ptr<const TaskLayout> layout;
  int num_counters = 0;  // round-robin counters a producer needs
  // What the tasks register through TopologyContext::counter() and the like.
  std::shared_ptr<UserMetrics> user_metrics = std::make_shared<UserMetrics>();
  // Where the tasks' TopologyContext::key_value_state finds their stores. In
  // memory unless the runtime's creator sets another (state_backends.hpp).
  std::shared_ptr<StateBackend> state_backend = std::make_shared<InMemoryStateBackend>();
  // Checkpoints (checkpoint.hpp): the settings, where they are kept (in
  // memory unless the runtime's creator sets another), the task whose
  // executor coordinates them (the lowest spout task) and how many tasks
  // store a part of each (every spout and bolt task).
  CheckpointSettings checkpoint;
  std::shared_ptr<CheckpointStore> checkpoint_store = std::make_shared<InMemoryCheckpointStore>();
  TaskId checkpoint_coordinator;
  // The checkpoint the runtime restored its tasks from (0: none): the
  // coordinator numbers the next ones after it.
  std::int64_t checkpoint_restored = 0;
  int checkpoint_tasks = 0;

  const ComponentPlan* find_component(std::string_view id) const;
  bool acking() const { return !acker_tasks.empty(); }
  // Whether a producer of `from` must never wait on a full executor of `to`:
  // `to` is a spout (it receives only its trees' completions, from ackers), or
  // `from` -> `to` lies on a cycle of the topology (a wait there could close
  // a cycle of waits). See worker/README.md, "Flow control".
  static bool never_wait(const ComponentPlan& from, const ComponentPlan& to) {
    if (to.role == ExecutorRole::kSpout) return true;
    return from.role == ExecutorRole::kBolt && to.role == ExecutorRole::kBolt &&
           from.cycle_group == to.cycle_group;
  }
};

// An integer setting: `fallback` when the key is absent or null (as in
// conf/defaults.yaml, where null means "not set"); ConfigError on another type.
std::int64_t config_int(const Config& config, std::string_view key, std::int64_t fallback);

// The executors of some components as inclusive task ranges, as an
// assignment gives them (a rebalance may have changed how many there are).
using ExecutorLayout = std::map<std::string, std::vector<std::pair<int, int>>>;

// Task ids run from 1 in the topology's component order, then the ackers'.
// A component's executors are those `layout` gives it (null, or a component
// it leaves out: the component's parallelism, tasks split as Storm splits
// them). Fails on a config value of the wrong type or out of range, naming
// the key, or on a layout whose ranges are not exactly the component's tasks.
api::Result<std::unique_ptr<TopologyPlan>> make_plan(const std::string& name, const Config& config,
                                                     const Topology& topology,
                                                     const ExecutorLayout* layout = nullptr);

}  // namespace rstorm::worker
