// Nimbus: the master's logic, independent of Thrift transport. It holds the
// topology registry (TopologyRecord nodes in the coordination store, structure
// and config in the blob store), runs leader election, schedules with the
// scheduler library whenever supervisors or topologies change (and every
// monitor period), writes assignments, detects dead supervisors and workers
// from missed heartbeats, and serves code in chunks. Only the leader mutates
// cluster state; a standby answers mutating calls with kUnavailable ("not the
// leader", see leader_address()) and copies the code blobs of every topology
// from the leader so that it can serve them after a failover.
//
// Errors are Status values whose codes the Thrift handler maps to the IDL's
// exceptions: kNotFound, kAlreadyExists, kInvalidArgument (bad topology or
// illegal state), kCorruption (upload check failed), kUnavailable (not leader).
//
// Thread contract: thread-safe. Owns one monitor thread (scheduling rounds on
// the leader, blob sync on a standby); RPC threads call the public methods;
// watch callbacks only wake the monitor thread. REQUIRES: the store and the
// blob store outlive this object.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "common/blob_store.hpp"
#include "common/callback_lifeline.hpp"
#include "common/cluster_paths.hpp"
#include "common/coordination_store.hpp"
#include "common/leader_election.hpp"
#include "common/logger.hpp"
#include "common/security/authorizer.hpp"
#include "common/security/tls.hpp"
#include "common/status.hpp"
#include "nimbus/worker_tokens.hpp"
#include "rstorm/config.hpp"
#include "rstorm_thrift/rstorm_types.h"
#include "scheduler/placement.hpp"
#include "scheduler/request.hpp"

namespace rstorm::nimbus {

struct NimbusOptions {
  // Address advertised in the election node (and bind address of the server).
  // Default 127.0.0.1 (nimbus.thrift.host).
  std::string host = "127.0.0.1";
  // Coordination store root. Default "/rstorm" (storm.zookeeper.root).
  std::string root = "/rstorm";
  // Scheduling round at least this often. Default 10 s (nimbus.monitor.freq.secs).
  std::chrono::milliseconds monitor_period{10000};
  // A supervisor silent this long is dead. Default 60 s (nimbus.supervisor.timeout.secs).
  std::chrono::milliseconds supervisor_timeout{60000};
  // A worker silent this long is dead. Default 30 s (nimbus.task.timeout.secs).
  std::chrono::milliseconds task_timeout{30000};
  // Grace for a newly assigned worker's first heartbeat. Default 120 s (nimbus.task.launch.secs).
  std::chrono::milliseconds task_launch{120000};
  // Kill wait when the client gives none. Default 30 (topology.message.timeout.secs).
  int default_kill_wait_secs = 30;
  // A new topology is scheduled only once this many nimbuses hold its code
  // (so a failover right after submit finds it), or after max_replication_wait.
  // Default 1 (topology.min.replication.count; dev-cluster sets its nimbus count).
  int min_replication = 1;
  // Default 60 s (topology.max.replication.wait.time.sec; negative: wait forever).
  std::chrono::milliseconds max_replication_wait{60000};
  // Download chunk size. Default 1 MiB (storm.blobstore.chunk.size.bytes).
  std::size_t chunk_bytes = 1 << 20;
  // A standby's certificate for reading code from the leader's TLS port
  // (nimbus.thrift.tls.client.* with nimbus.thrift.client.use.tls). Default none.
  std::optional<security::TlsFiles> client_tls;
  // Life of a worker token. Default 24 h (storm.worker.token.life.time.hours).
  std::chrono::milliseconds worker_token_life{std::chrono::hours(24)};
  // Milliseconds since the epoch. Default: the system clock. Tests may inject one.
  std::function<std::int64_t()> now_ms;

  // From the keys named above. Throws ConfigError on a wrong type.
  static NimbusOptions from_config(const Config& config);
};

// ACTIVE or INACTIVE: what the user set, whatever nimbus does with the
// topology meanwhile (UNSCHEDULABLE and REBALANCING keep it in resume_status).
inline thrift::TopologyStatus::type user_status(const thrift::TopologyRecord& record) {
  const bool kept = record.status == thrift::TopologyStatus::UNSCHEDULABLE ||
                    record.status == thrift::TopologyStatus::REBALANCING;
  const auto status = kept ? record.resume_status : record.status;
  return status == thrift::TopologyStatus::INACTIVE ? thrift::TopologyStatus::INACTIVE
                                                    : thrift::TopologyStatus::ACTIVE;
}

class Nimbus {
 public:
  Nimbus(CoordinationStore& store, BlobStore& blobs, NimbusOptions options, Logger logger);
  ~Nimbus();  // stop()
  Nimbus(const Nimbus&) = delete;
  Nimbus& operator=(const Nimbus&) = delete;

  // Creates the cluster directories, joins the election advertising
  // host:`port` (and `tls_port`, 0 without TLS) and starts the monitor thread.
  Status start(int port, int tls_port = 0);
  // Leaves the election and joins the monitor thread. Idempotent.
  void stop();

  bool is_leader() const;
  // The leader's advertised address; kNotFound when there is none.
  Result<thrift::NimbusSummary> leader() const;

  // ---- the Nimbus service (see common/thrift/rstorm.thrift)
  // `submitter`: the submitting user in secure mode (the topology's owner);
  // empty otherwise.
  Result<std::string> submit(const std::string& name, thrift::TopologyStructure structure,
                             const std::map<std::string, thrift::ConfigEntry>& config,
                             const std::string& code_blob_key, const std::string& submitter = {});
  Status kill(const std::string& name, std::optional<int> wait_secs);
  Status activate(const std::string& name);
  Status deactivate(const std::string& name);
  Status rebalance(const std::string& name, const thrift::RebalanceOptions& options);
  Result<thrift::ClusterSummary> cluster_info();
  Result<thrift::TopologyInfo> topology_info(const std::string& id_or_name);
  Result<thrift::TopologyPlacement> placement(const std::string& id_or_name);
  Result<std::string> begin_upload(const std::string& blob_key);
  Status upload_chunk(const std::string& session, const std::string& chunk);
  Result<thrift::BlobSummary> finish_upload(const std::string& session, std::int64_t size,
                                            const std::string& sha256);
  Result<thrift::DownloadHandle> begin_download(const std::string& blob_key);
  Result<std::string> download_chunk(const std::string& session);
  Status supervisor_heartbeat(const thrift::SupervisorHeartbeat& heartbeat);
  // A fresh worker token for the workers of a running topology (by id or
  // name); kNotFound naming it. See worker_tokens.hpp.
  Result<thrift::WorkerToken> worker_token(const std::string& id_or_name);
  // The info of a genuine, unexpired token of a topology that still exists;
  // kPermissionDenied saying why not.
  Result<thrift::WorkerTokenInfo> verify_worker_token(const thrift::WorkerToken& token);

  // ---- checkpoints (nimbus_checkpoints.cpp; see CheckpointState in rstorm.thrift)
  // What is recorded of the checkpoints of a topology (by id or name): an
  // empty state (epoch 0) before its first; kNotFound naming the topology.
  Result<thrift::CheckpointState> checkpoints(const std::string& id_or_name);
  // Records `checkpoint` as complete once this nimbus holds its parts, keeps
  // the newest `retained` and removes the parts of every other one (those of
  // checkpoints still being taken excepted). kInvalidArgument (illegal state)
  // for a checkpoint of an epoch that was moved on or one with parts missing.
  Result<thrift::CheckpointState> complete_checkpoint(const std::string& topology_id,
                                                      thrift::CheckpointInfo checkpoint,
                                                      int retained);
  // Moves the topology's recovery epoch on by one; returns the new one.
  Result<std::int64_t> advance_checkpoint_epoch(const std::string& topology_id);

  // ---- what the authorizer needs
  // The ACL of a running topology (by id or name); kNotFound otherwise.
  Result<security::TopologyAcl> topology_acl(const std::string& id_or_name);
  // The ACL of the topology whose code or structure is `blob_key`; nullopt
  // when no running topology uses it.
  std::optional<security::TopologyAcl> blob_acl(const std::string& blob_key);

  // Wakes the monitor thread for a round now (tests, watches).
  void trigger();
  // Completed scheduling rounds (leader) or sync passes (standby).
  std::uint64_t rounds() const;
  // Called on the monitor thread after each leader scheduling round with its
  // duration (metrics). Set before start().
  void set_round_observer(std::function<void(std::chrono::nanoseconds)> observer) {
    round_observer_ = std::move(observer);
  }

 private:
  // A topology as loaded from the blob store.
  struct Loaded {
    thrift::TopologyStructure structure;
    std::map<std::string, thrift::ConfigEntry> config;
    scheduler::TopologyRequest request;  // without `current`
    std::string secret;                  // the workers' data-plane secret
  };
  struct SlotKey {
    std::string topology;
    std::string node;
    int port;
    friend auto operator<=>(const SlotKey&, const SlotKey&) = default;
  };
  struct Download {
    std::string key;
    std::uint32_t next = 0;
    std::uint32_t chunks = 0;
  };
  struct RoundInput;

  std::int64_t now() const { return options_.now_ms(); }
  Status require_leader() const;
  // The record whose id or name is `id_or_name` (kNotFound naming it).
  Result<std::pair<thrift::TopologyRecord, std::int32_t>> find_record(
      const std::string& id_or_name);
  // Every record; with `versions`, each one's node version by id, for
  // write_record().
  Result<std::vector<thrift::TopologyRecord>> all_records(
      std::map<std::string, std::int32_t>* versions = nullptr);
  // Writes `record` over the version it was read at: kVersionConflict when
  // the record changed since (a kill, a deactivate, a rebalance meanwhile),
  // which the writer must not overwrite.
  Status write_record(const thrift::TopologyRecord& record, std::int32_t expected_version);
  // Reads the record of `id_or_name`, applies `change` (which may refuse with
  // its own error) and writes it over the version read, again from the read
  // when another write came between; returns the record written.
  Result<thrift::TopologyRecord> update_record(
      const std::string& id_or_name, const std::function<Status(thrift::TopologyRecord&)>& change);
  Result<Loaded> load(const thrift::TopologyRecord& record);
  Status check_fits(const scheduler::TopologyRequest& request);
  Status set_status(const std::string& name, thrift::TopologyStatus::type from_a,
                    thrift::TopologyStatus::type from_b, thrift::TopologyStatus::type to,
                    const char* verb);
  std::string next_topology_id(const std::string& name);

  // nimbus_round.cpp
  void monitor_loop(std::stop_token stop);
  void leader_round();
  void standby_sync();
  std::map<std::string, thrift::SupervisorInfo> live_supervisors(std::int64_t now_ms);
  void finish_kill(const thrift::TopologyRecord& record);
  // Registers this nimbus (ephemeral node) as holding the code and structure of
  // every live topology whose blobs it has. Monitor thread and submit().
  void publish_replicas(const std::vector<thrift::TopologyRecord>& records);
  // Whether a topology not yet assigned may be scheduled: enough nimbuses hold
  // its code, or the replication wait is over (logged once either way).
  bool replicated_enough(const thrift::TopologyRecord& record, std::int64_t now_ms);
  // The rebalance `record` keeps (REBALANCING), written over `version`.
  Status apply_rebalance(thrift::TopologyRecord record, std::int32_t version);
  bool worker_dead(const SlotKey& slot, std::int64_t now_ms);
  // The slots of `holding` (topologies whose workers run on but that the
  // round does not place) that `cluster` still offers, with what they use.
  std::vector<scheduler::SlotUsage> held_slots(
      const std::vector<const thrift::TopologyRecord*>& holding, const scheduler::Cluster& cluster);
  // What each worker of `assignment` holds, by (node, port): its executors'
  // resources (the ackers of topology.acker.executors among them, as listed)
  // and, when every worker runs its own acker, that acker's, from the
  // topology's request. What the scheduler charged, read back by any leader.
  std::map<std::pair<std::string, int>, scheduler::SlotUsage> worker_usage(
      const thrift::TopologyRecord& record, const thrift::Assignment& assignment);
  // write_record() from a round: a record changed since the round read it
  // is left as it is (and another round follows).
  void write_round_record(const thrift::TopologyRecord& record, std::int32_t version);
  void write_outcome(const thrift::TopologyRecord& record, std::int32_t version,
                     const scheduler::TopologyRequest& request,
                     const scheduler::TopologyPlacement& placement,
                     const std::optional<thrift::Assignment>& existing,
                     const std::map<std::string, thrift::SupervisorInfo>& supervisors);
  void arm_watches();

  // nimbus_checkpoints.cpp
  // The topology's id for `id_or_name` (an id is looked up directly).
  Result<std::string> topology_id_of(const std::string& id_or_name);
  // Reads `topology_id`'s checkpoint node (empty when there is none), lets
  // `mutate` change it and writes it back if nobody wrote it meanwhile,
  // trying again otherwise. `what` names the change in errors. An error of
  // `mutate` is returned as it is, nothing written.
  Result<thrift::CheckpointState> update_checkpoint_state(
      const std::string& topology_id, const std::string& what,
      const std::function<Status(thrift::CheckpointState&)>& mutate);
  // Removes the blobs of `topology_id`'s checkpoint parts that `state` no
  // longer keeps: those of another epoch than its newest checkpoint's, or
  // older than it (parts of a checkpoint being taken stay). Every part when
  // `state` is null. `keys` is the blob store's listing when the caller has
  // one (else it is listed here).
  void remove_checkpoint_parts(const std::string& topology_id, const thrift::CheckpointState* state,
                               const std::vector<std::string>* keys = nullptr);
  // A standby: the part blobs the kept checkpoints of `topology_id` need;
  // arms a watch on its checkpoint node so that a new one wakes the sync.
  std::vector<std::string> wanted_checkpoint_parts(const std::string& topology_id);

  // nimbus_views.cpp
  // Writes the errors a heartbeat carries under errors/<topology-id>, one
  // ErrorInfo node per (time, task), keeping the newest kMaxErrorsPerTopology.
  // Not under mutex_ for the store calls.
  void record_errors(const thrift::SupervisorHeartbeat& heartbeat);
  thrift::TopologySummary summarize(const thrift::TopologyRecord& record);
  // What the workers of `topology_id` report of a stall, merged; none when
  // every worker makes progress.
  std::optional<thrift::StallInfo> stall_of(const std::string& topology_id);
  // The components the workers of `topology_id` run fused, merged over the
  // workers heartbeating now: component -> producer.
  std::map<std::string, std::string> fused_of(const std::string& topology_id);
  // The topology's workers that exit or cannot start, as their supervisors
  // last reported them (reports of a supervisor gone silent are dropped).
  std::vector<thrift::WorkerFailure> failures_of(const std::string& topology_id);
  std::int64_t executor_uptime(const std::string& topology_id, const thrift::WorkerSlot& slot,
                               std::int64_t assigned_ms);

  CoordinationStore& store_;
  BlobStore& blobs_;
  const NimbusOptions options_;
  const ClusterPaths paths_;
  const Logger logger_;
  const std::int64_t start_ms_;
  WorkerTokenKeys worker_tokens_;

  std::unique_ptr<LeaderElection> election_;
  std::uint64_t session_listener_ = 0;
  thrift::NimbusSummary self_;
  // The store's watches reach this nimbus through it; closed first when it is
  // destroyed (a watch may fire on the store's thread after that).
  CallbackLifeline watches_;

  mutable std::mutex mutex_;
  std::condition_variable_any wake_;
  bool dirty_ = true;                                               // guarded by mutex_
  std::uint64_t rounds_ = 0;                                        // guarded by mutex_
  std::function<void(std::chrono::nanoseconds)> round_observer_;   // set before start()
  bool supervisors_watched_ = false;                                // guarded by mutex_
  bool topologies_watched_ = false;                                 // guarded by mutex_
  std::map<std::string, Loaded> loaded_;                            // guarded by mutex_
  std::map<std::string, std::int64_t> supervisor_beats_;            // id -> ms; guarded by mutex_
  std::map<std::string, std::int64_t> supervisor_seen_;             // id -> ms; guarded by mutex_
  std::set<std::string> replication_logged_;                        // monitor thread only
  std::set<std::string> reported_dead_;                             // guarded by mutex_
  // The last registration read of each supervisor seen, for one whose
  // registration is gone (its ZooKeeper session ended: it died, or was cut
  // off) and which keeps its executors until nimbus.supervisor.timeout.secs
  // after it was last heard from (its orphaned workers stop just before).
  std::map<std::string, thrift::SupervisorInfo> supervisor_info_;   // guarded by mutex_
  std::set<std::string> unregistered_;                              // guarded by mutex_
  std::map<SlotKey, std::int64_t> worker_beats_;                    // guarded by mutex_
  // Workers whose last heartbeat reported a stall, with the beat's time (ms).
  std::map<SlotKey, std::pair<thrift::StallInfo, std::int64_t>> worker_stalls_;  // guarded by mutex_
  // Workers whose last heartbeat reported fused components, with its time (ms).
  std::map<SlotKey, std::pair<std::map<std::string, std::string>, std::int64_t>>
      worker_fused_;  // guarded by mutex_
  // supervisor id -> its failing workers and when it said so; guarded by mutex_
  std::map<std::string, std::pair<std::vector<thrift::WorkerFailure>, std::int64_t>>
      supervisor_failures_;
  std::map<std::string, std::set<std::string>> error_nodes_;         // written; guarded by mutex_
  std::map<SlotKey, std::int64_t> slot_since_;                      // guarded by mutex_
  std::map<SlotKey, std::int64_t> worker_started_;  // its process's start; guarded by mutex_
  std::set<std::string> heartbeating_supervisors_;                  // guarded by mutex_
  // When the waits of kills and rebalances end (the records keep them): the
  // monitor wakes then.
  std::map<std::string, std::int64_t> kill_deadlines_;              // guarded by mutex_
  std::map<std::string, std::int64_t> rebalance_deadlines_;         // guarded by mutex_
  // Components of a topology whose executors the next round places afresh
  // (their resources changed by a rebalance).
  std::map<std::string, std::set<std::string>> replaced_components_;  // guarded by mutex_
  std::set<std::string> fresh_placement_;  // topologies to place afresh; guarded by mutex_
  std::map<std::string, int> last_moved_;  // executors the latest assignment moved; guarded by mutex_
  std::set<std::string> checkpoints_watched_;  // topology ids; guarded by mutex_
  std::map<std::string, Download> downloads_;                       // guarded by mutex_
  std::uint64_t next_download_ = 0;                                 // guarded by mutex_
  std::vector<scheduler::NodeUsage> usage_;                         // guarded by mutex_
  // Monitor thread only: when this nimbus last became leader (0: standby),
  // and the placed topologies it said wait for their supervisors.
  std::int64_t leading_since_ms_ = 0;
  std::set<std::string> waiting_for_;
  // Supervisors this leader has seen live: one of them gone is gone, not late.
  std::set<std::string> seen_while_leading_;
  std::map<std::string, scheduler::TopologyPlacement> placements_;  // guarded by mutex_
  std::jthread monitor_;
};

// Names of the blob keys nimbus keeps per topology.
std::string topology_blob_key(const std::string& topology_id);

}  // namespace rstorm::nimbus
