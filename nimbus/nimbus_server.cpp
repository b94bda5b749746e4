#include "nimbus/nimbus_server.hpp"

#include <algorithm>

#include <thrift/TProcessor.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/server/TThreadedServer.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TServerSocket.h>

#include <future>

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
    case ErrorCode::kUnavailable: {
      thrift::NotLeaderException e;
      e.msg = s.message();
      if (auto leader = nimbus.leader()) {
        e.leader_host = leader->host;
        e.leader_port = leader->port;
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

class Handler final : public thrift::NimbusIf {
 public:
  explicit Handler(Nimbus& nimbus) : n_(nimbus) {}

  void submitTopology(std::string& out, const std::string& name,
                      const thrift::TopologyStructure& structure,
                      const std::map<std::string, thrift::ConfigEntry>& config,
                      const std::string& code_blob_key) override {
    out = unwrap(n_.submit(name, structure, config, code_blob_key), n_);
  }
  void killTopology(const std::string& name, const thrift::KillOptions& options) override {
    check(n_.kill(name,
                  options.__isset.wait_secs ? std::optional<int>(options.wait_secs) : std::nullopt),
          n_);
  }
  void activate(const std::string& name) override { check(n_.activate(name), n_, true); }
  void deactivate(const std::string& name) override { check(n_.deactivate(name), n_, true); }
  void rebalance(const std::string& name, const thrift::RebalanceOptions& options) override {
    check(n_.rebalance(name, options), n_);
  }
  void getClusterInfo(thrift::ClusterSummary& out) override { out = unwrap(n_.cluster_info(), n_); }
  void getTopologyInfo(thrift::TopologyInfo& out, const std::string& id) override {
    out = unwrap(n_.topology_info(id), n_);
  }
  void getPlacement(thrift::TopologyPlacement& out, const std::string& id) override {
    out = unwrap(n_.placement(id), n_);
  }
  void beginFileUpload(std::string& out, const std::string& blob_key) override {
    out = unwrap(n_.begin_upload(blob_key), n_);
  }
  void uploadChunk(const std::string& session, const std::string& chunk) override {
    check(n_.upload_chunk(session, chunk), n_);
  }
  void finishFileUpload(thrift::BlobSummary& out, const std::string& session, int64_t size,
                        const std::string& sha256) override {
    out = unwrap(n_.finish_upload(session, size, sha256), n_);
  }
  void beginFileDownload(thrift::DownloadHandle& out, const std::string& blob_key) override {
    out = unwrap(n_.begin_download(blob_key), n_);
  }
  void downloadChunk(std::string& out, const std::string& session) override {
    out = unwrap(n_.download_chunk(session), n_);
  }
  void getLeader(thrift::NimbusSummary& out) override { out = unwrap(n_.leader(), n_); }
  void supervisorHeartbeat(const thrift::SupervisorHeartbeat& heartbeat) override {
    check(n_.supervisor_heartbeat(heartbeat), n_);
  }

 private:
  Nimbus& n_;
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

class FramedTransportFactory final : public apache::thrift::transport::TTransportFactory {
 public:
  explicit FramedTransportFactory(int max_frame_bytes)
      : config_(std::make_shared<apache::thrift::TConfiguration>(
            std::max(max_frame_bytes, static_cast<int>(apache::thrift::TConfiguration::DEFAULT_MAX_MESSAGE_SIZE)),
            max_frame_bytes)) {}
  std::shared_ptr<apache::thrift::transport::TTransport> getTransport(
      std::shared_ptr<apache::thrift::transport::TTransport> transport) override {
    return std::make_shared<apache::thrift::transport::TFramedTransport>(std::move(transport), config_);
  }

 private:
  std::shared_ptr<apache::thrift::TConfiguration> config_;
};

}  // namespace

NimbusServer::NimbusServer(Nimbus& nimbus, Options options, Logger logger)
    : nimbus_(nimbus), options_(std::move(options)), logger_(std::move(logger)) {}

NimbusServer::~NimbusServer() { stop(); }

Status NimbusServer::start() {
  using namespace apache::thrift;
  auto socket = std::make_shared<transport::TServerSocket>(options_.host, options_.port);
  auto processor = std::make_shared<thrift::NimbusProcessor>(std::make_shared<Handler>(nimbus_));
  // Frames over max_frame_bytes are refused before they are buffered
  // (Thrift's own default is 16384000 bytes; ours is the configured one).
  auto transports = std::make_shared<FramedTransportFactory>(options_.max_frame_bytes);
  auto protocols = std::make_shared<protocol::TBinaryProtocolFactory>(
      options_.max_frame_bytes, options_.max_container_elements, false, true);
  server_ = std::make_shared<server::TThreadedServer>(processor, socket, transports, protocols);
  auto ready = std::make_shared<ReadySignal>();
  auto listening = ready->future();
  server_->setServerEventHandler(ready);
  thread_ = std::thread([this, ready] {
    try {
      server_->serve();
    } catch (const std::exception& e) {
      if (!ready->fail(e.what())) logger_.error("thrift server stopped: {}", e.what());
    }
  });
  const std::string error = listening.get();
  if (!error.empty()) {
    thread_.join();
    server_.reset();
    return Status(ErrorCode::kUnavailable, "nimbus cannot listen on " + options_.host + ":" +
                                               std::to_string(options_.port) + ": " + error);
  }
  port_ = socket->getPort();
  logger_.info("nimbus listening on {}:{}", options_.host, port_);
  return Status::ok();
}

void NimbusServer::stop() {
  if (!server_) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

}  // namespace rstorm::nimbus
