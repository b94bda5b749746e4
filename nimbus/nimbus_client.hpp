// NimbusClient: the one way rstorm's processes talk to nimbus (the `rstorm`
// commands, supervisors, a standby nimbus fetching code). It wraps the
// generated Thrift client (framed transport, binary protocol, as the server
// speaks) and turns every Thrift exception into a Status naming what failed:
//   NotFoundException -> kNotFound, AlreadyExistsException -> kAlreadyExists,
//   InvalidTopologyException / IllegalStateException -> kInvalidArgument,
//   CorruptBlobException -> kCorruption, NotLeaderException (when the leader
//   cannot be followed) and transport errors -> kUnavailable.
// Leader discovery: connect() tries each seed in order (a dead nimbus is
// skipped), asks it for the leader (getLeader) and reconnects to the leader
// when it is another nimbus; when that fails it goes on with the next seed. A
// mutating call answered with NotLeaderException is retried once on the
// leader the exception names; while no leader is elected (nimbus starting, or
// a failover in progress) the call is retried on the same nimbus for up to 10 s.
// A call that fails in the transport returns kUnavailable and reconnects for
// the next one: to the same nimbus, or when it is gone to the first other
// seed that answers.
//
// Thread contract: thread-safe (one connection, calls serialized by a mutex).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/security/tls.hpp"
#include "common/status.hpp"
#include "rstorm/config.hpp"
#include "rstorm_thrift/rstorm_types.h"

namespace rstorm::thrift {
class NimbusClient;
}

namespace rstorm::nimbus {

struct NimbusAddress {
  std::string host;
  int port = 0;
  std::string to_string() const { return host + ":" + std::to_string(port); }
  friend bool operator==(const NimbusAddress&, const NimbusAddress&) = default;
};

class NimbusClient {
 public:
  struct Options {
    // Where to look for nimbus, in order. Default: 127.0.0.1:6627.
    std::vector<NimbusAddress> seeds{{"127.0.0.1", 6627}};
    // Connect, send and receive timeout of one call. Default 30 s.
    std::chrono::milliseconds timeout{30000};
    // Reconnect to the leader getLeader() names. Default true. False for a
    // client that must talk to exactly this nimbus (e.g. a standby reading code).
    bool follow_leader = true;
    // Mutual TLS with these files (nimbus.thrift.tls.client.*); the seeds are
    // then TLS ports and the leader is followed to its TLS port.
    std::optional<security::TlsFiles> tls;
    // Make every call for this principal (actAs on each connection, also
    // after following the leader); nimbus allows it when
    // nimbus.impersonation.acl lets this client's own user (e.g. rstorm-ui)
    // act for that user. Unset: calls are made as the certificate's user.
    std::optional<std::string> act_as;
    // A topology's worker token, presented on each connection
    // (authenticateWorker) by a worker, which has no certificate of its own:
    // `tls` then holds only the CA. See nimbus/worker_tokens.hpp.
    std::optional<thrift::WorkerToken> worker_token;
  };
  // Seeds from nimbus.seeds: each entry "host" (port nimbus.thrift.port, or
  // nimbus.thrift.tls.port with nimbus.thrift.client.use.tls) or "host:port";
  // the client certificate from nimbus.thrift.tls.client.*. Throws ConfigError
  // on a wrong type, a malformed entry or TLS asked for without its files.
  static Options options_from_config(const Config& config);
  // What a worker of the cluster `config` describes uses: the same seeds,
  // on the TLS port with only nimbus.thrift.tls.client.ca.path when
  // nimbus.thrift.client.use.tls is set, and `token`.
  static Options worker_options_from_config(const Config& config, thrift::WorkerToken token);

  // kUnavailable: "cannot reach nimbus at 127.0.0.1:6627 (...): is rstorm-nimbus
  // running? see `rstorm dev-cluster`". kPermissionDenied when nimbus refuses
  // options.act_as.
  static Result<std::unique_ptr<NimbusClient>> connect(Options options);
  ~NimbusClient();

  // The nimbus this client talks to.
  NimbusAddress address() const;
  // Empty when connect() reached the leader (or a nimbus that knows of no
  // leader yet); otherwise why not: the client talks to a nimbus that does
  // not lead (the leader it names does not answer: a failover under way),
  // which answers reads from what it last saw.
  const std::string& not_leader_reason() const { return not_leader_reason_; }

  Result<std::string> submit_topology(const std::string& name,
                                      const thrift::TopologyStructure& structure,
                                      const std::map<std::string, thrift::ConfigEntry>& config,
                                      const std::string& code_blob_key);
  Status kill_topology(const std::string& name, std::optional<int> wait_secs);
  Status activate(const std::string& name);
  Status deactivate(const std::string& name);
  Status rebalance(const std::string& name, const thrift::RebalanceOptions& options);
  Result<thrift::ClusterSummary> cluster_info();
  // `id` may also be a topology name.
  Result<thrift::TopologyInfo> topology_info(const std::string& id);
  Result<thrift::TopologyPlacement> placement(const std::string& id);
  Result<thrift::NimbusSummary> leader();
  // Checkpoints (see the Nimbus service in rstorm.thrift).
  Result<thrift::CheckpointState> checkpoints(const std::string& topology_id);
  // kInvalidArgument for a stale epoch or missing parts.
  Result<thrift::CheckpointState> complete_checkpoint(const std::string& topology_id,
                                                      const thrift::CheckpointInfo& checkpoint,
                                                      int retained);
  Result<std::int64_t> advance_checkpoint_epoch(const std::string& topology_id);
  Status supervisor_heartbeat(const thrift::SupervisorHeartbeat& heartbeat);

  // Uploads `bytes` as `blob_key` in chunks of `chunk_bytes`, declaring the
  // size and SHA-256 so nimbus verifies them.
  Result<thrift::BlobSummary> upload_blob(const std::string& blob_key, const std::string& bytes,
                                          std::size_t chunk_bytes = 1 << 20);
  // Downloads a blob and checks its SHA-256 against the one nimbus declares
  // (kCorruption naming the blob when they differ).
  Result<std::string> download_blob(const std::string& blob_key);

  // Raw chunked-upload steps (for tests of corrupt and truncated uploads).
  Result<std::string> begin_upload(const std::string& blob_key);
  Status upload_chunk(const std::string& session, const std::string& chunk);
  Result<thrift::BlobSummary> finish_upload(const std::string& session, std::int64_t size,
                                            const std::string& sha256);

  // One open Thrift connection (opaque; defined in nimbus_client.cpp).
  struct Connection;

 private:
  NimbusClient(Options options, std::shared_ptr<apache::thrift::transport::TSSLSocketFactory> tls,
               std::unique_ptr<Connection> connection);
  // Runs `call` on the connection; maps exceptions; on NotLeader follows the
  // leader once when `follow` is set.
  template <typename F>
  Status invoke(const char* what, F&& call, bool follow = true);
  Status reconnect(const NimbusAddress& address);

  const Options options_;
  // The TLS context every connection's socket is made from; null without TLS.
  std::shared_ptr<apache::thrift::transport::TSSLSocketFactory> tls_;
  mutable std::mutex mutex_;
  std::unique_ptr<Connection> connection_;  // guarded by mutex_
  // The last call failed in the transport (not an answer from nimbus).
  bool transport_failed_ = false;  // guarded by mutex_
  std::string not_leader_reason_;  // set once, by connect()
};

// The blob key of task `task`'s part of checkpoint `checkpoint`, taken in
// recovery epoch `epoch`, of topology `topology_id`:
// "<topology id>.checkpoint-<checkpoint>-e<epoch>-task-<task>".
std::string checkpoint_part_key(const std::string& topology_id, std::int64_t checkpoint,
                                std::int64_t epoch, std::int32_t task);
// What every part key of `topology_id` starts with.
std::string checkpoint_key_prefix(const std::string& topology_id);
// A part key's checkpoint, epoch and task, given the topology's prefix;
// nullopt for another key.
struct CheckpointPartName {
  std::int64_t checkpoint = 0;
  std::int64_t epoch = 0;
  std::int32_t task = 0;
};
std::optional<CheckpointPartName> parse_checkpoint_part_key(std::string_view key,
                                                            std::string_view prefix);

// One nimbus.seeds entry: "host" (at `default_port`) or "host:port" with a
// port in 1..65535. kInvalidArgument naming the entry otherwise, e.g.
// "nimbus.seeds entry 'a:b:c' is not host or host:port".
Result<NimbusAddress> parse_nimbus_seed(const std::string& entry, int default_port);

// The message for an unreachable nimbus, with what to do about it. A TLS
// failure (`tls`: this client spoke TLS) is explained as such instead.
std::string unreachable_message(const std::vector<NimbusAddress>& seeds, const std::string& cause,
                                bool tls = false);

}  // namespace rstorm::nimbus
