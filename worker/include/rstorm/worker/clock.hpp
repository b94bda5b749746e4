// The runtime's clock: steady-clock time in nanoseconds, as the executors'
// timers, the idle strategy and the data plane compare it.
#pragma once

#include <chrono>
#include <cstdint>

namespace rstorm::worker {

inline std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace rstorm::worker
