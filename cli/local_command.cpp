// `rstorm local LIB.so`: runs a topology library in this process, with no
// external service. The logic lives in rstorm::worker (local_runner.hpp).
#include <csignal>
#include <iostream>

#include "command.hpp"
#include "rstorm/config.hpp"
#include "rstorm/worker/local_runner.hpp"

namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int) { g_interrupted.store(true); }

struct LocalOptions {
  std::string library;
  double duration_secs = 0;
  double report_secs = 5;
  std::string name;
  std::vector<std::string> overrides;
};

int run(const LocalOptions& o) {
  rstorm::worker::LocalRunOptions options;
  options.library_path = o.library;
  options.name = o.name;
  options.duration = std::chrono::milliseconds(static_cast<long long>(o.duration_secs * 1000));
  options.report_interval =
      std::chrono::milliseconds(static_cast<long long>(std::max(0.1, o.report_secs) * 1000));
  try {
    for (const auto& arg : o.overrides) {
      auto [key, value] = rstorm::parse_config_override(arg);
      options.config.set(std::move(key), std::move(value), "command line");
    }
  } catch (const rstorm::ConfigError& e) {
    std::cerr << "rstorm local: " << e.what() << "\n";
    return rstorm::cli::kExitUsage;
  }
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  options.interrupted = &g_interrupted;
  rstorm::api::Status status = rstorm::worker::run_local(options, std::cout);
  if (!status.is_ok()) {
    for (const auto& m : status.messages()) std::cerr << "rstorm local: " << m << "\n";
    return rstorm::cli::kExitUsage;
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
  sub->add_option("--report-interval", options->report_secs,
                  "Seconds between live lines (default 5)");
  sub->add_option("--name", options->name, "Topology name (default: the library's)");
  sub->add_option("-c", options->overrides, "Config override key=value (repeatable)")
      ->allow_extra_args(false);
  sub->callback([&exit_code, options] { exit_code = run(*options); });
});
