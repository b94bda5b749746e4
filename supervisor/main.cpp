// rstorm-supervisor: the per-machine daemon. Thin composition root: config ->
// ZooKeeper store -> local state (RocksDB) -> nimbus link -> Supervisor; stops
// in reverse order on SIGTERM or SIGINT, leaving no worker running.
//
//   rstorm-supervisor [--config rstorm.yaml] [-c key=value]...
#include <signal.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "common/config_loader.hpp"
#include "common/http/http_server.hpp"
#include "common/logger.hpp"
#include "common/metrics/security_config.hpp"
#include "common/rocksdb_store.hpp"
#include "common/zookeeper_store.hpp"
#include "supervisor/log_viewer.hpp"
#include "supervisor/nimbus_client_link.hpp"
#include "supervisor/supervisor.hpp"
#include "supervisor/supervisor_metrics.hpp"

int main(int argc, char** argv) {
  CLI::App app{"rstorm-supervisor: registers this machine and runs its worker processes"};
  rstorm::ConfigLoadOptions load;
  std::string config_file;
  app.add_option("--config", config_file, "an rstorm.yaml layered over the defaults");
  app.add_option("-c", load.overrides, "key=value overrides, as in Storm")->take_all();
  CLI11_PARSE(app, argc, argv);
  if (!config_file.empty()) load.config_file = config_file;

  // Signals are taken by sigwait below; every thread started later inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto logger = rstorm::Logger::to_stderr("supervisor");
  auto config = rstorm::load_config(load);
  if (!config) {
    logger.error("{}", config.status().to_string());
    return 2;
  }
  auto options = rstorm::supervisor::SupervisorOptions::from_config(*config);
  if (!options) {
    logger.error("{}", options.status().to_string());
    return 2;
  }
  rstorm::ZooKeeperOptions zk_options;
  rstorm::nimbus::NimbusClient::Options nimbus_options;
  rstorm::metrics::ServerSecurity metrics_security;
  try {
    zk_options = rstorm::ZooKeeperOptions::from_config(*config);
    nimbus_options = rstorm::nimbus::NimbusClient::options_from_config(*config);
    metrics_security = rstorm::metrics::server_security_from_config(*config);
  } catch (const rstorm::ConfigError& e) {
    logger.error("{}", e.what());
    return 2;
  }
  nimbus_options.timeout = std::chrono::seconds(10);
  auto store = rstorm::ZooKeeperStore::connect(zk_options, logger.with_context("zk", "client"));
  if (!store) {
    logger.error("{}", store.status().to_string());
    return 3;
  }
  std::error_code ec;
  std::filesystem::create_directories(options->local_dir, ec);
  auto state = rstorm::RocksDbStore::open(options->local_dir / "state", {});
  if (!state) {
    logger.error("{}", state.status().to_string());
    return 2;
  }
  // The workers' logs over HTTP (logviewer.port; -1: none). A port that cannot
  // be bound is logged, not fatal: the UI then shows no log links for this node.
  // Logs only for those who may describe their topology, when nimbus's ACLs
  // are on (the same keys in this machine's rstorm.yaml).
  std::shared_ptr<const rstorm::security::Authorizer> log_authorizer;
  rstorm::security::PrincipalMapper log_principals;
  try {
    log_authorizer = std::make_shared<const rstorm::security::Authorizer>(
        rstorm::security::Authorizer::options_from_config(*config));
    log_principals = rstorm::security::PrincipalMapper::from_config(*config);
  } catch (const rstorm::ConfigError& e) {
    logger.error("{}", e.what());
    return 2;
  }
  rstorm::supervisor::LogViewer log_viewer(options->local_dir / "workers", log_authorizer,
                                           log_principals);
  std::unique_ptr<rstorm::http::HttpServer> log_server;
  if (const int port = static_cast<int>(config->get_int("logviewer.port", 8000)); port >= 0) {
    rstorm::http::HttpServerOptions ho;
    ho.host = config->get_string("logviewer.host", "127.0.0.1");
    ho.port = port;
    ho.threads = 2;
    ho.name = "log viewer";
    try {
      rstorm::http::https_options_from_config(*config, "logviewer.https", ho);
    } catch (const rstorm::ConfigError& e) {
      logger.error("{}", e.what());
      return 2;
    }
    auto started = rstorm::http::HttpServer::start(
        ho, [&log_viewer](const rstorm::http::HttpRequest& r) { return log_viewer.handle(r); },
        logger);
    if (started.is_ok()) {
      log_server = std::move(started).value();
      options->logviewer_port = log_server->port();
      options->logviewer_https = ho.tls();
      logger.info("worker logs at {}/api/v1/logs", log_server->url());
    } else {
      logger.warn("no log viewer: {}", started.status().message());
    }
  }
  rstorm::supervisor::NimbusClientLink nimbus(nimbus_options, **store,
                                              rstorm::ClusterPaths(options->zookeeper_root));
  rstorm::supervisor::Supervisor supervisor(*options, **store, **state, nimbus, logger);
  if (auto s = supervisor.start(); !s) {
    logger.error("cannot start: {}", s.to_string());
    return 1;
  }
  std::cout << "rstorm-supervisor " << supervisor.id() << " running (local dir "
            << std::filesystem::absolute(options->local_dir).string() << ")" << std::endl;
  // /metrics and the file SD of this supervisor and its workers; a metrics
  // port that cannot be bound is logged, not fatal.
  std::unique_ptr<rstorm::supervisor::SupervisorMetrics> metrics;
  if (const int port = static_cast<int>(config->get_int("supervisor.metrics.port", 9461));
      port >= 0) {
    rstorm::supervisor::SupervisorMetricsOptions mo;
    mo.host = config->get_string("storm.metrics.host", "127.0.0.1");
    mo.port = port;
    mo.security = metrics_security;
    mo.sd_dir = rstorm::metrics::metrics_sd_dir(*config);
    mo.worker_port_offset = static_cast<int>(config->get_int("worker.metrics.port.offset", 1000));
    mo.rack = options->rack;
    mo.worker_host = options->host;
    auto started = rstorm::supervisor::SupervisorMetrics::start(supervisor, mo);
    if (started.ok()) {
      metrics = std::move(started).value();
      logger.info("metrics at {}://{}:{}/metrics", mo.security.tls() ? "https" : "http", mo.host,
                  metrics->port());
    } else {
      logger.warn("no /metrics: {}", started.status().message());
    }
  }
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  logger.info("signal {}: stopping", signal_number);
  // Stopping for good: with ZooKeeper down, each call the supervisor still
  // makes (its control thread's, its unregistering) gives up after one
  // attempt instead of retrying for about 15 s.
  (*store)->stop_retrying();
  supervisor.stop();
  if (metrics) metrics->stop();
  if (log_server) log_server->stop();
  return 0;
}
