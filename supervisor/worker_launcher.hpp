// WorkerLauncher: turns "run these executors of topology T on port P" into a
// running rstorm-worker process: fetches the code blob through NimbusLink
// (once per SHA-256; the cached copy under `<local dir>/code/` is checked
// against the assignment's code_sha256 before use), the topology's name and
// config (getTopologyInfo), writes `<local dir>/workers/<topology>-<port>/`
// {spec.json, status} and starts `rstorm-worker --spec .../spec.json` with
// stdout and stderr appended to worker.log there.
//
// Thread contract: thread-compatible (the supervisor's control thread uses it).
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "common/logger.hpp"
#include "rstorm_thrift/rstorm_types.h"
#include "supervisor/local_state.hpp"
#include "supervisor/nimbus_link.hpp"
#include "supervisor/supervisor_options.hpp"
#include "worker/process/worker_spec.hpp"

namespace rstorm::supervisor {

class WorkerLauncher {
 public:
  // REQUIRES: `nimbus` outlives this.
  WorkerLauncher(const SupervisorOptions& options, NimbusLink& nimbus, Logger logger);

  // The worker's directory.
  std::filesystem::path worker_dir(const std::string& topology_id, int port) const;

  // Code, config and spec for `port` of `assignment`, not yet started.
  // kCorruption when the downloaded code does not match code_sha256,
  // kUnavailable when nimbus cannot be reached.
  Result<worker_process::WorkerSpec> prepare(const thrift::Assignment& assignment,
                                             const std::string& supervisor_id, int port);
  // Writes the spec and status files and starts the process.
  Result<ProcessId> launch(const worker_process::WorkerSpec& spec, bool active);

  // Replaces the spec of a running worker (atomically) with a newer
  // assignment version; the worker follows it (peers and routes).
  Status update_spec(const worker_process::WorkerSpec& spec);
  // The worker folder's ACL for the log viewer (kAclFile): the topology's
  // owner and ACL keys.
  Status write_acl(const worker_process::WorkerSpec& spec);
  // Writes the desired status file of a running worker.
  Status write_status(const std::string& topology_id, int port, bool active);
  // Tells the worker on `port` which process supervises it (its
  // supervisor_file): at launch, and when a restarted supervisor adopts it.
  Status write_supervisor_mark(const std::string& topology_id, int port);
  // Forgets the topology's cached name and config (after it left this node).
  void forget_topology(const std::string& topology_id) { topology_info_.erase(topology_id); }
  // Deletes cached code whose SHA-256 is not in `keep`.
  void remove_code_except(const std::set<std::string>& keep);
  // Removes spec.json, status, heartbeat and worker-token of a stopped
  // worker (keeps worker.log).
  void clean_worker_dir(const std::string& topology_id, int port);
  // Renews the worker tokens of `workers` ((topology id, port) pairs) whose
  // token has less than half its life left at `now_ms`: asks nimbus for the
  // topology again and rewrites their worker-token files. A failure is
  // logged and tried again on the next call.
  void renew_worker_tokens(const std::vector<std::pair<std::string, int>>& workers,
                           std::int64_t now_ms);

 private:
  Result<std::filesystem::path> code_for(const thrift::Assignment& assignment);
  // Writes <worker dir>/worker-token (owner-only) from the cached topology
  // info; removes a stale one when nimbus gave none (not in secure mode).
  Status write_worker_token(const std::string& topology_id, int port);

  const SupervisorOptions& options_;
  NimbusLink& nimbus_;
  const Logger logger_;
  std::set<std::string> verified_;  // SHA-256 of cached code already checked
  std::map<std::string, thrift::TopologyInfo> topology_info_;
};

}  // namespace rstorm::supervisor
