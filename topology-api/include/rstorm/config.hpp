// Config: string keys to typed values, with Apache Storm's key names. Each entry
// remembers where it came from (a file, the command line, the topology) so that
// a wrong type names the key and its origin. Thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace rstorm {

// Thrown by Config's typed getters; what() names the key, its origin, the type
// found and the type expected.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One config value: null, bool, int64, double, string or a list of these.
class ConfigValue {
 public:
  using List = std::vector<ConfigValue>;

  ConfigValue() = default;
  ConfigValue(std::nullptr_t) {}
  ConfigValue(bool v) : v_(v) {}
  template <typename I>
    requires(std::is_integral_v<I> && !std::is_same_v<I, bool>)
  ConfigValue(I v) : v_(static_cast<std::int64_t>(v)) {}
  ConfigValue(double v) : v_(v) {}
  ConfigValue(std::string v) : v_(std::move(v)) {}
  ConfigValue(const char* v) : v_(std::string(v)) {}
  ConfigValue(List v) : v_(std::move(v)) {}

  bool is_null() const { return v_.index() == 0; }
  bool is_bool() const { return v_.index() == 1; }
  bool is_int() const { return v_.index() == 2; }
  bool is_double() const { return v_.index() == 3; }
  bool is_string() const { return v_.index() == 4; }
  bool is_list() const { return v_.index() == 5; }

  // REQUIRES: the matching is_*() holds.
  bool as_bool() const { return std::get<bool>(v_); }
  std::int64_t as_int() const { return std::get<std::int64_t>(v_); }
  double as_double() const { return std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const List& as_list() const { return std::get<List>(v_); }

  // "null", "bool", "integer", "number", "string" or "list".
  std::string_view type_name() const;
  // Rendering as YAML would write it: 4, true, "text", [a, b].
  std::string to_string() const;

  friend bool operator==(const ConfigValue&, const ConfigValue&) = default;

 private:
  std::variant<std::monostate, bool, std::int64_t, double, std::string, List> v_;
};

class Config {
 public:
  struct Entry {
    ConfigValue value;
    std::string origin;  // "conf/rstorm.yaml", "command line", "topology", ...
  };

  void set(std::string key, ConfigValue value, std::string origin = "code");
  bool contains(std::string_view key) const;
  // The entry, or nullptr when the key is absent.
  const Entry* find(std::string_view key) const;
  void erase(std::string_view key);

  // Typed getters. Absent key: the fallback (or ConfigError for the overloads
  // without one). Wrong type: ConfigError naming key, origin, found and wanted.
  // An integer is accepted where a double is wanted.
  bool get_bool(std::string_view key) const;
  bool get_bool(std::string_view key, bool fallback) const;
  std::int64_t get_int(std::string_view key) const;
  std::int64_t get_int(std::string_view key, std::int64_t fallback) const;
  double get_double(std::string_view key) const;
  double get_double(std::string_view key, double fallback) const;
  std::string get_string(std::string_view key) const;
  std::string get_string(std::string_view key, std::string_view fallback) const;
  std::vector<std::string> get_string_list(std::string_view key) const;
  std::vector<std::int64_t> get_int_list(std::string_view key) const;

  // Copies every entry of `other` over this one (later layers win).
  void merge(const Config& other);

  const std::map<std::string, Entry, std::less<>>& entries() const { return entries_; }

 private:
  const Entry& require(std::string_view key) const;

  std::map<std::string, Entry, std::less<>> entries_;
};

// Parses "key=value" as given to `-c` on the command line: the value is read as
// YAML would read a scalar or a flow list (4 -> integer, true -> bool,
// 0.5 -> double, [a, b] -> list, anything else -> string).
// Throws ConfigError naming the argument when there is no '='.
std::pair<std::string, ConfigValue> parse_config_override(std::string_view arg);

// Storm's key names. Meanings and defaults as in Apache Storm (conf/defaults.yaml).
namespace keys {
inline constexpr std::string_view kZookeeperServers = "storm.zookeeper.servers";
inline constexpr std::string_view kZookeeperPort = "storm.zookeeper.port";
inline constexpr std::string_view kZookeeperRoot = "storm.zookeeper.root";
inline constexpr std::string_view kZookeeperSessionTimeout = "storm.zookeeper.session.timeout";
inline constexpr std::string_view kLocalDir = "storm.local.dir";
inline constexpr std::string_view kNimbusSeeds = "nimbus.seeds";
inline constexpr std::string_view kNimbusThriftPort = "nimbus.thrift.port";
inline constexpr std::string_view kNimbusTaskTimeoutSecs = "nimbus.task.timeout.secs";
inline constexpr std::string_view kNimbusSupervisorTimeoutSecs = "nimbus.supervisor.timeout.secs";
inline constexpr std::string_view kNimbusMonitorFreqSecs = "nimbus.monitor.freq.secs";
inline constexpr std::string_view kSupervisorSlotsPorts = "supervisor.slots.ports";
inline constexpr std::string_view kSupervisorMemoryCapacityMb = "supervisor.memory.capacity.mb";
inline constexpr std::string_view kSupervisorCpuCapacity = "supervisor.cpu.capacity";
inline constexpr std::string_view kSupervisorRack = "supervisor.rack";
inline constexpr std::string_view kSupervisorWorkerTimeoutSecs = "supervisor.worker.timeout.secs";
inline constexpr std::string_view kTopologyWorkers = "topology.workers";
inline constexpr std::string_view kTopologyAckerExecutors = "topology.acker.executors";
inline constexpr std::string_view kTopologyMessageTimeoutSecs = "topology.message.timeout.secs";
inline constexpr std::string_view kTopologyMaxSpoutPending = "topology.max.spout.pending";
inline constexpr std::string_view kTopologyTickTupleFreqSecs = "topology.tick.tuple.freq.secs";
// A spout with trees pending (or its output held back) and nothing completed
// for this long makes its topology "stalled" (describe, list, metrics).
inline constexpr std::string_view kTopologyStallTimeoutSecs = "topology.stall.timeout.secs";
inline constexpr std::string_view kTopologyDebug = "topology.debug";
inline constexpr std::string_view kTopologyExecutorReceiveBufferSize =
    "topology.executor.receive.buffer.size";
inline constexpr std::string_view kTopologyTransferBatchSize = "topology.transfer.batch.size";
inline constexpr std::string_view kTopologyBatchFlushIntervalMillis =
    "topology.batch.flush.interval.millis";
// An executor with nothing to do spins this long before it parks until a
// producer wakes it; a spout whose next_tuple emitted nothing parks this long
// before calling it again (a completion wakes it sooner).
inline constexpr std::string_view kTopologyExecutorWaitSpinMicros =
    "topology.executor.wait.spin.micros";
inline constexpr std::string_view kTopologySpoutWaitParkMicros = "topology.spout.wait.park.micros";
// Run a bolt on its producer's thread where it can (one input, by
// local-or-shuffle, equal parallelism, all in one worker, no ticks).
inline constexpr std::string_view kTopologyFuseExecutors = "topology.fuse.executors";
// Where tasks keep keyed state (rstorm/state.hpp): "memory" or "rocksdb";
// null: memory in local mode, rocksdb in a cluster's workers.
inline constexpr std::string_view kTopologyStateProvider = "topology.state.provider";
// The RocksDB stores' folder, `<dir>/<topology id>/task-<id>`; null: the
// worker's folder (`<worker dir>/state/task-<id>`).
inline constexpr std::string_view kTopologyStateRocksdbDir = "topology.state.rocksdb.dir";
// Checkpoints of the tasks' keyed state (aligned barriers; worker/checkpoint.hpp).
inline constexpr std::string_view kTopologyStateCheckpointing = "topology.state.checkpointing";
inline constexpr std::string_view kTopologyStateCheckpointIntervalMs =
    "topology.state.checkpoint.interval.ms";
inline constexpr std::string_view kTopologyStateCheckpointStore = "topology.state.checkpoint.store";
inline constexpr std::string_view kTopologyStateCheckpointDir = "topology.state.checkpoint.dir";
inline constexpr std::string_view kTopologyStateCheckpointRetained =
    "topology.state.checkpoint.retained";
inline constexpr std::string_view kTopologyComponentOnheapMb =
    "topology.component.resources.onheap.memory.mb";
inline constexpr std::string_view kTopologyComponentOffheapMb =
    "topology.component.resources.offheap.memory.mb";
inline constexpr std::string_view kTopologyComponentCpuPcorePercent =
    "topology.component.cpu.pcore.percent";
inline constexpr std::string_view kTopologyWorkerMaxHeapSizeMb = "topology.worker.max.heap.size.mb";
inline constexpr std::string_view kTopologyPriority = "topology.priority";
inline constexpr std::string_view kTopologySchedulerStrategy = "topology.scheduler.strategy";
inline constexpr std::string_view kTopologyName = "topology.name";
// Windowed bolts (rstorm/windowed_bolt.hpp), per component.
inline constexpr std::string_view kWindowLengthCount = "topology.bolts.window.length.count";
inline constexpr std::string_view kWindowLengthDurationMs =
    "topology.bolts.window.length.duration.ms";
inline constexpr std::string_view kWindowSlidingIntervalCount =
    "topology.bolts.window.sliding.interval.count";
inline constexpr std::string_view kWindowSlidingIntervalDurationMs =
    "topology.bolts.window.sliding.interval.duration.ms";
inline constexpr std::string_view kTupleTimestampFieldName =
    "topology.bolts.tuple.timestamp.field.name";
inline constexpr std::string_view kTupleTimestampMaxLagMs =
    "topology.bolts.tuple.timestamp.max.lag.ms";
inline constexpr std::string_view kWatermarkEventIntervalMs =
    "topology.bolts.watermark.event.interval.ms";
// rstorm's own: a windowed bolt task keeps at most this many tuples in
// memory and spills older ones to its state store (RocksDB on a cluster).
inline constexpr std::string_view kWindowMaxTuplesInMemory =
    "topology.bolts.window.max.tuples.in.memory";
// rstorm's own: an upstream task silent this long no longer holds the
// watermark back (Flink's idleness).
inline constexpr std::string_view kWatermarkIdleTimeoutMs =
    "topology.bolts.watermark.idle.timeout.ms";
inline constexpr std::string_view kLateTupleStream = "topology.bolts.late.tuple.stream";
}  // namespace keys

}  // namespace rstorm
