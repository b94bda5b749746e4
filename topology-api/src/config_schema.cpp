// The schema table and the validator. Defaults live in conf/defaults.yaml, not
// here; tests/common/config_schema_test.cpp holds the two to the same keys.
#include "rstorm/config_schema.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

namespace rstorm {
namespace {

constexpr std::array<std::string_view, 4> kDaemonNamespaces = {"storm.", "nimbus.", "supervisor.",
                                                               "worker."};

// An unknown key this close to a known one is taken for a typo of it.
constexpr std::size_t kTypoDistance = 2;

// Seconds read as a number and used in milliseconds: less than 0.001 is 0.
constexpr double kMinSeconds = 0.001;

std::vector<ConfigKeySpec> make_schema() {
  using enum ConfigType;
  // One entry per key, not clang-format's one line per field.
  // clang-format off
  std::vector<ConfigKeySpec> s = {
      // ZooKeeper (coordination).
      {.name = "storm.zookeeper.servers", .type = kStringList,
       .description = "ZooKeeper hosts, each at storm.zookeeper.port"},
      {.name = "storm.zookeeper.port", .type = kInt, .min = 1, .max = 65535,
       .description = "ZooKeeper's client port"},
      {.name = "storm.zookeeper.root", .type = kString,
       .description = "the cluster's root node in ZooKeeper"},
      {.name = "storm.zookeeper.session.timeout", .type = kInt, .min = 1,
       .description = "ms; requested ZooKeeper session timeout (the server may clamp it)"},
      {.name = "storm.zookeeper.connection.timeout", .type = kInt, .min = 1,
       .description = "ms to wait for a ZooKeeper session when connecting"},
      {.name = "storm.zookeeper.retry.times", .type = kInt, .min = 0,
       .description = "attempts per ZooKeeper operation on connection loss"},
      {.name = "storm.zookeeper.retry.interval", .type = kInt, .min = 1,
       .description = "ms; first wait before reconnecting to ZooKeeper, doubling per attempt"},
      {.name = "storm.zookeeper.retry.intervalceiling.millis", .type = kInt, .min = 1,
       .description = "ms; longest wait between ZooKeeper reconnection attempts"},
      {.name = "storm.zookeeper.auth.scheme", .type = kString, .nullable = true,
       .description = "\"digest\": authenticate to ZooKeeper and create nodes with digest ACLs"},
      {.name = "storm.zookeeper.auth.payload", .type = kString, .nullable = true,
       .description = "\"user:password\" of the digest; keep it out of users' configs"},
      // Local state and metrics.
      {.name = "storm.local.dir", .type = kString,
       .description = "directory of a daemon's local state (relative: to its working directory)"},
      {.name = "storm.local.hostname", .type = kString,
       .description = "host a supervisor advertises for its workers"},
      {.name = "storm.metrics.host", .type = kString,
       .description = "address the /metrics endpoints listen on"},
      {.name = "storm.metrics.sd.dir", .type = kString, .nullable = true,
       .description = "Prometheus file SD directory (null: <storm.local.dir>/metrics-sd)"},
      {.name = "storm.metrics.tls.cert.path", .type = kString, .nullable = true,
       .description = "PEM certificate of the /metrics endpoints; with key.path they serve HTTPS"},
      {.name = "storm.metrics.tls.key.path", .type = kString, .nullable = true,
       .description = "unencrypted PEM key of storm.metrics.tls.cert.path"},
      {.name = "storm.metrics.tls.ca.path", .type = kString, .nullable = true,
       .description = "PEM CA bundle rstorm-ui checks /metrics certificates against "
                      "(null: the system's)"},
      {.name = "storm.metrics.auth.user", .type = kString, .nullable = true,
       .description = "basic authentication user of /metrics (no ':'); needs the password file"},
      {.name = "storm.metrics.auth.password.file", .type = kString, .nullable = true,
       .description = "file holding the /metrics password (surrounding whitespace dropped)"},
      {.name = "storm.blobstore.chunk.size.bytes", .type = kInt, .min = 1,
       .description = "chunk size of topology code uploads and downloads"},
      {.name = "storm.messaging.netty.min_wait_ms", .type = kInt, .min = 1,
       .description = "first back-off before a worker reconnects to a peer, doubling"},
      {.name = "storm.messaging.netty.authentication", .type = kBool,
       .description = "workers prove they hold the topology's secret before a tuple is read"},
      {.name = "storm.messaging.netty.tls.enable", .type = kBool,
       .description = "worker-to-worker connections use mutual TLS (supervisors' setting wins)"},
      {.name = "storm.messaging.netty.tls.cert.path", .type = kString, .nullable = true,
       .description = "PEM certificate a worker presents to its peers (naming its host)"},
      {.name = "storm.messaging.netty.tls.key.path", .type = kString, .nullable = true,
       .description = "PEM key of storm.messaging.netty.tls.cert.path"},
      {.name = "storm.messaging.netty.tls.ca.path", .type = kString, .nullable = true,
       .description = "PEM CA bundle that peer workers' certificates must chain to"},
      {.name = "storm.messaging.netty.max_wait_ms", .type = kInt, .min = 1,
       .description = "longest back-off between a worker's reconnection attempts"},
      // Nimbus.
      {.name = "nimbus.seeds", .type = kStringList,
       .description = "where clients and supervisors look for nimbus: \"host\" or \"host:port\""},
      {.name = "nimbus.thrift.port", .type = kInt, .min = 0, .max = 65535,
       .description = "nimbus's Thrift port (0: a free port), and the port of seeds without one"},
      {.name = "nimbus.thrift.host", .type = kString,
       .description = "bind and advertised address of nimbus's Thrift service"},
      {.name = "nimbus.thrift.max_buffer_size", .type = kInt, .min = 1,
       .description = "Storm's Thrift message limit; accepted, not read by rstorm"},
      {.name = "nimbus.task.timeout.secs", .type = kNumber, .min = kMinSeconds,
       .description = "a worker silent this long is dead and its executors are reassigned"},
      {.name = "nimbus.supervisor.timeout.secs", .type = kNumber, .min = kMinSeconds,
       .description = "a supervisor silent this long is dead"},
      {.name = "nimbus.monitor.freq.secs", .type = kNumber, .min = kMinSeconds,
       .description = "nimbus runs a scheduling round at least this often"},
      {.name = "nimbus.task.launch.secs", .type = kNumber, .min = kMinSeconds,
       .description = "grace for a newly assigned worker's first heartbeat"},
      {.name = "nimbus.metrics.port", .type = kInt, .min = -1, .max = 65535,
       .description = "port of nimbus's /metrics (-1: none, 0: a free port)"},
      // Security: mutual TLS on nimbus's Thrift service, and the authorizer.
      {.name = "nimbus.thrift.tls.port", .type = kInt, .min = 0, .max = 65535,
       .description = "nimbus's mutual-TLS Thrift port, served when the server's PEM files are set"},
      {.name = "nimbus.thrift.tls.server.only", .type = kBool,
       .description = "with TLS configured, serve no plaintext port"},
      {.name = "nimbus.thrift.tls.server.cert.path", .type = kString, .nullable = true,
       .description = "PEM certificate nimbus presents on its TLS port"},
      {.name = "nimbus.thrift.tls.server.key.path", .type = kString, .nullable = true,
       .description = "PEM key of nimbus.thrift.tls.server.cert.path"},
      {.name = "nimbus.thrift.tls.server.ca.path", .type = kString, .nullable = true,
       .description = "PEM CA bundle that client certificates must chain to"},
      {.name = "nimbus.thrift.client.use.tls", .type = kBool,
       .description = "clients (rstorm, supervisors, rstorm-ui) talk to nimbus over mutual TLS"},
      {.name = "nimbus.thrift.tls.client.cert.path", .type = kString, .nullable = true,
       .description = "PEM certificate a client presents to nimbus (its principal is the CN)"},
      {.name = "nimbus.thrift.tls.client.key.path", .type = kString, .nullable = true,
       .description = "PEM key of nimbus.thrift.tls.client.cert.path"},
      {.name = "nimbus.thrift.tls.client.ca.path", .type = kString, .nullable = true,
       .description = "PEM CA bundle nimbus's certificate must chain to"},
      {.name = "nimbus.admins.groups", .type = kStringList,
       .description = "secure mode: members of these groups are admins"},
      {.name = "nimbus.groups", .type = kStringList,
       .description = "secure mode: members of these groups may submit (with nimbus.users)"},
      {.name = "topology.groups", .type = kStringList,
       .description = "secure mode: members may kill, rebalance, describe this topology"},
      {.name = "topology.readonly.groups", .type = kStringList,
       .description = "secure mode: members may describe this topology"},
      {.name = "storm.group.mapping.service", .type = kString, .nullable = true,
       .description = "a user's groups: \"unix\" (the system's) or \"fixed\" (null: none)"},
      {.name = "storm.group.mapping.service.cache.duration.secs", .type = kInt, .min = 0,
       .description = "how long the unix group mapping keeps a user's groups"},
      {.name = "storm.group.mapping.fixed", .type = kStringList,
       .description = "the fixed group mapping: [\"alice: ops, dev\", ...]"},
      {.name = "storm.principal.tolocal.rules", .type = kStringList,
       .description = "\"regex => replacement\" rules mapping a certificate's principal to a user"},
      {.name = "nimbus.authorizer", .type = kString, .nullable = true,
       .description = "\"simple-acl\": check every nimbus call against the ACL keys; null: allow all"},
      {.name = "nimbus.admins", .type = kStringList,
       .description = "users who may do everything"},
      {.name = "nimbus.users", .type = kStringList,
       .description = "users who may submit and list (empty: every authenticated user)"},
      {.name = "nimbus.supervisor.users", .type = kStringList,
       .description = "users supervisors run as: heartbeats, reading topologies and code"},
      {.name = "nimbus.impersonation.acl", .type = kStringList,
       .description = "who may act for whom: [\"ui: users=*; hosts=127.0.0.1\"] (groups=g too)"},
      {.name = "storm.worker.token.life.time.hours", .type = kNumber, .min = 0.001,
       .description = "life of a worker token (renewed when less than half is left)"},
      {.name = "nimbus.daemon.users", .type = kStringList,
       .description = "other rstorm daemons (standby nimbus, rstorm-ui): list, describe, download"},
      // Supervisor.
      {.name = "supervisor.id", .type = kString, .nullable = true,
       .description = "the supervisor's id (null: generated once, kept in storm.local.dir)"},
      {.name = "supervisor.slots.ports", .type = kIntList, .min = 1, .max = 65535,
       .description = "one worker slot per port"},
      {.name = "supervisor.memory.capacity.mb", .type = kNumber, .min = 0,
       .description = "memory offered to workers (unless set: the machine's)"},
      {.name = "supervisor.cpu.capacity", .type = kNumber, .min = 0,
       .description = "CPU points offered, 100 per core (unless set: the machine's)"},
      {.name = "supervisor.rack", .type = kString,
       .description = "the rack the scheduler places this node in"},
      {.name = "supervisor.worker.timeout.secs", .type = kInt, .min = 1,
       .description = "a worker silent this long is restarted"},
      {.name = "supervisor.worker.start.timeout.secs", .type = kInt, .min = 1,
       .description = "a new worker gets this long for its first heartbeat"},
      {.name = "supervisor.heartbeat.frequency.secs", .type = kInt, .min = 1,
       .description = "seconds between the supervisor's heartbeats"},
      {.name = "supervisor.monitor.frequency.secs", .type = kInt, .min = 1,
       .description = "seconds between checks of the supervisor's workers"},
      {.name = "supervisor.worker.shutdown.sleep.secs", .type = kInt, .min = 0,
       .description = "wait between SIGTERM and SIGKILL when stopping a worker"},
      {.name = "supervisor.metrics.port", .type = kInt, .min = -1, .max = 65535,
       .description = "port of the supervisor's /metrics (-1: none, 0: a free port)"},
      {.name = "supervisor.resources.map", .type = kStringList, .nullable = true,
       .description = "generic resources offered, as name=amount (e.g. gpu.count=2)"},
      // Log viewer (served by each supervisor) and UI (rstorm-ui).
      {.name = "logviewer.port", .type = kInt, .min = -1, .max = 65535,
       .description = "port of the supervisor's worker log viewer (-1: none, 0: a free port)"},
      {.name = "logviewer.host", .type = kString,
       .description = "bind address of the log viewer"},
      {.name = "ui.port", .type = kInt, .min = 0, .max = 65535,
       .description = "port of rstorm-ui's pages and REST API (0: a free port)"},
      {.name = "ui.host", .type = kString, .description = "bind address of rstorm-ui"},
      {.name = "ui.https.cert.path", .type = kString, .nullable = true,
       .description = "PEM certificate: rstorm-ui serve HTTPS only"},
      {.name = "ui.https.key.path", .type = kString, .nullable = true,
       .description = "PEM key of ui.https.cert.path"},
      {.name = "ui.https.ca.path", .type = kString, .nullable = true,
       .description = "PEM CA bundle client certificates must chain to"},
      {.name = "ui.https.need.client.auth", .type = kBool,
       .description = "rstorm-ui serve only clients with a certificate of ui.https.ca.path"},
      {.name = "ui.impersonate.users", .type = kBool,
       .description = "with client certificates, rstorm-ui calls nimbus for the signed-in user"},
      {.name = "logviewer.https.cert.path", .type = kString, .nullable = true,
       .description = "PEM certificate: the log viewers serve HTTPS only"},
      {.name = "logviewer.https.key.path", .type = kString, .nullable = true,
       .description = "PEM key of logviewer.https.cert.path"},
      {.name = "logviewer.https.ca.path", .type = kString, .nullable = true,
       .description = "PEM CA bundle client certificates must chain to"},
      {.name = "logviewer.https.need.client.auth", .type = kBool,
       .description = "the log viewers serve only clients with a certificate of logviewer.https.ca.path"},
      {.name = "ui.sample.interval.secs", .type = kInt, .min = 1,
       .description = "seconds between rstorm-ui's samples of the workers' /metrics"},
      {.name = "ui.origins", .type = kStringList,
       .description = "other origins (scheme://host:port) allowed to POST to rstorm-ui"},
      // Worker.
      {.name = "worker.heartbeat.frequency.secs", .type = kNumber, .min = kMinSeconds,
       .description = "seconds between a worker's heartbeats to its supervisor"},
      {.name = "worker.metrics.port.offset", .type = kInt, .min = 1, .max = 65535,
       .description = "a worker's /metrics port is its slot port plus this"},
      {.name = "worker.transport.max.frame.bytes", .type = kInt, .min = 1,
       .description = "a larger inbound frame closes that connection"},
      {.name = "worker.transport.buffer.bytes", .type = kInt, .min = 1,
       .description = "bytes buffered per peer and lane (data, acks) before senders wait"},
      // Topology.
      {.name = "topology.users", .type = kStringList,
       .description = "users who may kill, rebalance, describe and download the topology"},
      {.name = "topology.readonly.users", .type = kStringList,
       .description = "users who may describe the topology"},
      {.name = "topology.name", .type = kString, .nullable = true,
       .description = "the topology's name (set by rstorm submit --name)"},
      {.name = "topology.workers", .type = kInt, .min = 1,
       .description = "worker processes the topology runs in"},
      {.name = "topology.acker.executors", .type = kInt, .min = 0, .nullable = true,
       .description = "acker executors (0: acking off; null: one per worker)"},
      {.name = "topology.acker.resources.onheap.memory.mb", .type = kNumber, .min = 0,
       .description = "memory the scheduler reserves per acker executor"},
      {.name = "topology.acker.cpu.pcore.percent", .type = kNumber, .min = 0,
       .description = "CPU points the scheduler reserves per acker executor"},
      {.name = "topology.message.timeout.secs", .type = kInt, .min = 1,
       .description = "a tuple tree not completed this long fails and is replayed"},
      {.name = "topology.max.spout.pending", .type = kInt, .min = 1, .nullable = true,
       .description = "trees in flight per spout task (null: adaptive)"},
      {.name = "topology.tick.tuple.freq.secs", .type = kInt, .min = 1, .nullable = true,
       .description = "seconds between tick tuples to each bolt (null: none)"},
      {.name = "topology.stall.timeout.secs", .type = kInt, .min = 1,
       .description = "trees pending and none completed this long: \"no progress\""},
      {.name = "topology.debug", .type = kBool,
       .description = "Storm's debug logging; accepted, not read by rstorm"},
      {.name = "topology.executor.receive.buffer.size", .type = kInt, .min = 1,
       .description = "tuples an executor's input queue holds"},
      {.name = "topology.transfer.batch.size", .type = kInt, .min = 1, .max = 65536,
       .description = "tuples per batch between executors"},
      {.name = "topology.batch.flush.interval.millis", .type = kInt, .min = 1,
       .description = "a partial batch is sent after this long"},
      {.name = "topology.executor.wait.spin.micros", .type = kInt, .min = 0, .max = 1000000,
       .description = "an executor with no work spins this long, then parks until woken"},
      {.name = "topology.spout.wait.park.micros", .type = kInt, .min = 1, .max = 1000000,
       .description = "a spout whose next_tuple emitted nothing waits this long"},
      {.name = "topology.fuse.executors", .type = kBool,
       .description = "run a bolt on its producer's thread where it can"},
      // Windowed bolts (per component; with_window and friends set them).
      {.name = "topology.bolts.window.length.count", .type = kInt, .min = 1, .nullable = true,
       .description = "a windowed bolt's window length in tuples"},
      {.name = "topology.bolts.window.length.duration.ms", .type = kInt, .min = 1, .nullable = true,
       .description = "a windowed bolt's window length in ms"},
      {.name = "topology.bolts.window.sliding.interval.count", .type = kInt, .min = 1,
       .nullable = true, .description = "a windowed bolt's slide in tuples (null: the length)"},
      {.name = "topology.bolts.window.sliding.interval.duration.ms", .type = kInt, .min = 1,
       .nullable = true, .description = "a windowed bolt's slide in ms (null: the length)"},
      {.name = "topology.bolts.tuple.timestamp.field.name", .type = kString, .nullable = true,
       .description = "event time: the int64 field holding each tuple's timestamp in ms"},
      {.name = "topology.bolts.tuple.timestamp.max.lag.ms", .type = kInt, .min = 0,
       .description = "event time: how far the watermark stays behind the newest timestamp"},
      {.name = "topology.bolts.watermark.event.interval.ms", .type = kInt, .min = 1,
       .description = "event time: ms between watermark computations"},
      {.name = "topology.bolts.watermark.idle.timeout.ms", .type = kInt, .min = 0,
       .description = "event time: an input silent this long stops holding the watermark (0: never)"},
      {.name = "topology.bolts.window.max.tuples.in.memory", .type = kInt, .min = 1,
       .description = "a windowed task keeps this many tuples in memory, spills older ones"},
      {.name = "topology.bolts.late.tuple.stream", .type = kString, .nullable = true,
       .description = "event time: the stream late tuples are emitted on (null: acked, dropped)"},
      {.name = "topology.state.provider", .type = kString, .nullable = true,
       .one_of = {"memory", "rocksdb"},
       .description = "where tasks keep keyed state: memory (lost when the worker ends) or "
                      "rocksdb (a database per task under the worker's folder); null: memory in "
                      "local mode, rocksdb on a cluster"},
      {.name = "topology.state.rocksdb.dir", .type = kString, .nullable = true,
       .description = "folder of the RocksDB state stores, <dir>/<topology id>/task-<id> (null: "
                      "<worker dir>/state; local mode: <storm.local.dir>/state/<topology name>)"},
      {.name = "topology.state.checkpointing", .type = kBool,
       .description = "take checkpoints of the tasks' keyed state and restore them on restart"},
      {.name = "topology.state.checkpoint.interval.ms", .type = kInt, .min = 100,
       .description = "ms between the starts of two checkpoints"},
      {.name = "topology.state.checkpoint.store", .type = kString, .nullable = true,
       .one_of = {"nimbus", "folder", "memory"},
       .description = "where checkpoints are kept: nimbus (a cluster's blob store and "
                      "ZooKeeper), folder (a shared folder) or memory (one process); null: "
                      "memory in local mode, nimbus on a cluster"},
      {.name = "topology.state.checkpoint.dir", .type = kString, .nullable = true,
       .description = "folder of the folder checkpoint store, <dir>/<topology>/ (null: "
                      "<storm.local.dir>/checkpoints)"},
      {.name = "topology.state.checkpoint.retained", .type = kInt, .min = 1,
       .description = "complete checkpoints kept; older ones are removed"},
      {.name = "topology.component.resources.onheap.memory.mb", .type = kNumber, .min = 0,
       .description = "Storm's per-executor memory default; not read (the builder's is 128)"},
      {.name = "topology.component.resources.offheap.memory.mb", .type = kNumber, .min = 0,
       .description = "Storm's per-executor off-heap default; not read (the builder's is 0)"},
      {.name = "topology.component.cpu.pcore.percent", .type = kNumber, .min = 0,
       .description = "Storm's per-executor CPU default; not read (the builder's is 10)"},
      {.name = "topology.worker.max.heap.size.mb", .type = kNumber, .min = 1,
       .description = "memory the scheduler places in one worker, at most"},
      {.name = "topology.min.replication.count", .type = kInt, .min = 1,
       .description = "nimbuses that must hold a topology's code before it is scheduled"},
      {.name = "topology.max.replication.wait.time.sec", .type = kNumber,
       .description = "longest wait for topology.min.replication.count (negative: forever)"},
      {.name = "topology.priority", .type = kInt, .min = 0,
       .description = "scheduling order among topologies; lower first"},
      {.name = "topology.scheduler.improve.max.evaluations", .type = kInt, .min = 0,
       .description = "moves the placement search after R-Storm's greedy tries at most (0: none)"},
      {.name = "topology.scheduler.exact.max.executors", .type = kInt, .min = 0, .max = 64,
       .description = "solve placements of at most this many executors exactly (0: off)"},
      {.name = "topology.scheduler.strategy", .type = kString,
       .one_of = {"resource-aware", "round-robin"},
       .description = "how nimbus places the topology's executors"},
  };
  // clang-format on
  std::sort(s.begin(), s.end(),
            [](const ConfigKeySpec& a, const ConfigKeySpec& b) { return a.name < b.name; });
  return s;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

namespace {

// The known key closest to `key` within kTypoDistance, or "".
std::string_view near_miss(std::string_view key) {
  std::string_view best;
  std::size_t best_distance = kTypoDistance + 1;
  for (const auto& spec : config_schema()) {
    // No closer than their difference in length: skip the table (a 16 MB key
    // would need one of 5 GB, and keys of a submitted config are anyone's).
    const std::size_t shorter = std::min(key.size(), spec.name.size());
    if (std::max(key.size(), spec.name.size()) - shorter > kTypoDistance) continue;
    const std::size_t d = edit_distance(key, spec.name);
    if (d < best_distance) {
      best_distance = d;
      best = spec.name;
    }
  }
  return best;
}

std::string render_bound(double v, ConfigType type) {
  if (type == ConfigType::kInt || type == ConfigType::kIntList) {
    return std::to_string(static_cast<std::int64_t>(v));
  }
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, end);
}

std::string describe_range(const ConfigKeySpec& spec) {
  if (spec.min && spec.max) {
    return " between " + render_bound(*spec.min, spec.type) + " and " +
           render_bound(*spec.max, spec.type);
  }
  if (spec.min) return " >= " + render_bound(*spec.min, spec.type);
  if (spec.max) return " <= " + render_bound(*spec.max, spec.type);
  return "";
}

bool has_type(const ConfigKeySpec& spec, const ConfigValue& v) {
  auto all = [&](bool (ConfigValue::*is)() const) {
    return v.is_list() && std::all_of(v.as_list().begin(), v.as_list().end(),
                                      [&](const ConfigValue& e) { return (e.*is)(); });
  };
  switch (spec.type) {
    case ConfigType::kBool:
      return v.is_bool();
    case ConfigType::kInt:
      return v.is_int();
    case ConfigType::kNumber:
      return v.is_int() || v.is_double();
    case ConfigType::kString:
      return v.is_string();
    case ConfigType::kStringList:
      return all(&ConfigValue::is_string);
    case ConfigType::kIntList:
      return all(&ConfigValue::is_int);
  }
  return false;
}

bool in_range(const ConfigKeySpec& spec, double v) {
  if (!std::isfinite(v)) return false;
  return (!spec.min || v >= *spec.min) && (!spec.max || v <= *spec.max);
}

double as_number(const ConfigValue& v) {
  return v.is_int() ? static_cast<double>(v.as_int()) : v.as_double();
}

// True when a value of the right type is also in range (or one of the choices).
bool acceptable(const ConfigKeySpec& spec, const ConfigValue& v) {
  switch (spec.type) {
    case ConfigType::kInt:
    case ConfigType::kNumber:
      return in_range(spec, as_number(v));
    case ConfigType::kIntList:
      return std::all_of(v.as_list().begin(), v.as_list().end(),
                         [&](const ConfigValue& e) { return in_range(spec, as_number(e)); });
    case ConfigType::kString:
      return spec.one_of.empty() ||
             std::find(spec.one_of.begin(), spec.one_of.end(), v.as_string()) != spec.one_of.end();
    default:
      return true;
  }
}

std::string with_article(std::string_view type) {
  if (type == "null") return "null";
  return (type == "integer" ? "an " : "a ") + std::string(type);
}

// "a string", "a list with a string at index 1", "null": what was found.
std::string what_it_is(const ConfigKeySpec& spec, const ConfigValue& v) {
  const bool list_wanted =
      spec.type == ConfigType::kStringList || spec.type == ConfigType::kIntList;
  if (list_wanted && v.is_list()) {
    const auto& items = v.as_list();
    for (std::size_t i = 0; i < items.size(); ++i) {
      const bool ok = spec.type == ConfigType::kIntList ? items[i].is_int() : items[i].is_string();
      if (!ok) {
        return "a list with " + with_article(items[i].type_name()) + " at index " +
               std::to_string(i);
      }
    }
  }
  return with_article(v.type_name());
}

}  // namespace

const std::vector<ConfigKeySpec>& config_schema() {
  static const std::vector<ConfigKeySpec> schema = make_schema();
  return schema;
}

const ConfigKeySpec* find_config_key(std::string_view key) {
  const auto& schema = config_schema();
  auto it = std::lower_bound(schema.begin(), schema.end(), key,
                             [](const ConfigKeySpec& s, std::string_view k) { return s.name < k; });
  return it != schema.end() && it->name == key ? &*it : nullptr;
}

std::string describe_expected(const ConfigKeySpec& spec) {
  std::string out;
  switch (spec.type) {
    case ConfigType::kBool:
      out = "true or false";
      break;
    case ConfigType::kInt:
      out = "an integer" + describe_range(spec);
      break;
    case ConfigType::kNumber:
      out = "a number" + describe_range(spec);
      break;
    case ConfigType::kStringList:
      out = "a list of strings";
      break;
    case ConfigType::kIntList:
      out = "a list of integers" + describe_range(spec);
      break;
    case ConfigType::kString:
      if (spec.one_of.empty()) {
        out = "a string";
      } else {
        out = "one of ";
        for (std::size_t i = 0; i < spec.one_of.size(); ++i) {
          out += (i ? ", \"" : "\"") + std::string(spec.one_of[i]) + "\"";
        }
      }
      break;
  }
  return spec.nullable ? out + " or null" : out;
}

bool is_daemon_key(std::string_view key) {
  return std::any_of(kDaemonNamespaces.begin(), kDaemonNamespaces.end(),
                     [&](std::string_view ns) { return key.starts_with(ns); });
}

api::Status validate_config(const Config& config) {
  std::vector<std::string> problems;
  for (const auto& [key, entry] : config.entries()) {
    const std::string head = key + " (" + entry.origin + ")";
    const ConfigKeySpec* spec = find_config_key(key);
    if (spec == nullptr) {
      if (std::string_view guess = near_miss(key); !guess.empty()) {
        problems.push_back(head + " is not a config key rstorm reads; did you mean '" +
                           std::string(guess) + "'?");
      } else if (is_daemon_key(key)) {
        problems.push_back(head +
                           " is not a config key rstorm reads; under storm., nimbus., "
                           "supervisor. and worker. only known keys are allowed (see "
                           "conf/defaults.yaml)");
      }
      continue;
    }
    const ConfigValue& v = entry.value;
    const std::string found = key + ": " + v.to_string() + " (" + entry.origin + ")";
    if (v.is_null() ? !spec->nullable : !has_type(*spec, v)) {
      problems.push_back(found + " is " + what_it_is(*spec, v) + ": expected " +
                         describe_expected(*spec));
    } else if (!v.is_null() && !acceptable(*spec, v)) {
      problems.push_back(
          found + (spec->type == ConfigType::kString ? " is not allowed" : " is out of range") +
          ": expected " + describe_expected(*spec));
    }
  }
  return problems.empty() ? api::Status::ok() : api::Status::errors(std::move(problems));
}

}  // namespace rstorm
