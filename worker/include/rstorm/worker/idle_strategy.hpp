// IdleStrategy: how an executor with nothing to do waits. It spins briefly
// (work usually arrives within microseconds under load), then yields the core,
// then parks on its receive queue with a growing timeout, so that many idle
// executors share two cores without starving the busy ones.
// Single thread: owned by one executor.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

#include "rstorm/worker/receive_queue.hpp"

namespace rstorm::worker {

class IdleStrategy {
 public:
  static constexpr int kSpins = 32;
  static constexpr int kYields = 8;

  // `max_park`: the longest single sleep (bounds how late timers are served).
  explicit IdleStrategy(std::chrono::microseconds max_park) : max_park_(max_park) {}

  void reset() { idle_rounds_ = 0; }

  void idle(ReceiveQueue& queue) {
    ++idle_rounds_;
    if (idle_rounds_ <= kSpins) {
      pause();
    } else if (idle_rounds_ <= kSpins + kYields) {
      std::this_thread::yield();
    } else {
      // 50 us, doubling up to max_park.
      int steps = std::min(idle_rounds_ - kSpins - kYields, 16);
      auto timeout = std::min(max_park_, std::chrono::microseconds(50) * (1 << (steps / 2)));
      queue.park(timeout);
    }
  }

 private:
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }

  std::chrono::microseconds max_park_;
  int idle_rounds_ = 0;
};

}  // namespace rstorm::worker
