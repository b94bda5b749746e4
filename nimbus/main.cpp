// rstorm-nimbus: the master daemon. A thin composition root over
// rstorm::nimbus (NimbusDaemon); stops cleanly on SIGTERM or SIGINT.
#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>

#include "common/config_loader.hpp"
#include "common/logger.hpp"
#include "nimbus/nimbus_daemon.hpp"

int main(int argc, char** argv) {
  CLI::App app{"rstorm-nimbus: the rstorm master (Thrift service, scheduling, leader election)"};
  std::string config_file;
  std::vector<std::string> overrides;
  app.add_option("--config", config_file, "an rstorm.yaml");
  app.add_option("-c", overrides, "key=value config override (repeatable)");
  CLI11_PARSE(app, argc, argv);

  rstorm::ConfigLoadOptions load;
  if (!config_file.empty()) load.config_file = config_file;
  load.overrides = overrides;
  auto config = rstorm::load_config(load);
  if (!config) {
    std::cerr << "rstorm-nimbus: " << config.status().message() << "\n";
    return 2;
  }
  // Block the stop signals in every thread; the main thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  rstorm::Logger logger = rstorm::Logger::to_stderr("nimbus");
  auto daemon = rstorm::nimbus::NimbusDaemon::start(*config, logger);
  if (!daemon) {
    std::cerr << "rstorm-nimbus: " << daemon.status().message() << "\n";
    return daemon.code() == rstorm::ErrorCode::kInvalidArgument ? 2 : 3;
  }
  int signal = 0;
  sigwait(&signals, &signal);
  logger.info("received {}, stopping", signal == SIGTERM ? "SIGTERM" : "SIGINT");
  (*daemon)->stop();
  return 0;
}
