// rstorm-ui: Storm UI's pages and REST API for an rstorm cluster (see API.md).
// Reads the same config as every daemon (defaults.yaml, rstorm.yaml, -c), finds
// the leading nimbus through nimbus.seeds, serves on ui.host:ui.port (loopback
// by default) and samples the running topologies' workers every
// ui.sample.interval.secs for the windowed figures. Stops on SIGTERM or SIGINT.
//
//   rstorm-ui [--config rstorm.yaml] [-c key=value]...
#include <signal.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "common/config_loader.hpp"
#include "common/http/http_server.hpp"
#include "common/logger.hpp"
#include "common/metrics/security_config.hpp"
#include "ui/nimbus_backend.hpp"
#include "ui/ui_api.hpp"

int main(int argc, char** argv) {
  CLI::App app{"rstorm-ui: the web UI and REST API of an rstorm cluster"};
  rstorm::ConfigLoadOptions load;
  std::string config_file;
  app.add_option("--config", config_file, "an rstorm.yaml layered over the defaults");
  app.add_option("-c", load.overrides, "key=value overrides, as in Storm")->take_all();
  CLI11_PARSE(app, argc, argv);
  if (!config_file.empty()) load.config_file = config_file;

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto logger = rstorm::Logger::to_stderr("ui");
  auto config = rstorm::load_config(load);
  if (!config) {
    logger.error("{}", config.status().to_string());
    return 2;
  }
  rstorm::nimbus::NimbusClient::Options nimbus_options;
  rstorm::ui::UiOptions options;
  rstorm::http::HttpServerOptions server_options;
  rstorm::metrics::HttpClientOptions metrics_client;
  std::chrono::seconds interval{5};
  try {
    nimbus_options = rstorm::nimbus::NimbusClient::options_from_config(*config);
    nimbus_options.timeout = std::chrono::seconds(10);
    options.metrics_port_offset = static_cast<int>(config->get_int("worker.metrics.port.offset", 1000));
    metrics_client = rstorm::metrics::scrape_client_from_config(*config);
    for (const auto& o : config->get_string_list("ui.origins")) options.allowed_origins.insert(o);
    server_options.host = config->get_string("ui.host", "127.0.0.1");
    server_options.port = static_cast<int>(config->get_int("ui.port", 8080));
    rstorm::http::https_options_from_config(*config, "ui.https", server_options);
    // The browser's certificate names the user: make the calls for them.
    options.act_for_users =
        server_options.need_client_auth && config->get_bool("ui.impersonate.users", true);
    interval = std::chrono::seconds(config->get_int("ui.sample.interval.secs", 5));
  } catch (const rstorm::ConfigError& e) {
    logger.error("{}", e.what());
    return 2;
  }
  for (const auto& [key, entry] : config->entries()) options.configuration[key] = entry.value.to_string();
  server_options.name = "rstorm-ui";
  server_options.threads = 4;

  rstorm::ui::NimbusBackend backend(nimbus_options, metrics_client);
  rstorm::ui::UiApi api(backend, options);
  auto server = rstorm::http::HttpServer::start(
      server_options, [&api](const rstorm::http::HttpRequest& r) { return api.handle(r); }, logger);
  if (!server.is_ok()) {
    logger.error("{}", server.status().message());
    return 3;
  }
  std::cout << "rstorm-ui serving " << (*server)->url() << "/" << std::endl;
  logger.info("serving {}/ (REST API under /api/v1), nimbus seeds {}", (*server)->url(),
              nimbus_options.seeds.front().to_string());

  // Samples the workers' /metrics for the windowed figures.
  auto sampler = std::make_unique<rstorm::ui::UiSampler>(api, interval);

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  logger.info("signal {}: stopping", signal_number);
  sampler.reset();
  (*server)->stop();
  return 0;
}
