#include "nimbus/nimbus_client.hpp"

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSSLSocket.h>
#include <thrift/transport/TSocket.h>
#include <thrift/transport/TTransportException.h>

#include <charconv>
#include <thread>

#include "common/sha256.hpp"
#include "rstorm_thrift/Nimbus.h"

namespace rstorm::nimbus {

using apache::thrift::protocol::TBinaryProtocol;
using apache::thrift::transport::TFramedTransport;
using apache::thrift::transport::TSocket;

struct NimbusClient::Connection {
  NimbusAddress address;
  std::shared_ptr<apache::thrift::transport::TSSLSocketFactory> tls;  // outlives the socket
  std::shared_ptr<TFramedTransport> transport;
  std::unique_ptr<thrift::NimbusClient> client;
  // A call on it was answered: a later failure is the connection's end, not
  // a mismatch of TLS or address.
  bool answered = false;
  ~Connection() {
    try {
      if (transport) transport->close();
    } catch (...) {
    }
  }
};

namespace {

Result<std::unique_ptr<NimbusClient::Connection>> open_connection(
    const NimbusAddress& address, const NimbusClient::Options& options,
    const std::shared_ptr<apache::thrift::transport::TSSLSocketFactory>& tls);

}  // namespace

std::string unreachable_message(const std::vector<NimbusAddress>& seeds, const std::string& cause,
                                bool tls) {
  std::string where;
  for (const auto& s : seeds) where += (where.empty() ? "" : ", ") + s.to_string();
  const std::string explained = security::explain_tls_failure(cause, tls);
  if (explained != cause ||
      (tls && (cause.find("SSL") != std::string::npos || cause.find("TLS") != std::string::npos))) {
    return "nimbus at " + where + " and this client do not agree on TLS: " + explained;
  }
  return "cannot reach nimbus at " + where + " (" + cause +
         "): is rstorm-nimbus running? see `rstorm dev-cluster`";
}

namespace {

// The message of an exception nimbus threw that the call does not declare,
// as Thrift passes it on ("... NotLeaderException(msg=ZooKeeper at ...
// unreachable: ..., leader_host=, ...)"): the msg alone when there is one.
std::string server_message(const std::string& what) {
  const std::size_t at = what.find("(msg=");
  if (at == std::string::npos) return what;
  std::string msg = what.substr(at + 5);
  if (const std::size_t end = msg.rfind(", leader_host="); end != std::string::npos) {
    msg.resize(end);
  } else if (!msg.empty() && msg.back() == ')') {
    msg.pop_back();
  }
  return msg;
}

// Opens a connection to `address` and, with options.act_as, asks nimbus to
// take its calls for that principal.
Result<std::unique_ptr<NimbusClient::Connection>> open_connection(
    const NimbusAddress& address, const NimbusClient::Options& options,
    const std::shared_ptr<apache::thrift::transport::TSSLSocketFactory>& tls) {
  const std::chrono::milliseconds timeout = options.timeout;
  auto connection = std::make_unique<NimbusClient::Connection>();
  connection->address = address;
  connection->tls = tls;
  try {
    std::shared_ptr<TSocket> socket;
    if (tls) {
      socket = tls->createSocket(address.host, address.port);
    } else {
      socket = std::make_shared<TSocket>(address.host, address.port);
    }
    socket->setConnTimeout(static_cast<int>(timeout.count()));
    socket->setRecvTimeout(static_cast<int>(timeout.count()));
    socket->setSendTimeout(static_cast<int>(timeout.count()));
    connection->transport = std::make_shared<TFramedTransport>(socket);
    auto protocol = std::make_shared<TBinaryProtocol>(connection->transport);
    connection->client = std::make_unique<thrift::NimbusClient>(protocol);
    connection->transport->open();
    if (options.worker_token) connection->client->authenticateWorker(*options.worker_token);
    if (options.act_as) connection->client->actAs(*options.act_as);
  } catch (const thrift::AuthorizationException& e) {
    return Status(ErrorCode::kPermissionDenied, "nimbus at " + address.to_string() + ": " + e.msg);
  } catch (const std::exception& e) {
    return Status(ErrorCode::kUnavailable,
                  unreachable_message({address}, e.what(), tls != nullptr));
  }
  return connection;
}

}  // namespace

Result<NimbusAddress> parse_nimbus_seed(const std::string& entry, int default_port) {
  const auto malformed = [&](const std::string& why) {
    return Status(ErrorCode::kInvalidArgument, "nimbus.seeds entry '" + entry + "' " + why);
  };
  const std::size_t colon = entry.find(':');
  if (colon != std::string::npos && entry.find(':', colon + 1) != std::string::npos) {
    return malformed("is not host or host:port");
  }
  NimbusAddress address{entry.substr(0, colon), default_port};
  if (address.host.empty()) return malformed("has no host (want host or host:port)");
  if (colon == std::string::npos) return address;
  const std::string port = entry.substr(colon + 1);
  int value = 0;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || error != std::errc() || end != port.data() + port.size() || value < 1 ||
      value > 65535) {
    return malformed("has port '" + port + "'; want a number in 1..65535");
  }
  address.port = value;
  return address;
}

NimbusClient::Options NimbusClient::options_from_config(const Config& config) {
  Options options;
  options.seeds.clear();
  const bool use_tls = config.get_bool("nimbus.thrift.client.use.tls", false);
  if (use_tls) {
    options.tls = security::tls_files_from_config(config, "nimbus.thrift.tls.client");
    if (!options.tls) {
      throw ConfigError(
          "nimbus.thrift.client.use.tls is true but nimbus.thrift.tls.client.cert.path, "
          ".key.path and .ca.path are not set (the client's certificate, key and CA bundle)");
    }
  }
  const int port = use_tls ? static_cast<int>(config.get_int("nimbus.thrift.tls.port", 6067))
                           : static_cast<int>(config.get_int(keys::kNimbusThriftPort, 6627));
  for (const std::string& entry : config.get_string_list(keys::kNimbusSeeds)) {
    auto seed = parse_nimbus_seed(entry, port);
    if (!seed) throw ConfigError(seed.status().message());
    options.seeds.push_back(*seed);
  }
  if (options.seeds.empty()) options.seeds.push_back({"127.0.0.1", port});
  return options;
}

NimbusClient::Options NimbusClient::worker_options_from_config(const Config& config,
                                                               thrift::WorkerToken token) {
  if (!config.get_bool("nimbus.thrift.client.use.tls", false)) {
    Options options = options_from_config(config);
    options.worker_token = std::move(token);
    return options;
  }
  const std::string ca = config.get_string("nimbus.thrift.tls.client.ca.path", "");
  if (ca.empty()) {
    throw ConfigError(
        "nimbus.thrift.client.use.tls is true but nimbus.thrift.tls.client.ca.path is not set "
        "(the CA bundle a worker checks nimbus's certificate against)");
  }
  Options options;
  options.seeds.clear();
  const int port = static_cast<int>(config.get_int("nimbus.thrift.tls.port", 6067));
  for (const std::string& entry : config.get_string_list(keys::kNimbusSeeds)) {
    auto seed = parse_nimbus_seed(entry, port);
    if (!seed) throw ConfigError(seed.status().message());
    options.seeds.push_back(*seed);
  }
  if (options.seeds.empty()) options.seeds.push_back({"127.0.0.1", port});
  options.tls = security::TlsFiles{"", "", ca};
  options.worker_token = std::move(token);
  return options;
}

NimbusClient::NimbusClient(Options options,
                           std::shared_ptr<apache::thrift::transport::TSSLSocketFactory> tls,
                           std::unique_ptr<Connection> connection)
    : options_(std::move(options)), tls_(std::move(tls)), connection_(std::move(connection)) {}

NimbusClient::~NimbusClient() = default;

Result<std::unique_ptr<NimbusClient>> NimbusClient::connect(Options options) {
  if (options.seeds.empty()) return Status(ErrorCode::kInvalidArgument, "no nimbus seeds given");
  std::shared_ptr<apache::thrift::transport::TSSLSocketFactory> tls;
  if (options.tls) {
    auto factory = security::client_socket_factory(*options.tls);
    if (!factory) return factory.status();
    tls = std::move(*factory);
  }
  std::string causes;
  const auto note = [&](const std::string& cause) {
    causes += (causes.empty() ? "" : "; ") + cause;
  };
  // A nimbus that answered but could not lead us to a leader (a failover in
  // progress): used when no seed does better, since it still answers reads.
  std::unique_ptr<NimbusClient> fallback;
  for (const NimbusAddress& seed : options.seeds) {
    auto connection = open_connection(seed, options, tls);
    if (!connection) {
      if (connection.code() == ErrorCode::kPermissionDenied) return connection.status();
      note(connection.status().message());
      continue;
    }
    std::unique_ptr<NimbusClient> client(new NimbusClient(options, tls, std::move(*connection)));
    if (!options.follow_leader) return client;
    auto leader = client->leader();
    if (!leader) {
      // No leader elected (yet): this nimbus still answers reads.
      if (leader.code() == ErrorCode::kNotFound) return client;
      if (client->transport_failed_) {  // it did not answer at all (e.g. TLS refused)
        note(leader.status().message());
        continue;
      }
      note(seed.to_string() + ": " + leader.status().message());
      if (!fallback) {
        client->not_leader_reason_ = leader.status().message();
        fallback = std::move(client);
      }
      continue;
    }
    NimbusAddress at{leader->host, tls ? leader->tls_port : leader->port};
    if (at == seed) return client;
    if (tls && leader->tls_port <= 0) {
      note("the leader named by " + seed.to_string() + ", " + leader->host + ":" +
           std::to_string(leader->port) + ", serves no TLS port (nimbus.thrift.tls.port)");
      if (!fallback) {
        client->not_leader_reason_ = "the leader it names, " + leader->host + ":" +
                                     std::to_string(leader->port) + ", serves no TLS port";
        fallback = std::move(client);
      }
      continue;
    }
    if (Status s = client->reconnect(at); !s) {
      note("leader named by " + seed.to_string() + ": " + s.message());
      if (!fallback) {
        client->not_leader_reason_ = "the leader it names, " + at.to_string() + ", does not answer";
        fallback = std::move(client);
      }
      continue;
    }
    return client;
  }
  if (fallback) return fallback;
  return Status(ErrorCode::kUnavailable, causes);
}

NimbusAddress NimbusClient::address() const {
  std::lock_guard lock(mutex_);
  return connection_->address;
}

Status NimbusClient::reconnect(const NimbusAddress& address) {
  auto connection = open_connection(address, options_, tls_);
  if (!connection) return connection.status();
  std::lock_guard lock(mutex_);
  connection_ = std::move(*connection);
  return Status::ok();
}

template <typename F>
Status NimbusClient::invoke(const char* what, F&& call, bool follow) {
  constexpr int kLeaderlessRetries = 50;  // 200 ms apart
  int leaderless_retries = 0;
  for (;;) {
    std::optional<NimbusAddress> redirect;
    {
      std::lock_guard lock(mutex_);
      try {
        transport_failed_ = false;
        call(*connection_->client);
        connection_->answered = true;
        return Status::ok();
      } catch (const thrift::NotFoundException& e) {
        return Status(ErrorCode::kNotFound, e.msg);
      } catch (const thrift::AlreadyExistsException& e) {
        return Status(ErrorCode::kAlreadyExists, e.msg);
      } catch (const thrift::InvalidTopologyException& e) {
        return Status(ErrorCode::kInvalidArgument, e.msg);
      } catch (const thrift::IllegalStateException& e) {
        return Status(ErrorCode::kInvalidArgument, e.msg);
      } catch (const thrift::CorruptBlobException& e) {
        return Status(ErrorCode::kCorruption, e.msg);
      } catch (const thrift::AuthorizationException& e) {
        return Status(ErrorCode::kPermissionDenied, e.msg);
      } catch (const thrift::NotLeaderException& e) {
        if (!follow || !options_.follow_leader) return Status(ErrorCode::kUnavailable, e.msg);
        if (e.leader_host.empty()) {
          // An election is in progress (nimbus starting, or the leader just
          // died): wait for its outcome a bounded time.
          if (++leaderless_retries > kLeaderlessRetries) {
            return Status(ErrorCode::kUnavailable, e.msg + " and no leader was elected within " +
                                                       std::to_string(kLeaderlessRetries / 5) +
                                                       " s");
          }
          redirect = connection_->address;
        } else if (tls_) {
          if (e.leader_tls_port <= 0) {
            return Status(ErrorCode::kUnavailable,
                          e.msg + ", which serves no TLS port (nimbus.thrift.tls.port)");
          }
          redirect = NimbusAddress{e.leader_host, e.leader_tls_port};
        } else {
          redirect = NimbusAddress{e.leader_host, e.leader_port};
        }
      } catch (const apache::thrift::TApplicationException& e) {
        // Nimbus answered, with an error the call declares no exception
        // for (a read while its ZooKeeper is unreachable, say): the
        // connection is fine, and "is rstorm-nimbus running?" would mislead.
        connection_->answered = true;
        return Status(ErrorCode::kUnavailable, "nimbus at " + connection_->address.to_string() +
                                                   " cannot answer: " + server_message(e.what()));
      } catch (const std::exception& e) {
        // The connection is in an unknown state; the next call reconnects.
        transport_failed_ = true;
        const NimbusAddress at = connection_->address;
        const bool answered = connection_->answered;
        // The same nimbus first; when it is gone (a failover), the first
        // other seed that answers (a mutating call is then sent on to the
        // leader it names).
        auto fresh = open_connection(at, options_, tls_);
        const std::string again = fresh ? std::string() : fresh.status().message();
        if (fresh) {
          connection_ = std::move(*fresh);
        } else {
          for (const NimbusAddress& seed : options_.seeds) {
            if (seed == at) continue;
            auto other = open_connection(seed, options_, tls_);
            if (other) {
              connection_ = std::move(*other);
              break;
            }
          }
        }
        // A connection that had answered ended: no TLS or address advice,
        // but whether the same nimbus takes a new one (when not, why: e.g.
        // "cannot reach nimbus at ...: is rstorm-nimbus running?").
        // A connection that never answered: the message names nimbus and
        // the cause, and the call's RPC name would only puzzle the reader.
        if (!answered) {
          return Status(ErrorCode::kUnavailable,
                        unreachable_message({at}, e.what(), tls_ != nullptr));
        }
        return Status(ErrorCode::kUnavailable,
                      std::string(what) + ": the connection to nimbus at " + at.to_string() +
                          ", which had answered, ended during the call (" + e.what() + "); " +
                          (again.empty() ? std::string("connected again")
                                         : "connecting again: " + again));
      }
    }
    if (leaderless_retries > 0 && *redirect == address()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    if (Status s = reconnect(*redirect); !s) {
      // The leader nimbus answered with is gone (killed, its ZooKeeper
      // session not yet expired): a failover, not a nimbus to start.
      return Status(ErrorCode::kUnavailable,
                    "the leader " + redirect->to_string() + " named by " +
                        address().to_string() + " does not answer (" + s.message() +
                        "); if it died, another nimbus leads once its ZooKeeper session expires "
                        "(storm.zookeeper.session.timeout): try again then");
    }
    return invoke(what, std::forward<F>(call), false);
  }
}

Result<std::string> NimbusClient::submit_topology(
    const std::string& name, const thrift::TopologyStructure& structure,
    const std::map<std::string, thrift::ConfigEntry>& config, const std::string& code_blob_key) {
  std::string id;
  Status s = invoke("submitTopology", [&](thrift::NimbusClient& c) {
    c.submitTopology(id, name, structure, config, code_blob_key);
  });
  if (!s) return s;
  return id;
}

Status NimbusClient::kill_topology(const std::string& name, std::optional<int> wait_secs) {
  thrift::KillOptions options;
  if (wait_secs) options.__set_wait_secs(*wait_secs);
  return invoke("killTopology", [&](thrift::NimbusClient& c) { c.killTopology(name, options); });
}

Status NimbusClient::activate(const std::string& name) {
  return invoke("activate", [&](thrift::NimbusClient& c) { c.activate(name); });
}

Status NimbusClient::deactivate(const std::string& name) {
  return invoke("deactivate", [&](thrift::NimbusClient& c) { c.deactivate(name); });
}

Status NimbusClient::rebalance(const std::string& name, const thrift::RebalanceOptions& options) {
  return invoke("rebalance", [&](thrift::NimbusClient& c) { c.rebalance(name, options); });
}

Result<thrift::ClusterSummary> NimbusClient::cluster_info() {
  thrift::ClusterSummary out;
  Status s = invoke("getClusterInfo", [&](thrift::NimbusClient& c) { c.getClusterInfo(out); });
  if (!s) return s;
  return out;
}

Result<thrift::TopologyInfo> NimbusClient::topology_info(const std::string& id) {
  thrift::TopologyInfo out;
  Status s =
      invoke("getTopologyInfo", [&](thrift::NimbusClient& c) { c.getTopologyInfo(out, id); });
  if (!s) return s;
  return out;
}

Result<thrift::TopologyPlacement> NimbusClient::placement(const std::string& id) {
  thrift::TopologyPlacement out;
  Status s = invoke("getPlacement", [&](thrift::NimbusClient& c) { c.getPlacement(out, id); });
  if (!s) return s;
  return out;
}

Result<thrift::NimbusSummary> NimbusClient::leader() {
  thrift::NimbusSummary out;
  Status s = invoke(
      "getLeader", [&](thrift::NimbusClient& c) { c.getLeader(out); }, false);
  if (!s) return s;
  return out;
}

Result<thrift::CheckpointState> NimbusClient::checkpoints(const std::string& topology_id) {
  thrift::CheckpointState out;
  Status s = invoke("getCheckpoints",
                    [&](thrift::NimbusClient& c) { c.getCheckpoints(out, topology_id); });
  if (!s) return s;
  return out;
}

Result<thrift::CheckpointState> NimbusClient::complete_checkpoint(
    const std::string& topology_id, const thrift::CheckpointInfo& checkpoint, int retained) {
  thrift::CheckpointState out;
  Status s = invoke("completeCheckpoint", [&](thrift::NimbusClient& c) {
    c.completeCheckpoint(out, topology_id, checkpoint, retained);
  });
  if (!s) return s;
  return out;
}

Result<std::int64_t> NimbusClient::advance_checkpoint_epoch(const std::string& topology_id) {
  std::int64_t out = 0;
  Status s = invoke("advanceCheckpointEpoch",
                    [&](thrift::NimbusClient& c) { out = c.advanceCheckpointEpoch(topology_id); });
  if (!s) return s;
  return out;
}

Status NimbusClient::supervisor_heartbeat(const thrift::SupervisorHeartbeat& heartbeat) {
  return invoke("supervisorHeartbeat",
                [&](thrift::NimbusClient& c) { c.supervisorHeartbeat(heartbeat); });
}

Result<std::string> NimbusClient::begin_upload(const std::string& blob_key) {
  std::string session;
  Status s = invoke("beginFileUpload",
                    [&](thrift::NimbusClient& c) { c.beginFileUpload(session, blob_key); });
  if (!s) return s;
  return session;
}

Status NimbusClient::upload_chunk(const std::string& session, const std::string& chunk) {
  // No leader following: an upload session lives on one nimbus.
  return invoke(
      "uploadChunk", [&](thrift::NimbusClient& c) { c.uploadChunk(session, chunk); }, false);
}

Result<thrift::BlobSummary> NimbusClient::finish_upload(const std::string& session,
                                                        std::int64_t size,
                                                        const std::string& sha256) {
  thrift::BlobSummary out;
  Status s = invoke(
      "finishFileUpload",
      [&](thrift::NimbusClient& c) { c.finishFileUpload(out, session, size, sha256); }, false);
  if (!s) return s;
  return out;
}

Result<thrift::BlobSummary> NimbusClient::upload_blob(const std::string& blob_key,
                                                      const std::string& bytes,
                                                      std::size_t chunk_bytes) {
  auto session = begin_upload(blob_key);
  if (!session) return session.status();
  for (std::size_t offset = 0; offset < bytes.size(); offset += chunk_bytes) {
    Status s = upload_chunk(*session, bytes.substr(offset, chunk_bytes));
    if (!s) return s;
  }
  return finish_upload(*session, static_cast<std::int64_t>(bytes.size()), Sha256::hex_of(bytes));
}

Result<std::string> NimbusClient::download_blob(const std::string& blob_key) {
  thrift::DownloadHandle handle;
  Status s = invoke(
      "beginFileDownload", [&](thrift::NimbusClient& c) { c.beginFileDownload(handle, blob_key); },
      false);
  if (!s) return s;
  std::string bytes;
  Sha256 hash;
  for (;;) {
    std::string chunk;
    s = invoke(
        "downloadChunk", [&](thrift::NimbusClient& c) { c.downloadChunk(chunk, handle.session); },
        false);
    if (!s) return s;
    if (chunk.empty()) break;
    hash.update(chunk);
    bytes += chunk;
    if (bytes.size() > static_cast<std::size_t>(handle.blob.size)) break;
  }
  const std::string digest = hash.hex_digest();
  if (static_cast<std::int64_t>(bytes.size()) != handle.blob.size || digest != handle.blob.sha256) {
    return Status(ErrorCode::kCorruption,
                  "blob '" + blob_key + "' downloaded as " + std::to_string(bytes.size()) +
                      " bytes with SHA-256 " + digest + "; nimbus declares " +
                      std::to_string(handle.blob.size) + " bytes with SHA-256 " +
                      handle.blob.sha256);
  }
  return bytes;
}

std::string checkpoint_key_prefix(const std::string& topology_id) {
  return topology_id + ".checkpoint-";
}

std::string checkpoint_part_key(const std::string& topology_id, std::int64_t checkpoint,
                                std::int64_t epoch, std::int32_t task) {
  return checkpoint_key_prefix(topology_id) + std::to_string(checkpoint) + "-e" +
         std::to_string(epoch) + "-task-" + std::to_string(task);
}

std::optional<CheckpointPartName> parse_checkpoint_part_key(std::string_view key,
                                                            std::string_view prefix) {
  if (!key.starts_with(prefix)) return std::nullopt;
  key.remove_prefix(prefix.size());
  CheckpointPartName out;
  auto number = [&key](auto& value, std::string_view then) {
    const char* end = key.data() + key.size();
    auto [p, ec] = std::from_chars(key.data(), end, value);
    if (ec != std::errc() || p == key.data()) return false;
    key.remove_prefix(static_cast<std::size_t>(p - key.data()));
    if (!key.starts_with(then)) return false;
    key.remove_prefix(then.size());
    return true;
  };
  if (!number(out.checkpoint, "-e") || !number(out.epoch, "-task-") || !number(out.task, "") ||
      !key.empty()) {
    return std::nullopt;
  }
  return out;
}

}  // namespace rstorm::nimbus
