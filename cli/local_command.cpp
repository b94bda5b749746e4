// `rstorm local LIB.so`: runs a topology library in this process, with no
// external service. The logic lives in rstorm::worker (local_runner.hpp).
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <iostream>
#include <memory>

#include "command.hpp"
#include "common/config_loader.hpp"
#include "common/http/http_server.hpp"
#include "common/metrics/prometheus_server.hpp"
#include "local_ui.hpp"
#include "rstorm/worker/local_runner.hpp"

namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int) { g_interrupted.store(true); }

struct LocalOptions {
  std::string library;
  double duration_secs = 0;
  double report_secs = 5;
  double until_idle_secs = 0;
  std::string name;
  std::vector<std::string> overrides;
  int metrics_port = -1;
  bool prometheus = false;
  bool ui = false;
  int ui_port = 0;
};

// --ui: rstorm-ui's pages over this run, sampled every second. Members are
// destroyed in reverse: the sampler and the server stop before the API goes.
struct LocalUi {
  std::unique_ptr<rstorm::cli::LocalUiBackend> backend;
  std::unique_ptr<rstorm::ui::UiApi> api;
  std::unique_ptr<rstorm::http::HttpServer> server;
  std::unique_ptr<rstorm::ui::UiSampler> sampler;
};

int run(const LocalOptions& o) {
  rstorm::worker::LocalRunOptions options;
  options.library_path = o.library;
  options.name = o.name;
  options.duration = std::chrono::milliseconds(static_cast<long long>(o.duration_secs * 1000));
  options.report_interval =
      std::chrono::milliseconds(static_cast<long long>(std::max(0.1, o.report_secs) * 1000));
  options.until_idle =
      std::chrono::milliseconds(static_cast<long long>(std::max(0.0, o.until_idle_secs) * 1000));
  bool component_failed = false;
  options.component_failed = &component_failed;
  // The same check as `rstorm submit`'s (load_config reads -c with it too).
  auto overrides = rstorm::parse_overrides(o.overrides);
  if (!overrides) {
    std::cerr << "rstorm local: " << overrides.status().message() << "\n";
    return rstorm::cli::kExitUsage;
  }
  options.config = std::move(overrides).value();
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  options.interrupted = &g_interrupted;
  options.metrics_port = o.metrics_port >= 0 ? o.metrics_port : (o.prometheus || o.ui ? 0 : -1);
  int metrics_port = -1;
  if (o.ui) {
    options.on_running = [&](rstorm::worker::TopologyRuntime& runtime, const rstorm::Topology& topology,
                             const std::string& name) -> std::shared_ptr<void> {
      auto ui = std::make_shared<LocalUi>();
      ui->backend = std::make_unique<rstorm::cli::LocalUiBackend>(
          runtime, topology, name, options.config, metrics_port, &g_interrupted);
      rstorm::ui::UiOptions uo;
      uo.metrics_port_offset = 0;  // the executors' "slot" is this process's /metrics port
      ui->api = std::make_unique<rstorm::ui::UiApi>(*ui->backend, uo);
      rstorm::http::HttpServerOptions so;
      so.port = o.ui_port;
      so.name = "rstorm local --ui";
      auto* api = ui->api.get();
      auto server = rstorm::http::HttpServer::start(
          so, [api](const rstorm::http::HttpRequest& r) { return api->handle(r); },
          rstorm::Logger::to_stderr("ui"));
      if (!server.is_ok()) {
        std::cerr << "rstorm local: no UI: " << server.status().message() << "\n";
        return nullptr;
      }
      ui->server = std::move(server).value();
      std::cout << "rstorm local: UI at " << ui->server->url() << "/" << std::endl;
      ui->sampler = std::make_unique<rstorm::ui::UiSampler>(*ui->api, std::chrono::seconds(1));
      return ui;
    };
  }
  // --prometheus: a real Prometheus server scraping this process, in its own
  // temporary directory, stopped (by pid) and removed when the run ends.
  std::unique_ptr<rstorm::metrics::PrometheusServer> prometheus;
  const auto prom_dir = std::filesystem::temp_directory_path() /
                        ("rstorm-local-prometheus-" + std::to_string(::getpid()));
  auto port_of = [](const std::string& target) { return std::stoi(target.substr(target.rfind(':') + 1)); };
  if (o.ui && !o.prometheus) {
    options.on_metrics_ready = [&](const std::string& target) { metrics_port = port_of(target); };
  }
  if (o.prometheus) {
    options.on_metrics_ready = [&](const std::string& target) {
      metrics_port = port_of(target);
      rstorm::metrics::PrometheusServerOptions po;
      po.work_dir = prom_dir;
      po.static_targets = {target};
      po.scrape_interval = std::chrono::seconds(2);
      auto started = rstorm::metrics::PrometheusServer::start(po);
      if (!started.ok()) {
        std::cerr << "rstorm local: " << started.status().message() << "\n";
        return;
      }
      prometheus = std::move(started).value();
      std::cout << "rstorm local: Prometheus at " << prometheus->url() << " (pid "
                << prometheus->pid() << ", data in " << prom_dir.string() << ")" << std::endl;
    };
  }
  rstorm::api::Status status = rstorm::worker::run_local(options, std::cout);
  if (prometheus) {
    prometheus->stop();
    std::error_code ec;
    std::filesystem::remove_all(prom_dir, ec);
  }
  if (!status.is_ok()) {
    for (const auto& m : status.messages()) std::cerr << "rstorm local: " << m << "\n";
    return component_failed ? rstorm::cli::kExitFailure : rstorm::cli::kExitUsage;
  }
  return rstorm::cli::kExitOk;
}

}  // namespace

RSTORM_CLI_COMMAND("local", [](CLI::App& app, int& exit_code) {
  auto options = std::make_shared<LocalOptions>();
  auto* sub = app.add_subcommand(
      "local", "Run a topology library in this process, with no external service");
  sub->add_option("library", options->library, "Topology library (.so) with RSTORM_TOPOLOGY")
      ->required();
  sub->add_option("--duration", options->duration_secs,
                  "Seconds to run; 0 runs until Ctrl-C (default 0)");
  sub->add_option("--until-idle", options->until_idle_secs,
                  "End once nothing was emitted or executed for SECONDS and no tree is pending "
                  "(a bounded input has drained)");
  sub->add_option("--report-interval", options->report_secs,
                  "Seconds between live lines (default 5)");
  sub->add_option("--name", options->name, "Topology name (default: the library's)");
  sub->add_option("--metrics-port", options->metrics_port,
                  "Serve /metrics on 127.0.0.1:PORT while running (0: a free port; default off)");
  sub->add_flag("--prometheus", options->prometheus,
                "Also start a Prometheus server (Debian's prometheus) on loopback scraping it, "
                "and print its URL");
  sub->add_flag("--ui", options->ui,
                "Serve rstorm-ui's pages and REST API for this run on 127.0.0.1 and print the URL "
                "(implies /metrics on a free port unless --metrics-port)");
  sub->add_option("--ui-port", options->ui_port, "Port of --ui (default 0: a free port)");
  sub->add_option("-c", options->overrides, "Config override key=value (repeatable)")
      ->allow_extra_args(false);
  sub->callback([&exit_code, options] { exit_code = run(*options); });
});
