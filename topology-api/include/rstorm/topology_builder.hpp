// TopologyBuilder: declares spouts and bolts, how bolts subscribe to streams,
// parallelism, resource hints and per-component config; build() validates the
// whole and returns a Topology or every problem found, each naming the
// component, stream or field at fault. Single thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "rstorm/status.hpp"
#include "rstorm/topology.hpp"
#include "rstorm/windowed_bolt.hpp"

namespace rstorm {

namespace detail {
struct PendingComponent {
  ComponentSpec spec;
  SpoutFactory spout;
  BoltFactory bolt;
  bool num_tasks_set = false;
  bool windowed = false;  // set_bolt with a WindowedBoltFactory
};
}  // namespace detail

// Settings shared by spouts and bolts. Returned by set_spout/set_bolt for
// chaining; valid while the builder lives.
template <typename Self>
class ComponentDeclarer {
 public:
  explicit ComponentDeclarer(detail::PendingComponent* c) : c_(c) {}

  // Tasks spread over the executors (default: one per executor).
  Self& set_num_tasks(int tasks) {
    c_->spec.num_tasks = tasks;
    c_->num_tasks_set = true;
    return self();
  }
  // Per executor, in MB. A component that does not set it gets the
  // topology config's topology.component.resources.onheap.memory.mb and
  // .offheap.memory.mb (defaults 128 and 0). As in Storm, this sets those
  // keys in the component's config, which wins over the topology's.
  Self& set_memory_load(double onheap_mb, double offheap_mb = 0) {
    c_->spec.resources.onheap_mb = onheap_mb;
    c_->spec.resources.offheap_mb = offheap_mb;
    c_->spec.config.set(std::string(keys::kTopologyComponentOnheapMb), onheap_mb,
                        "set_memory_load of " + c_->spec.id);
    c_->spec.config.set(std::string(keys::kTopologyComponentOffheapMb), offheap_mb,
                        "set_memory_load of " + c_->spec.id);
    return self();
  }
  // Per executor, 100 points = one core. A component that does not set it
  // gets the topology config's topology.component.cpu.pcore.percent
  // (default 10); this sets the key in the component's config.
  Self& set_cpu_load(double points) {
    c_->spec.resources.cpu_points = points;
    c_->spec.config.set(std::string(keys::kTopologyComponentCpuPcorePercent), points,
                        "set_cpu_load of " + c_->spec.id);
    return self();
  }
  // A generic resource per executor, e.g. add_resource("gpu.count", 1).
  Self& add_resource(std::string name, double amount) {
    c_->spec.resources.generic[std::move(name)] = amount;
    return self();
  }
  // A config entry for this component only (over the topology config).
  Self& add_configuration(std::string key, ConfigValue value) {
    c_->spec.config.set(std::move(key), std::move(value), "component " + c_->spec.id);
    return self();
  }

 protected:
  Self& self() { return static_cast<Self&>(*this); }
  Self& subscribe(std::string component, std::string stream, Grouping grouping) {
    c_->spec.inputs.push_back(
        InputSpec{std::move(component), std::move(stream), std::move(grouping)});
    return self();
  }

  detail::PendingComponent* c_;
};

class SpoutDeclarer : public ComponentDeclarer<SpoutDeclarer> {
 public:
  using ComponentDeclarer::ComponentDeclarer;
  // Trees of this spout's each task pending at once (Storm's
  // setMaxSpoutPending): topology.max.spout.pending for this spout only.
  SpoutDeclarer& set_max_spout_pending(int pending) {
    return add_configuration(std::string(keys::kTopologyMaxSpoutPending),
                             static_cast<std::int64_t>(pending));
  }
};

// How a bolt subscribes to streams; shared by BoltDeclarer and
// WindowedBoltDeclarer so that each chains to itself.
template <typename Self>
class BoltDeclarerBase : public ComponentDeclarer<Self> {
 public:
  using ComponentDeclarer<Self>::ComponentDeclarer;

  // Round robin over the bolt's tasks: an even spread.
  Self& shuffle_grouping(std::string component, std::string stream = "default") {
    return this->subscribe(std::move(component), std::move(stream), {GroupingType::kShuffle, {}});
  }
  // Same values of `fields` always go to the same task (stable hash).
  Self& fields_grouping(std::string component, Fields fields) {
    return this->fields_grouping(std::move(component), "default", std::move(fields));
  }
  Self& fields_grouping(std::string component, std::string stream, Fields fields) {
    return this->subscribe(std::move(component), std::move(stream),
                     {GroupingType::kFields, std::move(fields)});
  }
  // Every task gets a copy.
  Self& all_grouping(std::string component, std::string stream = "default") {
    return this->subscribe(std::move(component), std::move(stream), {GroupingType::kAll, {}});
  }
  // Everything to the bolt's lowest task.
  Self& global_grouping(std::string component, std::string stream = "default") {
    return this->subscribe(std::move(component), std::move(stream), {GroupingType::kGlobal, {}});
  }
  // The producer picks the task with emit_direct; the stream must be direct.
  Self& direct_grouping(std::string component, std::string stream = "default") {
    return this->subscribe(std::move(component), std::move(stream), {GroupingType::kDirect, {}});
  }
  // Shuffle over the tasks in the producer's worker when there are any.
  Self& local_or_shuffle_grouping(std::string component, std::string stream = "default") {
    return this->subscribe(std::move(component), std::move(stream),
                     {GroupingType::kLocalOrShuffle, {}});
  }
  // No preference: currently shuffle.
  Self& none_grouping(std::string component, std::string stream = "default") {
    return this->subscribe(std::move(component), std::move(stream), {GroupingType::kNone, {}});
  }
};

class BoltDeclarer : public BoltDeclarerBase<BoltDeclarer> {
 public:
  using BoltDeclarerBase::BoltDeclarerBase;
};

// A windowed bolt's settings (rstorm/windowed_bolt.hpp): each sets the
// component's Storm key, so add_configuration with the key does the same.
class WindowedBoltDeclarer : public BoltDeclarerBase<WindowedBoltDeclarer> {
 public:
  using BoltDeclarerBase::BoltDeclarerBase;

  // A sliding window: `length` and `slide` each a Count(n) or a Duration(ms).
  WindowedBoltDeclarer& with_window(WindowSize length, WindowSize slide) {
    set_size(length, keys::kWindowLengthCount, keys::kWindowLengthDurationMs);
    set_size(slide, keys::kWindowSlidingIntervalCount, keys::kWindowSlidingIntervalDurationMs);
    return *this;
  }
  // A tumbling window: the slide is the length.
  WindowedBoltDeclarer& with_tumbling_window(WindowSize length) {
    return with_window(length, length);
  }
  // Event time: each tuple's timestamp (ms, an int64) is this field.
  WindowedBoltDeclarer& with_timestamp_field(std::string field) {
    return set(keys::kTupleTimestampFieldName, std::move(field));
  }
  // How far behind the newest timestamp the watermark stays (ms, default 0).
  WindowedBoltDeclarer& with_lag(std::int64_t millis) {
    return set(keys::kTupleTimestampMaxLagMs, millis);
  }
  // How often the watermark is computed (ms, default 1000).
  WindowedBoltDeclarer& with_watermark_interval(std::int64_t millis) {
    return set(keys::kWatermarkEventIntervalMs, millis);
  }
  // An upstream task silent this long stops holding the watermark back (ms,
  // default 5000; 0: never).
  WindowedBoltDeclarer& with_idle_timeout(std::int64_t millis) {
    return set(keys::kWatermarkIdleTimeoutMs, millis);
  }
  // Late tuples are emitted on this stream (declared with the input's fields)
  // instead of only being acked.
  WindowedBoltDeclarer& with_late_tuple_stream(std::string stream) {
    return set(keys::kLateTupleStream, std::move(stream));
  }
  // Each task keeps at most this many buffered tuples in memory; older ones
  // spill to its state store (default 1,000,000).
  WindowedBoltDeclarer& with_max_tuples_in_memory(std::int64_t tuples) {
    return set(keys::kWindowMaxTuplesInMemory, tuples);
  }

 private:
  WindowedBoltDeclarer& set(std::string_view key, ConfigValue value) {
    c_->spec.config.set(std::string(key), std::move(value), "component " + c_->spec.id);
    return *this;
  }
  void set_size(WindowSize size, std::string_view count_key, std::string_view duration_key) {
    const bool count = size.unit == WindowSize::Unit::kCount;
    c_->spec.config.erase(count ? duration_key : count_key);
    set(count ? count_key : duration_key, size.value);
  }
};

class TopologyBuilder {
 public:
  TopologyBuilder();
  ~TopologyBuilder();
  TopologyBuilder(const TopologyBuilder&) = delete;
  TopologyBuilder& operator=(const TopologyBuilder&) = delete;

  // `factory` makes one instance per task. parallelism = number of executors.
  SpoutDeclarer set_spout(std::string id, SpoutFactory factory, int parallelism = 1);
  BoltDeclarer set_bolt(std::string id, BoltFactory factory, int parallelism = 1);
  BoltDeclarer set_bolt(std::string id, BasicBoltFactory factory, int parallelism = 1);
  // A windowed bolt; give its window with with_window or with_tumbling_window.
  WindowedBoltDeclarer set_bolt(std::string id, WindowedBoltFactory factory, int parallelism = 1);

  // Calls each factory once to learn the declared streams, then checks: ids
  // (empty, reserved, duplicate), at least one spout, parallelism and tasks >= 1,
  // resources >= 0, every input's component, stream and grouping fields.
  api::Result<Topology> build() const;

 private:
  detail::PendingComponent* add(std::string id, ComponentKind kind, int parallelism);

  std::vector<std::unique_ptr<detail::PendingComponent>> components_;
};

}  // namespace rstorm
