// Facts about local processes read from /proc. Thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace rstorm {

// Start time of `pid` in clock ticks since boot (field 22 of
// /proc/<pid>/stat): with the pid, names one process even after the pid is
// reused. nullopt when there is no such process or it is a zombie.
std::optional<std::uint64_t> process_start_ticks(pid_t pid);

}  // namespace rstorm
