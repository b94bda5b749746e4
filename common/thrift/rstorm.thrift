// rstorm's wire and storage format: the Nimbus RPC service, and the structs
// stored as ZooKeeper node values (encoded with the compact protocol, see
// codec.hpp). Compiled at build time into the rstorm::thrift library.
//
// Compatibility: fields are never renumbered; new fields are optional or have
// defaults, so an old reader skips what it does not know.

namespace cpp rstorm.thrift

// ------------------------------------------------------------ topology structure

enum GroupingType {
  SHUFFLE = 1,
  FIELDS = 2,
  ALL = 3,
  GLOBAL = 4,
  DIRECT = 5,
  LOCAL_OR_SHUFFLE = 6,
  NONE = 7,
}

enum ComponentKind {
  SPOUT = 1,
  BOLT = 2,
}

// One config value rendered as YAML (ConfigValue::to_string()), with the layer
// it came from, so that errors on the other side still name the origin.
struct ConfigEntry {
  1: required string value_yaml,
  2: string origin,
}

// An output stream of a component and its declared fields.
struct StreamDef {
  1: required string name,
  2: required list<string> fields,
  3: bool direct = false,
}

struct Grouping {
  1: required GroupingType type,
  2: optional list<string> fields,   // for FIELDS
}

// A subscription: this component consumes `stream` of `component`.
struct InputDef {
  1: required string component,
  2: required string stream,
  3: required Grouping grouping,
}

// What one executor of a component asks for (Storm's resource hints).
struct ResourceRequest {
  1: double onheap_mb = 128.0,
  2: double offheap_mb = 0.0,
  3: double cpu_pcore_percent = 10.0,
  4: map<string, double> generic,    // e.g. "gpu.count" -> 1
}

struct ComponentDef {
  1: required string id,
  2: required ComponentKind kind,
  3: list<StreamDef> streams,
  4: list<InputDef> inputs,
  5: i32 parallelism = 1,            // executors
  6: i32 num_tasks = 0,              // 0: one task per executor
  7: ResourceRequest resources,
  8: map<string, ConfigEntry> config, // component-specific config
}

struct TopologyStructure {
  1: required string name,
  2: list<ComponentDef> components,
}

// ------------------------------------------------------------ cluster state

// A supervisor's registration (value of supervisors/<id>, ephemeral).
struct SupervisorInfo {
  1: required string id,
  2: required string host,
  3: string rack = "default-rack",
  4: double memory_capacity_mb,
  5: double cpu_capacity,            // 100 points = one core
  6: list<i32> slots,                // worker ports
  7: map<string, double> generic_resources,
  8: list<i32> used_slots,
  9: i64 start_time_ms,
  10: i64 heartbeat_time_ms,
  11: string version,
  12: optional i32 logviewer_port,   // the supervisor's log viewer (-1 or unset: none)
  13: optional bool logviewer_https,  // it serves HTTPS (logviewer.https.*)
  // Ports of supervisor.slots.ports that another process listens on, with
  // why a worker could not: left out of `slots` until they are free.
  14: optional map<i32, string> busy_slots,
}

struct WorkerSlot {
  1: required string node_id,
  2: required i32 port,
}

// A contiguous range of task ids run by one executor, as in Storm.
struct ExecutorInfo {
  1: required i32 task_start,
  2: required i32 task_end,
  3: string component,
}

struct ExecutorAssignment {
  1: required ExecutorInfo executor,
  2: required WorkerSlot slot,
  3: ResourceRequest resources,
}

// Value of assignments/<topology-id>.
struct Assignment {
  1: required string topology_id,
  2: list<ExecutorAssignment> executors,
  3: map<string, string> node_hosts,  // supervisor id -> host
  4: i64 assigned_time_ms,
  5: string code_blob_key,
  6: string code_sha256,
  7: i64 version,                     // bumped on every reassignment
  // What the scheduler warned of when it made this placement (CPU
  // overcommitted on a node, ...): kept with it, so that a nimbus that
  // leads later (failover, restart) still shows them. Not part of what
  // workers compare: a warning changes no executor's place.
  8: list<string> warnings,
}

enum TopologyStatus {
  ACTIVE = 1,
  INACTIVE = 2,
  KILLED = 3,
  REBALANCING = 4,
  UNSCHEDULABLE = 5,                  // submitted, but does not fit: see status_reason
}

struct RebalanceOptions {
  1: optional i32 wait_secs,
  2: optional i32 num_workers,
  3: optional map<string, i32> num_executors,  // component -> executors
  // component -> resource -> new amount per executor, as Storm's
  // `rebalance -r`: onheap.memory.mb, offheap.memory.mb, cpu.pcore.percent
  // (or their topology.component.* names), any other name a generic
  // resource. The component's executors are placed afresh.
  4: optional map<string, map<string, double>> resource_overrides,
}

// Value of topologies/<topology-id>.
struct TopologyRecord {
  1: required string id,
  2: required string name,
  3: TopologyStatus status = TopologyStatus.INACTIVE,
  4: string status_reason,
  5: i64 launch_time_ms,
  6: string code_blob_key,
  7: string code_sha256,
  8: string structure_blob_key,
  9: i32 num_workers,
  10: map<string, i32> component_executors,
  11: i32 priority = 29,
  12: i32 kill_wait_secs,
  13: string owner,                   // the submitter's user (secure mode)
  14: list<string> users,             // topology.users
  15: list<string> readonly_users,    // topology.readonly.users
  16: list<string> groups,            // topology.groups
  17: list<string> readonly_groups,   // topology.readonly.groups
  // While UNSCHEDULABLE: ACTIVE or INACTIVE, what it was (or was set to by
  // activate/deactivate meanwhile) and is again once placed; its workers
  // still running keep their spouts so.
  18: TopologyStatus resume_status = TopologyStatus.ACTIVE,
  // While REBALANCING: the rebalance asked for, applied at the deadline (ms
  // since the epoch) by whichever nimbus leads then; resume_status is what
  // the topology returns to.
  19: optional RebalanceOptions rebalance,
  20: i64 rebalance_deadline_ms,
  // While KILLED: when its workers are stopped and it is removed (ms since
  // the epoch), whichever nimbus leads then.
  21: i64 kill_deadline_ms,
  // SHA-256 of the structure blob as last written (submit, rebalance): a
  // standby copies the blob again when its own differs.
  22: string structure_sha256,
}

// One error a task reported or threw (worker heartbeats, describe).
struct ErrorInfo {
  1: required string component,
  2: required string message,
  3: i64 time_ms,
  4: string host,
  5: i32 port,
  6: i32 task_id,
}

// A topology that makes no progress: spouts with trees pending (or output held
// back) and nothing completed for at least topology.stall.timeout.secs.
struct StallInfo {
  1: i64 stalled_secs,                // the longest such wait
  2: i64 pending,                     // trees pending at the stalled spouts
  3: list<string> stalled_spouts,     // spout components waiting
  4: list<string> full_queues,        // components whose receive queues are full
  5: list<string> queued,             // components with tuples waiting in their queues
}

// Value of workerbeats/<topology-id>/<supervisor-id>-<port>.
struct WorkerHeartbeat {
  1: required string topology_id,
  2: required WorkerSlot slot,
  3: list<ExecutorInfo> executors,
  4: i64 time_ms,
  5: i64 uptime_secs,
  // The last few errors of each executor of the worker, oldest first.
  6: optional list<ErrorInfo> errors,
  // Set while this worker's spouts make no progress.
  7: optional StallInfo stall,
  // Components this worker runs on their producer's threads
  // (topology.fuse.executors): component -> producer.
  8: optional map<string, string> fused,
}

// A worker that exited or could not start, as its supervisor saw it; kept
// while the slot keeps failing (until a restart has run for a minute).
struct WorkerFailure {
  1: required string topology_id,
  2: required WorkerSlot slot,
  3: string host,
  4: string reason,          // the worker's own words, else how it exited
  5: string exit_status,     // "exit code 1", "signal 11"
  6: i32 restarts,           // restarts since the first failure
  7: i64 first_time_ms,
  8: i64 last_time_ms,
  // Set once a worker started after the last failure heartbeats: when it
  // started. The failure stays on record until the worker has run healthy
  // for a minute (a crash loop is not forgotten at each start).
  9: optional i64 running_since_ms,
}

struct SupervisorHeartbeat {
  1: required SupervisorInfo info,
  2: list<WorkerHeartbeat> workers,
  3: optional list<WorkerFailure> failures,
}

// ------------------------------------------------------------ summaries

struct TopologySummary {
  1: required string id,
  2: required string name,
  3: TopologyStatus status,
  4: string status_reason,
  5: i32 num_workers,
  6: i32 num_executors,
  7: i32 num_tasks,
  8: i64 uptime_secs,
  9: double requested_memory_mb,
  10: double assigned_memory_mb,
  11: double requested_cpu,
  12: double assigned_cpu,
  // Set while the topology makes no progress (from its workers' heartbeats).
  13: optional StallInfo stall,
  // Workers of the topology that exit or cannot start.
  14: optional list<WorkerFailure> failing_workers,
  15: i64 assignment_version,
  16: i32 moved_executors,       // by the latest assignment
}

struct SupervisorSummary {
  1: required SupervisorInfo info,
  2: double used_memory_mb,
  3: double used_cpu,
  4: i32 num_used_workers,
  5: i64 uptime_secs,
}

struct NimbusSummary {
  1: required string host,
  2: required i32 port,
  3: bool is_leader,
  4: i64 uptime_secs,
  5: string version,
  6: i32 tls_port,                    // nimbus.thrift.tls.port; 0: no TLS
}

struct ClusterSummary {
  1: list<SupervisorSummary> supervisors,
  2: list<TopologySummary> topologies,
  3: list<NimbusSummary> nimbuses,
}

struct ExecutorSummary {
  1: required ExecutorInfo executor,
  2: WorkerSlot slot,
  3: string host,
  4: i64 uptime_secs,
}

// What a worker token says (Storm's WorkerTokenInfo), signed by nimbus.
struct WorkerTokenInfo {
  1: required string topology_id,
  2: string user,             // the topology's owner
  3: i64 issued_ms,
  4: i64 expiration_ms,
  5: i64 key_version,         // which of nimbus's keys signed it
}

// A topology's workers present this to nimbus (authenticateWorker): `info`
// is a compact-encoded WorkerTokenInfo, `signature` its HMAC-SHA256 under the
// key `key_version` names.
struct WorkerToken {
  1: required binary info,
  2: required binary signature,
}

// ------------------------------------------------------------ checkpoints
// A complete checkpoint of a topology's state (topology.state.checkpointing).
struct CheckpointInfo {
  1: required i64 id,
  2: i64 started_ms,                  // wall clock, ms since the epoch
  3: i64 completed_ms,
  4: i64 bytes,                       // the parts, summed
  5: i32 tasks,                       // the tasks that stored a part
  6: i64 epoch,                       // the recovery epoch it was taken in
  7: list<i32> part_tasks,            // the tasks whose part nimbus holds (set by nimbus)
}

// What nimbus records of a topology's checkpoints, in ZooKeeper at
// checkpoints/<topology id>. A part is the blob
// "<topology id>.checkpoint-<id>-e<epoch>-task-<task>".
struct CheckpointState {
  1: i64 epoch,                       // the recovery epoch (0 before the first move)
  2: list<CheckpointInfo> complete,   // the complete checkpoints kept, oldest first
  // The checkpoint every worker of `epoch` restores, chosen by the leader
  // when it moved the epoch on: the newest complete one whose parts it
  // holds. Unset: none (the workers start from empty state). Workers must
  // agree on it: a part still being copied to a new leader would otherwise
  // make some restore an older checkpoint than others.
  3: optional CheckpointInfo restore,
}

struct TopologyInfo {
  1: required TopologySummary summary,
  2: TopologyStructure structure,
  3: map<string, ConfigEntry> config,
  4: list<ExecutorSummary> executors,
  5: list<ErrorInfo> errors,
  // The topology's data-plane secret (storm.messaging.netty.authentication):
  // kept by nimbus, sent only over mutual TLS to supervisors and admins.
  6: optional binary secret,
  // A worker token for the topology's workers (storm.worker.token.*): sent
  // with the secret, to supervisors and admins over mutual TLS only.
  7: optional WorkerToken worker_token,
  // Its checkpoints (topology.state.checkpointing with the nimbus store).
  8: optional CheckpointState checkpoints,
  // Components its workers run on their producer's threads, as they last
  // reported (topology.fuse.executors): component -> producer.
  9: optional map<string, string> fused,
  // The submitter's user (secure mode): with topology.users and the like in
  // `config`, the topology's ACL (a supervisor's log viewer checks it).
  10: optional string owner,
}

// Use of one node against its capacity.
struct NodeUsage {
  1: required string node_id,
  2: string host,
  3: string rack,
  4: double memory_used_mb,
  5: double memory_capacity_mb,
  6: double cpu_used,
  7: double cpu_capacity,
  8: list<i32> used_ports,
}

// How many communicating executor pairs sit how close to each other.
struct NetworkCost {
  1: i64 same_worker,
  2: i64 same_node,
  3: i64 same_rack,
  4: i64 cross_rack,
}

struct TopologyPlacement {
  1: required string topology_id,
  2: Assignment assignment,
  3: list<NodeUsage> nodes,
  4: NetworkCost network,
  5: string scheduler,                // "resource-aware" or "round-robin"
  6: list<string> warnings,           // e.g. CPU overcommitted on node-3
  // With an acker in every worker (topology.acker.executors unset): what
  // each worker's acker asks, part of its worker's use and not listed among
  // the assignment's executors.
  7: optional ResourceRequest worker_acker,
}

// ------------------------------------------------------------ requests

struct KillOptions {
  1: optional i32 wait_secs,          // default topology.message.timeout.secs
}

struct BlobSummary {
  1: required string key,
  2: i64 size,
  3: string sha256,
  4: i32 chunk_count,
}

struct DownloadHandle {
  1: required string session,
  2: BlobSummary blob,
}

// ------------------------------------------------------------ errors
// Each message names the thing at fault ("topology 'wc' is not running").

exception NotFoundException { 1: required string msg }
exception AlreadyExistsException { 1: required string msg }
exception InvalidTopologyException { 1: required string msg }
exception CorruptBlobException { 1: required string msg }
exception IllegalStateException { 1: required string msg }
exception NotLeaderException {
  1: required string msg,
  2: string leader_host,              // where to retry, when known
  3: i32 leader_port,
  4: i32 leader_tls_port,             // the leader's TLS port; 0: none
}
// The caller may not do this: names the user, the operation and the topology.
exception AuthorizationException { 1: required string msg }

// ------------------------------------------------------------ the service

service Nimbus {
  // Returns the new topology id. The code must have been uploaded as code_blob_key.
  string submitTopology(1: string name, 2: TopologyStructure structure,
                        3: map<string, ConfigEntry> config, 4: string code_blob_key)
      throws (1: AlreadyExistsException exists, 2: InvalidTopologyException invalid,
              3: NotFoundException missing_code, 4: NotLeaderException not_leader,
              5: AuthorizationException denied),
  void killTopology(1: string name, 2: KillOptions options)
      throws (1: NotFoundException missing, 2: NotLeaderException not_leader,
              3: AuthorizationException denied),
  void activate(1: string name)
      throws (1: NotFoundException missing, 2: IllegalStateException state,
              3: NotLeaderException not_leader, 4: AuthorizationException denied),
  void deactivate(1: string name)
      throws (1: NotFoundException missing, 2: IllegalStateException state,
              3: NotLeaderException not_leader, 4: AuthorizationException denied),
  void rebalance(1: string name, 2: RebalanceOptions options)
      throws (1: NotFoundException missing, 2: InvalidTopologyException invalid,
              3: IllegalStateException state, 4: NotLeaderException not_leader,
              5: AuthorizationException denied),

  ClusterSummary getClusterInfo() throws (1: AuthorizationException denied),
  TopologyInfo getTopologyInfo(1: string id) throws (1: NotFoundException missing,
              2: AuthorizationException denied),
  TopologyPlacement getPlacement(1: string id) throws (1: NotFoundException missing,
              2: AuthorizationException denied),

  // Code upload in chunks: begin returns an upload session; finish checks the
  // total size and SHA-256 and publishes the blob.
  string beginFileUpload(1: string blob_key)
      throws (1: InvalidTopologyException invalid, 2: NotLeaderException not_leader,
              3: AuthorizationException denied),
  void uploadChunk(1: string session, 2: binary chunk)
      throws (1: NotFoundException missing, 2: InvalidTopologyException invalid,
              3: AuthorizationException denied),
  BlobSummary finishFileUpload(1: string session, 2: i64 size, 3: string sha256)
      throws (1: NotFoundException missing, 2: CorruptBlobException corrupt,
              3: AuthorizationException denied),
  // Download: chunks in order; an empty chunk marks the end.
  DownloadHandle beginFileDownload(1: string blob_key) throws (1: NotFoundException missing,
              2: AuthorizationException denied),
  binary downloadChunk(1: string session) throws (1: NotFoundException missing,
              2: AuthorizationException denied),

  // The rest of this connection's calls are made for the user `principal`
  // maps to (storm.principal.tolocal.rules), when nimbus.impersonation.acl
  // lets this connection's own user act for that user from this host (an
  // empty principal: back to the connection's own user). Secure mode only:
  // with no authorizer configured, identities are not checked at all.
  void actAs(1: string principal) throws (1: AuthorizationException denied),

  // The rest of this connection's calls are made as a worker of the token's
  // topology: it may describe that topology and download its code, nothing
  // else. TLS port only (the token would travel in the clear otherwise); a
  // forged, expired or unknown-key token is refused.
  void authenticateWorker(1: WorkerToken token) throws (1: AuthorizationException denied),

  // Checkpoints (topology.state.checkpointing, store "nimbus"): the parts
  // are uploaded and downloaded as blobs (see CheckpointState) by the
  // topology's workers. completeCheckpoint records one as complete once
  // nimbus holds its `tasks` parts, keeps the newest `retained` and removes
  // the parts of every other one; a checkpoint of an epoch older than the
  // topology's is refused (IllegalStateException). advanceCheckpointEpoch
  // moves the recovery epoch on by one and returns the new one.
  CheckpointState getCheckpoints(1: string topology_id)
      throws (1: NotFoundException missing, 2: AuthorizationException denied),
  CheckpointState completeCheckpoint(1: string topology_id, 2: CheckpointInfo checkpoint,
                                     3: i32 retained)
      throws (1: NotFoundException missing, 2: IllegalStateException stale,
              3: NotLeaderException not_leader, 4: AuthorizationException denied),
  i64 advanceCheckpointEpoch(1: string topology_id)
      throws (1: NotFoundException missing, 2: NotLeaderException not_leader,
              3: AuthorizationException denied),

  NimbusSummary getLeader() throws (1: NotFoundException no_leader,
              2: AuthorizationException denied),
  void supervisorHeartbeat(1: SupervisorHeartbeat heartbeat)
      throws (1: NotLeaderException not_leader, 2: AuthorizationException denied),
}
