// LocalState: what a supervisor must remember across its own restarts, in a
// KeyValueStore (RocksDB under `<storm.local.dir>/state` in the daemon):
//   "supervisor-id"      -> the generated id, when supervisor.id is not set
//   "worker/<port>"      -> WorkerRecord (JSON) of the worker it started there
// Thread-safe (the store is).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/key_value_store.hpp"
#include "supervisor/process_control.hpp"

namespace rstorm::supervisor {

struct WorkerRecord {
  std::string topology_id;
  int port = 0;
  ProcessId process;
  std::int64_t assignment_version = 0;
  std::int64_t launch_time_ms = 0;
  friend bool operator==(const WorkerRecord& a, const WorkerRecord& b) {
    return a.topology_id == b.topology_id && a.port == b.port && a.process.pid == b.process.pid &&
           a.process.start_ticks == b.process.start_ticks &&
           a.assignment_version == b.assignment_version && a.launch_time_ms == b.launch_time_ms;
  }
};

class LocalState {
 public:
  // REQUIRES: `store` outlives this.
  explicit LocalState(KeyValueStore& store) : store_(store) {}

  // The id kept from an earlier run, or a new one ("supervisor-<random hex>"),
  // which is then kept.
  Result<std::string> supervisor_id();

  Status put_worker(const WorkerRecord& record);
  Status remove_worker(int port);
  Result<std::vector<WorkerRecord>> workers();

 private:
  KeyValueStore& store_;
};

}  // namespace rstorm::supervisor
