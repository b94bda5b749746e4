// NimbusDaemon: the composition root of rstorm-nimbus, as a library so tests
// can run a whole nimbus in-process. Builds, in order: coordination store
// (ZooKeeper from storm.zookeeper.*, or one given by the caller) -> RocksDB
// under <storm.local.dir>/nimbus -> blob store -> Nimbus -> Thrift server
// (nimbus.thrift.host:nimbus.thrift.port) -> leader election; stops in reverse.
//
// Thread contract: start()/stop() from one thread; the parts own their threads.
#pragma once

#include <filesystem>
#include <memory>

#include "common/blob_store.hpp"
#include "common/coordination_store.hpp"
#include "common/key_value_store.hpp"
#include "common/logger.hpp"
#include "common/metrics/endpoint.hpp"
#include "nimbus/nimbus.hpp"
#include "nimbus/nimbus_metrics.hpp"
#include "nimbus/nimbus_server.hpp"
#include "rstorm/config.hpp"

namespace rstorm::nimbus {

class NimbusDaemon {
 public:
  // `store`: use this coordination store instead of connecting to ZooKeeper
  // (tests, local mode); nullptr connects with storm.zookeeper.*.
  static Result<std::unique_ptr<NimbusDaemon>> start(
      const Config& config, Logger logger, std::unique_ptr<CoordinationStore> store = nullptr);
  ~NimbusDaemon();  // stop()
  void stop();

  Nimbus& nimbus() { return *nimbus_; }
  // The advertised Thrift port: plaintext when served, else TLS.
  int port() const {
    if (!server_) return 0;
    return server_->port() != 0 ? server_->port() : server_->tls_port();
  }
  int tls_port() const { return server_ ? server_->tls_port() : 0; }
  // Where /metrics listens (nimbus.metrics.port; -1: off); 0 when not serving.
  int metrics_port() const { return metrics_ ? metrics_->server().port() : 0; }
  CoordinationStore& store() { return *store_; }

 private:
  explicit NimbusDaemon(Logger logger) : logger_(std::move(logger)) {}
  void start_metrics(const Config& config, metrics::ServerSecurity security);
  Logger logger_;
  std::unique_ptr<CoordinationStore> store_;
  std::unique_ptr<KeyValueStore> kv_;
  std::unique_ptr<BlobStore> blobs_;
  std::unique_ptr<Nimbus> nimbus_;
  std::unique_ptr<NimbusServer> server_;
  std::unique_ptr<metrics::MetricsEndpoint> metrics_;
  std::unique_ptr<NimbusMetrics> nimbus_metrics_;
};

}  // namespace rstorm::nimbus
