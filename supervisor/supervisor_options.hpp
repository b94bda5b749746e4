// SupervisorOptions: a supervisor's settings, read from the layered config
// (conf/defaults.yaml keys, Storm's names). Memory and CPU capacity come from
// the machine (/proc/meminfo, hardware_concurrency x 100) unless the config
// sets them explicitly (any layer above the built-in defaults).
// Plain value, thread-compatible.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "rstorm/config.hpp"

namespace rstorm::supervisor {

struct SupervisorOptions {
  std::string id;                          // supervisor.id; "" = generated and kept locally
  std::string host = "127.0.0.1";          // storm.local.hostname
  std::string rack = "default-rack";       // supervisor.rack
  double memory_mb = 4096;                 // supervisor.memory.capacity.mb
  double cpu = 400;                        // supervisor.cpu.capacity (100 = one core)
  std::vector<int> ports{6700, 6701, 6702, 6703};  // supervisor.slots.ports
  std::map<std::string, double> generic;   // supervisor.resources.map ["gpu.count=2", ...]
  std::filesystem::path local_dir = "rstorm-local";  // storm.local.dir
  std::string zookeeper_root = "/rstorm";  // storm.zookeeper.root
  std::chrono::seconds worker_timeout{30};        // supervisor.worker.timeout.secs
  std::chrono::seconds worker_start_timeout{120};  // supervisor.worker.start.timeout.secs
  std::chrono::seconds heartbeat_frequency{5};    // supervisor.heartbeat.frequency.secs
  std::chrono::seconds monitor_frequency{3};      // supervisor.monitor.frequency.secs
  std::chrono::seconds shutdown_wait{3};          // supervisor.worker.shutdown.sleep.secs
  int worker_heartbeat_ms = 1000;                 // worker.heartbeat.frequency.secs
  // Workers outliving this supervisor stop after this (nimbus moves their
  // executors then): nimbus.supervisor.timeout.secs.
  std::chrono::seconds orphan_timeout{60};
  // What this machine's config says to its workers: every worker.*,
  // storm.messaging.* and storm.metrics.* entry (transport buffers, metrics
  // host and port offset, ...). A worker's config is these with the topology's
  // own config over them, as Storm's workers read the supervisor's storm.yaml.
  Config worker_config;
  // The rstorm-worker executable. Default: next to the running executable.
  std::filesystem::path worker_binary;
  // Where this supervisor's log viewer listens (set by rstorm-supervisor once
  // it listens; -1: none). Registered so that the UI can link to worker logs.
  int logviewer_port = -1;
  // Whether it serves HTTPS (logviewer.https.*), so that the UI's links say so.
  bool logviewer_https = false;

  // kInvalidArgument naming the key and its origin on a wrong type or value.
  static Result<SupervisorOptions> from_config(const Config& config);
};

// Whether `key` is in `config` from anything but defaults.yaml (a config
// file, a -c override).
bool set_by_user(const Config& config, std::string_view key);
// Machine capacity: MemTotal of /proc/meminfo in MB (0 when unreadable) and
// hardware_concurrency() x 100 CPU points.
double machine_memory_mb();
double machine_cpu_points();
// The directory of the running executable (/proc/self/exe).
std::filesystem::path executable_dir();

}  // namespace rstorm::supervisor
