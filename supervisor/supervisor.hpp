// Supervisor: the per-machine daemon's logic. Registers this node as the
// ephemeral `<root>/supervisors/<id>` (SupervisorInfo), watches
// `<root>/assignments` and the records of the topologies it runs, and keeps
// one rstorm-worker process per slot that an assignment gives it: starts the
// missing ones (WorkerLauncher), restarts one that exited or whose heartbeat
// file is older than supervisor.worker.timeout.secs, stops the ones no longer
// assigned, relays the topology's ACTIVE/INACTIVE status to its workers, and
// sends nimbus a SupervisorHeartbeat every supervisor.heartbeat.frequency.secs.
// Which workers it started (pid + start time, topology, port, assignment
// version) is kept in LocalState, so that after its own restart it adopts the
// workers still running and still assigned, and kills the others.
//
// A slot port that another process listens on (a worker could not bind it)
// is left out of the slots it offers, with a warning, and offered again once
// it is free: nimbus then places no worker there, and moves one placed there
// before elsewhere.
//
// Thread contract: thread-safe. start() and stop() from the owning thread;
// the accessors from any thread. One control thread (owned) does all the
// work; coordination callbacks only mark it dirty and wake it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/callback_lifeline.hpp"
#include "common/cluster_paths.hpp"
#include "common/coordination_store.hpp"
#include "common/key_value_store.hpp"
#include "common/logger.hpp"
#include "rstorm_thrift/rstorm_types.h"
#include "supervisor/local_state.hpp"
#include "supervisor/nimbus_link.hpp"
#include "supervisor/supervisor_options.hpp"
#include "supervisor/worker_launcher.hpp"

namespace rstorm::supervisor {

// What the supervisor knows about one of its workers (a snapshot).
struct WorkerView {
  std::string topology_id;
  int port = 0;
  pid_t pid = -1;
  std::int64_t assignment_version = 0;
  int launches = 0;  // processes started for this slot and topology (1 = never restarted)
  bool adopted = false;  // found running at start (started by an earlier run)
  std::vector<worker_process::SpecExecutor> executors;  // from the assignment
};

// Why a worker could not listen on `port` of `host` now (another process
// holds it), or nullopt when it can, or when `host` does not resolve (the
// worker then says so itself). Binds as the worker does: with
// SO_REUSEADDR, so that a port a stopped worker left in TIME_WAIT is free.
std::optional<std::string> busy_port(const std::string& host, int port);

class Supervisor {
 public:
  // REQUIRES: every reference outlives this.
  Supervisor(SupervisorOptions options, CoordinationStore& store, KeyValueStore& local_store,
             NimbusLink& nimbus, Logger logger);
  ~Supervisor();  // stop()
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Picks the id, recovers local state, registers, starts the control thread.
  Status start();

  enum class StopMode {
    kStopWorkers,  // the daemon's SIGTERM: no worker is left running
    kLeaveWorkersRunning,  // as a crash would (tests of recovery)
  };
  // Idempotent. Unregisters the node.
  void stop(StopMode mode = StopMode::kStopWorkers);

  const std::string& id() const { return id_; }
  thrift::SupervisorInfo info() const;
  std::vector<WorkerView> workers() const;
  // Control rounds completed (each reads assignments and checks workers).
  std::uint64_t rounds() const;
  // Heartbeats nimbus accepted.
  std::uint64_t heartbeats_sent() const;

 private:
  struct Slot {
    WorkerRecord record;
    bool adopted = false;
    int launches = 0;
    int failures = 0;  // consecutive launches that did not get to a heartbeat
    bool heartbeat_seen = false;
    std::chrono::steady_clock::time_point launched_at;
    std::chrono::steady_clock::time_point next_launch;  // back-off after failures
    std::vector<worker_process::SpecExecutor> executors;  // own executors
  };
  struct Desired {
    thrift::Assignment assignment;
    std::vector<worker_process::SpecExecutor> executors;  // own, by (component, tasks)
  };

  void run(std::stop_token stop);
  void round();
  // Whether the process of a slot not yet handled has ended. REQUIRES: mutex_ held.
  bool worker_exited_locked() const;
  // Notes that the worker of `topology_id` on `port` exited or could not
  // start, and why; reported to nimbus with every heartbeat until the slot
  // runs for a minute (see check_health).
  void record_failure(int port, const std::string& topology_id, std::string reason,
                      std::string exit_status);
  Status register_node();
  void recover();
  std::map<int, Desired> read_desired(std::map<std::string, bool>* active);
  bool read_active(const std::string& topology_id);
  void arm(const std::string& path, bool children);
  void reconcile(const std::map<int, Desired>& desired, const std::map<std::string, bool>& active);
  void start_worker(int port, const Desired& desired, bool active, int launches);
  void stop_worker(int port, const std::string& why);
  void check_health(int port);
  void send_heartbeat();
  void mark_dirty();
  // Probes the slot ports no live worker of ours holds (busy_port) and
  // updates busy_ports_, logging each change; true when it changed.
  bool check_ports();
  // Writes info() to this node's registration, where nimbus reads the slots.
  void update_registration();

  const SupervisorOptions options_;
  CoordinationStore& store_;
  LocalState local_;
  NimbusLink& nimbus_;
  const Logger logger_;
  const ClusterPaths paths_;
  WorkerLauncher launcher_;
  std::string id_;  // set by start(), then const
  std::int64_t start_time_ms_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable_any wake_;
  bool dirty_ = true;          // guarded by mutex_
  bool reregister_ = false;    // guarded by mutex_
  std::set<std::string> armed_;  // watched paths (prefix "c:" children); guarded by mutex_
  std::map<int, Slot> slots_;  // guarded by mutex_ (written by the control thread only)
  std::atomic<bool> stopping_{false};  // stop() began: launch nothing
  std::map<std::string, bool> status_written_;  // topology-port -> active; control thread
  std::map<int, thrift::WorkerFailure> failures_;  // by port; control thread
  // Slot ports another process listens on -> why: not offered to nimbus.
  std::map<int, std::string> busy_ports_;  // guarded by mutex_ (written by the control thread)
  bool registration_stale_ = false;        // control thread: update_registration failed
  std::uint64_t rounds_ = 0;   // guarded by mutex_
  std::uint64_t heartbeats_ = 0;  // guarded by mutex_
  std::chrono::steady_clock::time_point next_heartbeat_;
  std::uint64_t session_listener_ = 0;
  bool started_ = false;
  // The store's watches reach this supervisor through it; closed first when
  // it is destroyed (a watch may fire on the store's thread after that).
  CallbackLifeline watches_;
  std::jthread thread_;
};

}  // namespace rstorm::supervisor
