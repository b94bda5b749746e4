#include "supervisor/process_control.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace rstorm::supervisor {

Result<ProcessId> launch_process(const std::filesystem::path& binary,
                                 const std::vector<std::string>& args,
                                 const std::filesystem::path& log_file) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_file.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  // Nothing else of ours: the supervisor's ZooKeeper and nimbus connections
  // and its listening sockets (log viewer, metrics) are not opened with
  // O_CLOEXEC by every library, and a worker holding them kept a restarted
  // supervisor from binding its ports again.
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&attr, &empty);

  std::vector<std::string> argv_storage{binary.string()};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, binary.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Status(ErrorCode::kIoError,
                  "cannot start " + binary.string() + ": " + std::strerror(rc));
  }
  ProcessId id{pid, 0};
  // The start time is readable as soon as the child exists.
  if (auto ticks = process_start_ticks(pid)) id.start_ticks = *ticks;
  return id;
}

namespace {
// How reaped children ended, until exit_status_of() takes it. Bounded: a
// status nobody asks for (a worker stopped on purpose) is dropped eventually.
std::mutex g_reaped_mutex;
std::map<pid_t, std::string> g_reaped;  // GUARDED_BY(g_reaped_mutex)
}  // namespace

namespace {
// waitpid(WNOHANG) on `pid`: its pid once reaped (how it ended recorded), 0
// while it runs, -1 when it is not a child of this process.
pid_t reap(pid_t pid) {
  int status = 0;
  const pid_t r = ::waitpid(pid, &status, WNOHANG);
  if (r != pid) return r;
  std::string how;
  if (WIFEXITED(status)) {
    how = "exit code " + std::to_string(WEXITSTATUS(status));
  } else if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    how = "signal " + std::to_string(sig) + (name ? " (SIG" + std::string(name) + ")" : "");
  } else {
    how = "status " + std::to_string(status);
  }
  std::lock_guard lock(g_reaped_mutex);
  if (g_reaped.size() >= 256) g_reaped.erase(g_reaped.begin());
  g_reaped[pid] = how;
  return r;
}
}  // namespace

std::optional<std::string> reap_child(pid_t pid) {
  if (reap(pid) != pid) return std::nullopt;
  std::lock_guard lock(g_reaped_mutex);
  return g_reaped.at(pid);
}

std::optional<std::string> exit_status_of(pid_t pid) {
  std::lock_guard lock(g_reaped_mutex);
  auto it = g_reaped.find(pid);
  if (it == g_reaped.end()) return std::nullopt;
  std::string how = std::move(it->second);
  g_reaped.erase(it);
  return how;
}

bool process_alive(const ProcessId& id) {
  if (id.pid <= 0) return false;
  (void)reap_child(id.pid);
  const auto ticks = process_start_ticks(id.pid);
  if (!ticks) {
    // A zombie. A multi-threaded child shows as one while its last threads
    // still exit, and cannot be reaped before they have: wait for that (a
    // moment), or it stays behind as <defunct> and how it ended is lost.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (reap(id.pid) == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }
  return id.start_ticks == 0 || *ticks == id.start_ticks;
}

int terminate_processes(const std::vector<ProcessId>& ids, std::chrono::milliseconds grace) {
  for (const auto& id : ids) {
    if (process_alive(id)) ::kill(id.pid, SIGTERM);
  }
  auto all_gone = [&] {
    for (const auto& id : ids) {
      if (process_alive(id)) return false;
    }
    return true;
  };
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!all_gone() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  int killed = 0;
  for (const auto& id : ids) {
    if (process_alive(id)) {
      ::kill(id.pid, SIGKILL);
      ++killed;
    }
  }
  // SIGKILL cannot be ignored; bound the wait anyway (an uninterruptible sleep).
  const auto kill_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!all_gone() && std::chrono::steady_clock::now() < kill_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return killed;
}

std::string process_command_line(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (auto& c : raw) {
    if (c == '\0') c = ' ';
  }
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw;
}

}  // namespace rstorm::supervisor
