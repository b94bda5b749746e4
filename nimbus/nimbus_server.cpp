#include "nimbus/nimbus_server.hpp"

#include <thrift/TProcessor.h>
#include <thrift/Thrift.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/server/TThreadedServer.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSSLServerSocket.h>
#include <thrift/transport/TServerSocket.h>
#include <thrift/transport/TSocket.h>

#include <algorithm>
#include <future>
#include <mutex>
#include <optional>
#include <set>

#include "nimbus/nimbus_client.hpp"
#include "rstorm_thrift/Nimbus.h"

namespace rstorm::nimbus {
namespace {

// Maps a Status onto the exceptions the IDL declares for a call.
[[noreturn]] void raise(const Status& s, Nimbus& nimbus, bool illegal_state = false) {
  switch (s.code()) {
    case ErrorCode::kNotFound: {
      thrift::NotFoundException e;
      e.msg = s.message();
      throw e;
    }
    case ErrorCode::kAlreadyExists: {
      thrift::AlreadyExistsException e;
      e.msg = s.message();
      throw e;
    }
    case ErrorCode::kInvalidArgument: {
      if (illegal_state) {
        thrift::IllegalStateException e;
        e.msg = s.message();
        throw e;
      }
      thrift::InvalidTopologyException e;
      e.msg = s.message();
      throw e;
    }
    case ErrorCode::kCorruption: {
      thrift::CorruptBlobException e;
      e.msg = s.message();
      throw e;
    }
    case ErrorCode::kPermissionDenied: {
      thrift::AuthorizationException e;
      e.msg = s.message();
      throw e;
    }
    case ErrorCode::kUnavailable: {
      thrift::NotLeaderException e;
      e.msg = s.message();
      if (auto leader = nimbus.leader()) {
        e.leader_host = leader->host;
        e.leader_port = leader->port;
        if (leader->tls_port > 0) e.__set_leader_tls_port(leader->tls_port);
        e.msg += "; the leader is " + leader->host + ":" + std::to_string(leader->port);
      }
      throw e;
    }
    default:
      throw apache::thrift::TApplicationException(
          apache::thrift::TApplicationException::INTERNAL_ERROR, s.to_string());
  }
}

template <typename T>
T unwrap(Result<T> result, Nimbus& nimbus, bool illegal_state = false) {
  if (!result) raise(result.status(), nimbus, illegal_state);
  return std::move(result).value();
}

void check(const Status& s, Nimbus& nimbus, bool illegal_state = false) {
  if (!s) raise(s, nimbus, illegal_state);
}

using security::Operation;

// One connection's handler: it knows who is calling (the principal of the
// connection's certificate, mapped to a local user; nobody on plaintext) and
// checks every call with the authorizer before Nimbus sees it.
class Handler final : public thrift::NimbusIf {
 public:
  Handler(Nimbus& nimbus, std::shared_ptr<const security::Authorizer> authorizer,
          const security::PrincipalMapper& principals,
          std::shared_ptr<apache::thrift::transport::TTransport> transport, const Logger& logger)
      : n_(nimbus),
        authorizer_(std::move(authorizer)),
        principals_(principals),
        transport_(std::move(transport)),
        logger_(logger) {}

  void submitTopology(std::string& out, const std::string& name,
                      const thrift::TopologyStructure& structure,
                      const std::map<std::string, thrift::ConfigEntry>& config,
                      const std::string& code_blob_key) override {
    allow(Operation::kSubmit, nullptr, name);
    out = unwrap(n_.submit(name, structure, config, code_blob_key, user()), n_);
  }
  void killTopology(const std::string& name, const thrift::KillOptions& options) override {
    allow_on(Operation::kKill, name);
    check(n_.kill(name,
                  options.__isset.wait_secs ? std::optional<int>(options.wait_secs) : std::nullopt),
          n_);
  }
  void activate(const std::string& name) override {
    allow_on(Operation::kActivate, name);
    check(n_.activate(name), n_, true);
  }
  void deactivate(const std::string& name) override {
    allow_on(Operation::kDeactivate, name);
    check(n_.deactivate(name), n_, true);
  }
  void rebalance(const std::string& name, const thrift::RebalanceOptions& options) override {
    allow_on(Operation::kRebalance, name);
    check(n_.rebalance(name, options), n_);
  }
  void getClusterInfo(thrift::ClusterSummary& out) override {
    allow(Operation::kList, nullptr, "");
    out = unwrap(n_.cluster_info(), n_);
  }
  void getTopologyInfo(thrift::TopologyInfo& out, const std::string& id) override {
    allow_on(Operation::kDescribe, id);
    out = unwrap(n_.topology_info(id), n_);
    // The data-plane secret and a worker token go only to supervisors (and
    // admins) over TLS.
    if (worker_ || !authorizer_->may_read_secrets(user())) {
      out.secret.clear();
      out.__isset.secret = false;
    } else if (tls_) {
      out.__set_worker_token(unwrap(n_.worker_token(out.summary.id), n_));
    }
  }
  void getPlacement(thrift::TopologyPlacement& out, const std::string& id) override {
    allow_on(Operation::kDescribe, id);
    out = unwrap(n_.placement(id), n_);
  }
  void beginFileUpload(std::string& out, const std::string& blob_key) override {
    gate();
    if (worker_ && blob_key.starts_with(checkpoint_key_prefix(worker_->topology_id))) {
      // A worker stores its topology's checkpoint parts.
      out = unwrap(n_.begin_upload(blob_key), n_);
      own(out);
      return;
    }
    allow(Operation::kUpload, nullptr, blob_key);
    if (authorizer_->enabled()) {
      if (blob_key.find(".checkpoint-") != std::string::npos) {
        deny(
            "blob keys with '.checkpoint-' are checkpoint parts, written by a topology's "
            "workers only");
      }
      // Code a topology runs is never replaced, and nimbus's own blobs are its own.
      if (auto acl = n_.blob_acl(blob_key)) {
        deny("blob '" + blob_key + "' is the code of running topology '" + acl->name +
             "' and cannot be replaced; upload under a new key");
      }
      if (blob_key.ends_with(".topology")) {
        deny("blob keys ending in '.topology' are nimbus's own");
      }
    }
    out = unwrap(n_.begin_upload(blob_key), n_);
    own(out);
  }
  void uploadChunk(const std::string& session, const std::string& chunk) override {
    require_own(session);
    check(n_.upload_chunk(session, chunk), n_);
  }
  void finishFileUpload(thrift::BlobSummary& out, const std::string& session, int64_t size,
                        const std::string& sha256) override {
    require_own(session);
    out = unwrap(n_.finish_upload(session, size, sha256), n_);
  }
  void beginFileDownload(thrift::DownloadHandle& out, const std::string& blob_key) override {
    gate();
    const auto acl = authorizer_->enabled() || worker_ ? n_.blob_acl(blob_key) : std::nullopt;
    allow(Operation::kDownload, acl ? &*acl : nullptr, "blob '" + blob_key + "'");
    out = unwrap(n_.begin_download(blob_key), n_);
    own(out.session);
  }
  void downloadChunk(std::string& out, const std::string& session) override {
    require_own(session);
    out = unwrap(n_.download_chunk(session), n_);
  }
  void actAs(const std::string& principal) override {
    gate();
    if (worker_) deny("a worker may not act for another user");
    if (principal.empty()) {
      if (acting_for_) logger_.info("{} acts as itself again", who());
      acting_for_.reset();
      return;
    }
    const std::string target = principals_.to_local(principal);
    if (Status s = authorizer_->check_impersonation(*user_, target, peer_address()); !s) {
      deny(s.message());
    }
    if (target == *user_) {
      acting_for_.reset();
      return;
    }
    acting_for_ = target;
    logger_.info("{} acts for user '{}'{} from now on", who_self(), target,
                 principal != target ? " (principal '" + principal + "')" : std::string());
  }
  void authenticateWorker(const thrift::WorkerToken& token) override {
    own_user();
    if (!tls_) {
      deny(
          "worker tokens are accepted on nimbus's TLS port only (nimbus.thrift.tls.port): "
          "on this port the token would travel in the clear");
    }
    auto info = n_.verify_worker_token(token);
    if (!info) deny(info.status().message());
    worker_ = std::move(info).value();
    logger_.info("{} authenticated with a worker token (key version {})", who(),
                 worker_->key_version);
  }
  void getCheckpoints(thrift::CheckpointState& out, const std::string& topology_id) override {
    allow_on(Operation::kDescribe, topology_id);
    out = unwrap(n_.checkpoints(topology_id), n_);
  }
  void completeCheckpoint(thrift::CheckpointState& out, const std::string& topology_id,
                          const thrift::CheckpointInfo& checkpoint, int32_t retained) override {
    allow_checkpoint_writer(topology_id, "record a checkpoint");
    out = unwrap(n_.complete_checkpoint(topology_id, checkpoint, retained), n_, true);
  }
  int64_t advanceCheckpointEpoch(const std::string& topology_id) override {
    allow_checkpoint_writer(topology_id, "move the recovery epoch");
    return unwrap(n_.advance_checkpoint_epoch(topology_id), n_);
  }
  void getLeader(thrift::NimbusSummary& out) override { out = unwrap(n_.leader(), n_); }
  void supervisorHeartbeat(const thrift::SupervisorHeartbeat& heartbeat) override {
    allow(Operation::kSupervisorHeartbeat, nullptr, "supervisor " + heartbeat.info.id);
    check(n_.supervisor_heartbeat(heartbeat), n_);
  }

 private:
  // The user the calls are made for: the one actAs named, else the
  // connection's own.
  const std::string& user() {
    own_user();
    return acting_for_ ? *acting_for_ : *user_;
  }
  // The connection's own local user; empty on a plaintext connection or a
  // TLS one without a certificate. Known once the TLS handshake is done,
  // which precedes the first call.
  void own_user() {
    if (!user_) {
      const auto principal = security::peer_principal(transport_);
      tls_ = principal.has_value();
      principal_ = principal.value_or("");
      user_ = principal_.empty() ? std::string() : principals_.to_local(principal_);
    }
  }
  // A TLS connection without a certificate is served only after a worker
  // token (and getLeader, which every client asks first).
  void gate() {
    own_user();
    if (tls_ && principal_.empty() && !worker_) {
      deny(
          "no client certificate: nimbus's TLS port serves clients with a certificate signed "
          "by its CA (nimbus.thrift.tls.client.cert.path), and workers with their topology's "
          "worker token");
    }
  }
  // A worker may describe its own topology and download its code, nothing else.
  void allow_worker(Operation op, const security::TopologyAcl* topology,
                    const std::string& target) {
    if ((op == Operation::kDescribe || op == Operation::kDownload) && topology != nullptr &&
        topology->id == worker_->topology_id) {
      return;
    }
    std::string what(security::operation_name(op));
    if (topology != nullptr) {
      what += " topology '" + topology->name + "'";
    } else if (!target.empty()) {
      what += " " + target;
    }
    deny("a worker of topology '" + worker_->topology_id + "' may not " + what);
  }
  // Checkpoints are recorded by the topology's own workers; in secure mode
  // nobody else (without an authorizer identities are not checked).
  void allow_checkpoint_writer(const std::string& topology_id, const std::string& what) {
    gate();
    if (worker_) {
      if (topology_id == worker_->topology_id) return;
      deny("a worker of topology '" + worker_->topology_id + "' may not " + what + " of '" +
           topology_id + "'");
    }
    if (authorizer_->enabled()) {
      deny("only the workers of topology '" + topology_id + "' may " + what + " (" + who() + ")");
    }
  }
  std::string peer_address() const {
    auto socket = std::dynamic_pointer_cast<apache::thrift::transport::TSocket>(transport_);
    return socket ? socket->getPeerAddress() : std::string("?");
  }
  std::string peer() const {
    auto socket = std::dynamic_pointer_cast<apache::thrift::transport::TSocket>(transport_);
    return socket ? socket->getPeerAddress() + ":" + std::to_string(socket->getPeerPort())
                  : std::string("?");
  }
  // The connection's own identity, e.g. "user 'ui' at 127.0.0.1:5120".
  std::string who_self() {
    own_user();
    const std::string& u = *user_;
    if (worker_) {
      return "worker of topology '" + worker_->topology_id + "' (user '" + worker_->user +
             "') at " + peer();
    }
    if (u.empty()) return "unauthenticated client at " + peer();
    return "user '" + u + "'" + (principal_ != u ? " (principal '" + principal_ + "')" : "") +
           " at " + peer();
  }
  // Who the calls are made for, and through whom, e.g.
  // "user 'alice' (through user 'ui' at 127.0.0.1:5120)".
  std::string who() {
    if (!acting_for_) return who_self();
    return "user '" + *acting_for_ + "' (through " + who_self() + ")";
  }
  [[noreturn]] void deny(const std::string& message) {
    logger_.warn("denied {}: {}", who(), message);
    thrift::AuthorizationException e;
    e.msg = message;
    throw e;
  }
  void allow(Operation op, const security::TopologyAcl* topology, const std::string& target) {
    gate();
    if (worker_) return allow_worker(op, topology, target);
    if (!authorizer_->enabled()) return;
    Status s = authorizer_->check(user(), op, topology);
    if (s) return;
    if (topology == nullptr && !target.empty() && op != Operation::kList) {
      deny(s.message() + " [" + target + "]");
    }
    deny(s.message());
  }
  // A per-topology operation: the topology's ACL, then the check. An unknown
  // topology is answered as such (after the caller proves it may list).
  void allow_on(Operation op, const std::string& id_or_name) {
    gate();
    if (!authorizer_->enabled() && !worker_) return;
    auto acl = n_.topology_acl(id_or_name);
    if (!acl) {
      allow(Operation::kList, nullptr, "");
      raise(acl.status(), n_);
    }
    allow(op, &*acl, "");
  }
  void own(const std::string& session) {
    if (authorizer_->enabled() || worker_) sessions_.insert(session);
  }
  void require_own(const std::string& session) {
    gate();
    if ((authorizer_->enabled() || worker_) && !sessions_.contains(session)) {
      deny("session '" + session + "' was not opened on this connection");
    }
  }

  Nimbus& n_;
  const std::shared_ptr<const security::Authorizer> authorizer_;
  const security::PrincipalMapper& principals_;
  const std::shared_ptr<apache::thrift::transport::TTransport> transport_;
  const Logger& logger_;
  std::optional<std::string> user_;  // the connection's own
  std::string principal_;
  std::optional<std::string> acting_for_;  // set by actAs
  bool tls_ = false;                       // known with user_
  std::optional<thrift::WorkerTokenInfo> worker_;  // set by authenticateWorker
  std::set<std::string> sessions_;
};

// One Handler per accepted connection, so that each knows its caller.
class HandlerFactory final : public apache::thrift::TProcessorFactory {
 public:
  HandlerFactory(Nimbus& nimbus, std::shared_ptr<const security::Authorizer> authorizer,
                 const security::PrincipalMapper& principals, const Logger& logger)
      : nimbus_(nimbus),
        authorizer_(std::move(authorizer)),
        principals_(principals),
        logger_(logger) {}
  std::shared_ptr<apache::thrift::TProcessor> getProcessor(
      const apache::thrift::TConnectionInfo& info) override {
    return std::make_shared<thrift::NimbusProcessor>(
        std::make_shared<Handler>(nimbus_, authorizer_, principals_, info.transport, logger_));
  }

 private:
  Nimbus& nimbus_;
  const std::shared_ptr<const security::Authorizer> authorizer_;
  const security::PrincipalMapper& principals_;
  const Logger& logger_;
};

// Tells start() when the socket listens.
// Tells start() when the socket listens, or why it could not.
class ReadySignal final : public apache::thrift::server::TServerEventHandler {
 public:
  void preServe() override { settle(""); }
  // False when start() was already told (the server failed after listening).
  bool fail(const std::string& why) { return settle(why); }
  std::future<std::string> future() { return ready_.get_future(); }

 private:
  bool settle(const std::string& error) {
    std::lock_guard lock(mutex_);
    if (settled_) return false;
    settled_ = true;
    ready_.set_value(error);
    return true;
  }
  std::mutex mutex_;
  bool settled_ = false;
  std::promise<std::string> ready_;
};

}  // namespace

namespace {

// Thrift counts every byte a transport reads against its message size
// limit and restores the allowance only on flush(). A server connection's
// input transport never flushes (its replies go out through another), so a
// long-lived connection (a worker uploading checkpoint parts) was closed
// once it had read 100 MiB in all. The allowance is restored after each
// message read, which limits each message, as intended, not the connection.
class MessageFramedTransport final : public apache::thrift::transport::TFramedTransport {
 public:
  using TFramedTransport::TFramedTransport;
  uint32_t readEnd() override {
    const uint32_t read = TFramedTransport::readEnd();
    resetConsumedMessageSize();
    return read;
  }
};

class FramedTransportFactory final : public apache::thrift::transport::TTransportFactory {
 public:
  explicit FramedTransportFactory(int max_frame_bytes)
      : config_(std::make_shared<apache::thrift::TConfiguration>(
            std::max(max_frame_bytes, static_cast<int>(apache::thrift::TConfiguration::DEFAULT_MAX_MESSAGE_SIZE)),
            max_frame_bytes)) {}
  std::shared_ptr<apache::thrift::transport::TTransport> getTransport(
      std::shared_ptr<apache::thrift::transport::TTransport> transport) override {
    return std::make_shared<MessageFramedTransport>(std::move(transport), config_);
  }

 private:
  std::shared_ptr<apache::thrift::TConfiguration> config_;
};

}  // namespace

namespace {

// Thrift reports a connection that ended badly (a refused TLS handshake, a
// client that vanished) on its global output; those lines go to the first
// server's log, without the echoes of the same event from the socket's close.
std::optional<Logger> thrift_logger;
std::once_flag thrift_output_once;

void thrift_output(const char* text) { log_thrift_output(*thrift_logger, text); }

}  // namespace

void log_thrift_output(const Logger& logger, std::string_view line) {
  if (line.find("SSL_shutdown") != std::string_view::npos ||
      line.find("close failed") != std::string_view::npos) {
    return;
  }
  constexpr std::string_view kDied = "TConnectedClient died: ";
  if (auto at = line.find(kDied); at != std::string_view::npos) {
    const std::string_view what = line.substr(at + kDied.size());
    if (what.find("SSL_accept: unexpected eof") != std::string_view::npos) {
      logger.debug("connection closed before its TLS handshake (a port check?): {}", what);
      return;
    }
    logger.warn("connection ended: {}", what);
    return;
  }
  logger.info("thrift: {}", line);
}

NimbusServer::NimbusServer(Nimbus& nimbus, Options options, Logger logger)
    : nimbus_(nimbus),
      options_(std::move(options)),
      logger_(std::move(logger)),
      authorizer_(std::make_shared<security::Authorizer>(options_.authorizer)) {}

NimbusServer::~NimbusServer() { stop(); }

Status NimbusServer::start() {
  std::call_once(thrift_output_once, [&] {
    thrift_logger = logger_;
    apache::thrift::GlobalOutput.setOutputFunction(thrift_output);
  });
  if (options_.plaintext) {
    if (Status s = listen(plain_, false); !s) return s;
  }
  if (options_.tls) {
    if (Status s = listen(tls_, true); !s) {
      stop();
      return s;
    }
  }
  if (!options_.plaintext && !options_.tls) {
    return Status(
        ErrorCode::kInvalidArgument,
        "nimbus serves neither plaintext nor TLS: nimbus.thrift.tls.server.only is "
        "true but nimbus.thrift.tls.server.cert.path, .key.path and .ca.path are not set");
  }
  if (authorizer_->enabled() && plain_.port != 0) {
    logger_.warn(
        "the plaintext port {} is open with an authorizer: its clients are "
        "unauthenticated and may only ask for the leader",
        plain_.port);
  }
  return Status::ok();
}

Status NimbusServer::listen(Listener& listener, bool tls) {
  using namespace apache::thrift;
  const int port = tls ? options_.tls_port : options_.port;
  std::shared_ptr<transport::TServerSocket> socket;
  if (tls) {
    // Workers present a worker token instead of a certificate (the handler
    // refuses everything else to a client without one).
    auto factory = security::server_socket_factory(*options_.tls, false);
    if (!factory) return factory.status();
    socket = std::make_shared<transport::TSSLServerSocket>(options_.host, port, *factory);
  } else {
    socket = std::make_shared<transport::TServerSocket>(options_.host, port);
  }
  auto processors =
      std::make_shared<HandlerFactory>(nimbus_, authorizer_, options_.principals, logger_);
  // Frames over max_frame_bytes are refused before they are buffered
  // (Thrift's own default is 16384000 bytes; ours is the configured one).
  auto transports = std::make_shared<FramedTransportFactory>(options_.max_frame_bytes);
  auto protocols = std::make_shared<protocol::TBinaryProtocolFactory>(
      options_.max_frame_bytes, options_.max_container_elements, false, true);
  listener.server =
      std::make_shared<server::TThreadedServer>(processors, socket, transports, protocols);
  auto ready = std::make_shared<ReadySignal>();
  auto listening = ready->future();
  listener.server->setServerEventHandler(ready);
  listener.thread = std::thread([this, ready, server = listener.server] {
    try {
      server->serve();
    } catch (const std::exception& e) {
      if (!ready->fail(e.what())) logger_.error("thrift server stopped: {}", e.what());
    }
  });
  const std::string error = listening.get();
  if (!error.empty()) {
    listener.thread.join();
    listener.server.reset();
    return Status(ErrorCode::kUnavailable, std::string("nimbus cannot listen") +
                                               (tls ? " with TLS" : "") + " on " + options_.host +
                                               ":" + std::to_string(port) + ": " + error);
  }
  listener.port = socket->getPort();
  logger_.info("nimbus listening on {}:{}{}", options_.host, listener.port,
               tls ? " (mutual TLS)" : "");
  return Status::ok();
}

void NimbusServer::stop(Listener& listener) {
  if (!listener.server) return;
  listener.server->stop();
  if (listener.thread.joinable()) listener.thread.join();
  listener.server.reset();
}

void NimbusServer::stop() {
  stop(tls_);
  stop(plain_);
}

}  // namespace rstorm::nimbus
