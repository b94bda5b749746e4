#include "nimbus/nimbus_daemon.hpp"

#include "common/metrics/security_config.hpp"
#include "common/rocksdb_store.hpp"
#include "common/zookeeper_store.hpp"

namespace rstorm::nimbus {

Result<std::unique_ptr<NimbusDaemon>> NimbusDaemon::start(
    const Config& config, Logger logger, std::unique_ptr<CoordinationStore> store) {
  std::unique_ptr<NimbusDaemon> d(new NimbusDaemon(logger));
  NimbusOptions options;
  NimbusServer::Options server_options;
  std::filesystem::path dir;
  metrics::ServerSecurity metrics_security;
  try {
    options = NimbusOptions::from_config(config);
    metrics_security = metrics::server_security_from_config(config);
    server_options.host = options.host;
    server_options.port = static_cast<int>(config.get_int(keys::kNimbusThriftPort));
    server_options.tls = security::tls_files_from_config(config, "nimbus.thrift.tls.server");
    server_options.tls_port = static_cast<int>(config.get_int("nimbus.thrift.tls.port", 6067));
    server_options.plaintext =
        !server_options.tls || !config.get_bool("nimbus.thrift.tls.server.only", true);
    server_options.authorizer = security::Authorizer::options_from_config(config);
    server_options.principals = security::PrincipalMapper::from_config(config);
    dir = std::filesystem::path(config.get_string(keys::kLocalDir)) / "nimbus";
    if (!store) {
      auto zk = ZooKeeperStore::connect(ZooKeeperOptions::from_config(config),
                                        logger.with_context("piece", "zookeeper"));
      if (!zk) return zk.status();
      store = std::move(*zk);
    }
  } catch (const ConfigError& e) {
    return Status(ErrorCode::kInvalidArgument, e.what());
  }
  d->store_ = std::move(store);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status(ErrorCode::kIoError, "cannot create " + dir.string() + ": " + ec.message());
  auto kv = RocksDbStore::open(dir / "blobs", RocksDbStore::Options{});
  if (!kv) return kv.status();
  d->kv_ = std::move(*kv);
  d->blobs_ = std::make_unique<BlobStore>(*d->kv_, BlobStore::Options{options.chunk_bytes});
  if (auto collected = d->blobs_->collect_garbage(); collected && *collected > 0) {
    logger.info("dropped {} chunks of uploads interrupted by the last stop", *collected);
  }
  d->nimbus_ = std::make_unique<Nimbus>(*d->store_, *d->blobs_, options, logger);
  d->server_ = std::make_unique<NimbusServer>(*d->nimbus_, server_options, logger);
  if (Status s = d->server_->start(); !s) return s;
  // Before the monitor thread runs: it reports round durations.
  d->start_metrics(config, std::move(metrics_security));
  // Advertised to clients and standbys: the plaintext port when served, else
  // the TLS port (a plaintext client dialling it is told the port speaks TLS).
  if (Status s = d->nimbus_->start(d->port(), d->tls_port()); !s) return s;
  return d;
}

// /metrics and this nimbus's file SD entry (nimbus-<thrift port>.json). A
// metrics port that cannot be bound is logged, not fatal: scheduling matters more.
void NimbusDaemon::start_metrics(const Config& config, metrics::ServerSecurity security) {
  const int metrics_port = static_cast<int>(config.get_int("nimbus.metrics.port", 9460));
  if (metrics_port < 0) return;
  metrics::EndpointOptions o;
  o.host = config.get_string("storm.metrics.host", "127.0.0.1");
  o.port = metrics_port;
  o.process_labels = {{"role", "nimbus"}};
  o.security = std::move(security);
  o.sd_file = metrics::metrics_sd_dir(config) + "/nimbus-" + std::to_string(this->port()) + ".json";
  o.sd_labels = {{"role", "nimbus"}, {"nimbus", "127.0.0.1:" + std::to_string(this->port())}};
  auto endpoint = metrics::MetricsEndpoint::start(std::move(o));
  if (!endpoint.ok()) {
    logger_.warn("no /metrics: {}", endpoint.status().message());
    return;
  }
  metrics_ = std::move(endpoint).value();
  nimbus_metrics_ = std::make_unique<NimbusMetrics>(*nimbus_, metrics_->registry());
  logger_.info("metrics at {}", metrics_->server().url());
}

NimbusDaemon::~NimbusDaemon() { stop(); }

void NimbusDaemon::stop() {
  // Stopping for good: with ZooKeeper down, a call in flight gives up after
  // one attempt instead of retrying for about 15 s (its nodes go when its
  // session ends).
  if (store_) store_->stop_retrying();
  if (nimbus_) nimbus_->stop();
  nimbus_metrics_.reset();  // no scrape reads nimbus after this
  if (server_) server_->stop();
  server_.reset();
  nimbus_.reset();
  blobs_.reset();
  kv_.reset();
  store_.reset();
  metrics_.reset();
}

}  // namespace rstorm::nimbus
