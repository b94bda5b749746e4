// rstorm-worker: one worker process, started by a supervisor with
// `rstorm-worker --spec <worker dir>/spec.json`. Thin composition root over
// WorkerProcess; SIGTERM or SIGINT stops it cleanly (exit code 0). Exit code 3:
// a new assignment changed what this worker runs; its supervisor starts it again.
// Exit code 1 (cannot start or run) and 2 (unreadable spec) first write the
// reason to the worker directory's `failure` file for the supervisor.
#include <csignal>
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "worker/process/worker_process.hpp"

namespace {
std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop.store(true); }
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rstorm-worker: runs the executors of one worker slot"};
  std::string spec_path;
  app.add_option("--spec", spec_path, "the worker spec written by the supervisor")->required();
  CLI11_PARSE(app, argc, argv);

  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);

  auto logger = std::make_shared<spdlog::logger>("worker",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->flush_on(spdlog::level::info);
  namespace wp = rstorm::worker_process;
  auto fail = [&](const std::filesystem::path& file, const std::string& reason, int code) {
    logger->error("{}", reason);
    if (auto s = wp::write_file_atomically(file, reason + "\n"); !s) {
      logger->error("{}", s.to_string());
    }
    return code;
  };
  auto spec = wp::read_spec_file(spec_path);
  if (!spec) {
    return fail(std::filesystem::path(spec_path).parent_path() / "failure",
                "cannot read the worker spec: " + spec.status().message(), 2);
  }
  const std::filesystem::path failure_file = spec->failure_file();
  auto process = wp::WorkerProcess::start(std::move(spec).value(), logger);
  if (!process) return fail(failure_file, process.status().message(), 1);
  (*process)->run(g_stop);
  const bool restart = (*process)->restart_needed();
  const std::string failure = (*process)->failure();
  process->reset();
  if (!failure.empty()) return fail(failure_file, failure, 1);
  logger->info(restart ? "worker stopped for a restart" : "worker stopped");
  return restart ? 3 : 0;
}
