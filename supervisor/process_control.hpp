// Starting, watching and stopping worker processes by pid. A process is
// identified by (pid, start time in clock ticks since boot, field 22 of
// /proc/<pid>/stat) so that a recycled pid is never mistaken for a worker.
// Free functions, thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/process_info.hpp"  // process_start_ticks
#include "common/status.hpp"

namespace rstorm::supervisor {

struct ProcessId {
  pid_t pid = -1;
  std::uint64_t start_ticks = 0;
};

// Starts `binary args...` with stdin from /dev/null and stdout + stderr
// appended to `log_file`, in its own process group. kIoError naming the binary.
Result<ProcessId> launch_process(const std::filesystem::path& binary,
                                 const std::vector<std::string>& args,
                                 const std::filesystem::path& log_file);

// True when `id` still names the same live process. Reaps it when it is an
// exited child of this process.
bool process_alive(const ProcessId& id);

// How a child ended ("exit code 3", "signal 9"), when it has ended and was a
// child of this process; reaps it. nullopt while it runs or when unknown.
// Once reaped (here or by process_alive()), how it ended stays available
// from exit_status_of() until taken.
std::optional<std::string> reap_child(pid_t pid);
// How reaped child `pid` ended, once; nullopt when not known. Thread-safe.
std::optional<std::string> exit_status_of(pid_t pid);

// Sends SIGTERM to every process, waits up to `grace` for them to go, then
// SIGKILLs the rest and waits for them (bounded). Returns how many needed SIGKILL.
int terminate_processes(const std::vector<ProcessId>& ids, std::chrono::milliseconds grace);

// The command line of `pid` (argv joined by spaces), "" when unreadable.
std::string process_command_line(pid_t pid);

}  // namespace rstorm::supervisor
