// WorkerSpec: everything one rstorm-worker process needs to run its slot,
// written by the supervisor as `<worker dir>/spec.json` and read by the worker
// (`rstorm-worker --spec <worker dir>/spec.json`). JSON (nlohmann-json) so that
// an operator can read it. The whole assignment of the topology is included
// (not only this slot's executors): the worker needs it to know which tasks are
// remote and how many ackers the topology has.
//
// Also the small files a worker shares with its supervisor in its directory:
// `status` (desired topology status, "ACTIVE" or "INACTIVE", written by the
// supervisor, polled by the worker), `heartbeat` (written by the worker every
// worker.heartbeat.frequency.secs, read by the supervisor) and `failure` (why
// the worker could not start or run, written as it exits 1). All are replaced
// atomically (write to a temporary file, then rename).
//
// Plain values and free functions: thread-compatible.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "rstorm/config.hpp"

namespace rstorm::worker_process {

// One executor of the assignment and where it runs.
struct SpecExecutor {
  std::string component;
  int task_start = 0;
  int task_end = 0;
  std::string node_id;  // supervisor id
  int port = 0;
  friend bool operator==(const SpecExecutor&, const SpecExecutor&) = default;
};

struct WorkerSpec {
  std::string topology_id;    // "wc-1"
  std::string topology_name;  // "wc"
  std::filesystem::path library;     // the cached, hash-checked topology library
  std::string supervisor_id;
  std::string host;                  // this worker's host (its supervisor's storm.local.hostname)
  int port = 0;                      // this worker's slot: it listens on host:port
  std::filesystem::path worker_dir;  // holds spec.json, status, heartbeat, worker.log
  std::int64_t assignment_version = 0;
  std::vector<SpecExecutor> executors;  // the whole assignment
  std::map<std::string, std::string> node_hosts;  // supervisor id -> host, every node of it
  Config config;                        // the topology's config (with origins)
  int heartbeat_interval_ms = 1000;     // worker.heartbeat.frequency.secs
  // A worker whose supervisor is gone (supervisor_file names no live
  // process) this long stops: by then nimbus has moved its executors to
  // other nodes (nimbus.supervisor.timeout.secs), and a copy left running
  // would run them twice. A supervisor restarted sooner adopts it. 0: never.
  std::int64_t orphan_timeout_ms = 60000;
  // The topology's secret (bytes; hex in spec.json): proves to the other
  // workers that this one belongs to the topology when
  // storm.messaging.netty.authentication is on. spec.json is written 0600.
  std::string secret;

  std::filesystem::path status_file() const { return worker_dir / "status"; }
  std::filesystem::path heartbeat_file() const { return worker_dir / "heartbeat"; }
  // The executors this worker runs (node_id == supervisor_id and port == port).
  std::vector<SpecExecutor> own_executors() const;
  std::filesystem::path spec_file() const { return worker_dir / "spec.json"; }
  // Written by a worker that cannot start or run, just before it exits 1:
  // why, in one line (read by the supervisor, reported to nimbus).
  std::filesystem::path failure_file() const { return worker_dir / "failure"; }
  // "<pid> <start ticks>" of the supervisor running this worker, written at
  // launch and when a restarted supervisor adopts it.
  std::filesystem::path supervisor_file() const { return worker_dir / "supervisor"; }
  // The host of node `node_id`: node_hosts, else this worker's own host when
  // it is this worker's node; empty when unknown.
  std::string host_of(const std::string& node_id) const;
};

std::string spec_to_json(const WorkerSpec& spec);
// kInvalidArgument naming the field that is missing or of the wrong type.
Result<WorkerSpec> spec_from_json(std::string_view json);
Result<WorkerSpec> read_spec_file(const std::filesystem::path& path);

// Writes `content` to `path` atomically (temporary file in the same
// directory, then rename), readable by its owner only. kIoError naming the path.
Status write_file_atomically(const std::filesystem::path& path, std::string_view content);
// The whole file; kNotFound when it does not exist, kIoError otherwise.
Result<std::string> read_whole_file(const std::filesystem::path& path);

// One recent error of a task run by the worker (task as nimbus numbers it).
struct HeartbeatError {
  std::string component;
  int task = 0;
  std::int64_t time_ms = 0;  // wall clock, ms since the epoch
  std::string message;
  friend bool operator==(const HeartbeatError&, const HeartbeatError&) = default;
};

// What the worker writes into its heartbeat file.
struct WorkerHeartbeatFile {
  std::int64_t time_ms = 0;  // wall clock, ms since the epoch
  std::int64_t pid = 0;
  std::string topology_id;
  int port = 0;
  bool active = false;  // spouts activated
  std::int64_t uptime_secs = 0;
  std::vector<SpecExecutor> executors;  // the ones it runs (node_id/port filled in)
  // Counters summed over this worker's executors, by component.
  std::map<std::string, std::map<std::string, std::uint64_t>> components;
  // The data plane (transport to other workers, backpressure, trees failed
  // because their tuples could not be delivered), by counter name.
  std::map<std::string, std::uint64_t> data_plane;
  // The last few errors of each executor run here, oldest first.
  std::vector<HeartbeatError> errors;
  // Set (stalled_ms > 0) while spouts here wait without progress for at least
  // topology.stall.timeout.secs: see worker::StallReport.
  std::int64_t stalled_ms = 0;
  std::uint64_t stall_pending = 0;
  std::vector<std::string> stalled_spouts;
  std::vector<std::string> queued;
  std::vector<std::string> full_queues;
  // Components run on their producer's threads here: component -> producer.
  std::map<std::string, std::string> fused;
};

std::string heartbeat_to_json(const WorkerHeartbeatFile& heartbeat);
Result<WorkerHeartbeatFile> heartbeat_from_json(std::string_view json);

// Desired status files hold exactly one of these words.
inline constexpr char kStatusActive[] = "ACTIVE";
inline constexpr char kStatusInactive[] = "INACTIVE";

// The worker's token (a compact-encoded thrift::WorkerToken, owner-only), kept
// fresh by the supervisor in secure mode: what the worker presents to nimbus
// (nimbus/worker_tokens.hpp). Absent without security.
inline constexpr char kWorkerTokenFile[] = "worker-token";

}  // namespace rstorm::worker_process
