// rstorm-worker: one worker process, started by a supervisor with
// `rstorm-worker --spec <worker dir>/spec.json`. Thin composition root over
// WorkerProcess; SIGTERM or SIGINT stops it cleanly (exit code 0). Exit code 3:
// a new assignment changed what this worker runs; its supervisor starts it again.
// Exit code 1 (cannot start or run) and 2 (unreadable spec) first write the
// reason to the worker directory's `failure` file for the supervisor.
#include <execinfo.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "worker/process/worker_process.hpp"

namespace {
std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop.store(true); }

// A crash (a bolt dereferencing null, say) leaves its cause in worker.log
// and the failure file, which the supervisor reports in `rstorm describe`:
// the signal, the faulting address and a backtrace. Only async-signal-safe
// calls (write, open; backtrace is loaded at start, so it does not
// allocate); the signal is then raised again, so the exit status stays
// "signal N".
char g_failure_path[4096] = {};

void write_text(int fd, const char* text) {
  std::size_t n = 0;
  while (text[n] != '\0') ++n;
  while (n > 0) {
    const ssize_t w = ::write(fd, text, n);
    if (w <= 0) return;
    text += w;
    n -= static_cast<std::size_t>(w);
  }
}

// `value` in base `base` into `out` (at least 24 bytes).
void format_number(std::uintptr_t value, unsigned base, char* out) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = "0123456789abcdef"[value % base];
    value /= base;
  } while (value != 0 && n < 23);
  int i = 0;
  if (base == 16) out[i++] = '0', out[i++] = 'x';
  while (n > 0) out[i++] = digits[--n];
  out[i] = '\0';
}

extern "C" void on_fatal_signal(int sig, siginfo_t* info, void*) {
  const char* name = sigabbrev_np(sig);
  char number[24], address[24];
  format_number(static_cast<std::uintptr_t>(sig), 10, number);
  format_number(reinterpret_cast<std::uintptr_t>(info != nullptr ? info->si_addr : nullptr), 16,
                address);
  char what[256] = "fatal signal ";
  auto append = [&](const char* text) {
    std::size_t at = 0;
    while (what[at] != '\0') ++at;
    for (std::size_t i = 0; text[i] != '\0' && at + 1 < sizeof what; ++i) what[at++] = text[i];
    what[at] = '\0';
  };
  append(number);
  if (name != nullptr) append(" (SIG"), append(name), append(")");
  if (sig == SIGSEGV || sig == SIGBUS) append(" at address "), append(address);
  write_text(STDERR_FILENO, "rstorm-worker: ");
  write_text(STDERR_FILENO, what);
  write_text(STDERR_FILENO, "; backtrace:\n");
  void* frames[64];
  const int depth = ::backtrace(frames, 64);
  ::backtrace_symbols_fd(frames, depth, STDERR_FILENO);
  if (g_failure_path[0] != '\0') {
    const int fd = ::open(g_failure_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      write_text(fd, "the worker crashed: ");
      write_text(fd, what);
      write_text(fd, " (its backtrace is in worker.log)\n");
      ::close(fd);
    }
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void report_fatal_signals(const std::filesystem::path& failure_file) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return;  // the sanitizer's own report is the better one
#endif
  const std::string path = failure_file.string();
  if (path.size() < sizeof g_failure_path) {
    std::copy(path.begin(), path.end(), g_failure_path);
    g_failure_path[path.size()] = '\0';
  }
  void* warm[1];
  (void)::backtrace(warm, 1);  // loads the unwinder now, not in the handler
  struct sigaction action {};
  action.sa_sigaction = on_fatal_signal;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(sig, &action, nullptr);
}
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
  report_fatal_signals(failure_file);
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
