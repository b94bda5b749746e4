// IdleStrategy: how an executor with nothing to do waits. Under load work
// arrives within microseconds, so it first spins for a short, bounded time
// (topology.executor.wait.spin.micros), giving the core away every few rounds
// so that a producer sharing it can run. Then it parks on its receive queue
// until a producer wakes it (ReceiveQueue::park; a push to a parked consumer
// notifies it, a stop notifies it too), or until its next timer is due, or
// `max_park` at most. An idle executor costs a wake-up per max_park (or per
// timer), nothing else: no timed polling while it waits for work.
// Single thread: owned by one executor.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

#include "rstorm/worker/receive_queue.hpp"

namespace rstorm::worker {

class IdleStrategy {
 public:
  // `spin`: how long to spin after the last work before parking (0: park at
  // once). `max_park`: the longest single park.
  IdleStrategy(std::chrono::microseconds spin, std::chrono::microseconds max_park)
      : spin_ns_(std::chrono::nanoseconds(spin).count()), max_park_(max_park) {}

  // Work was done: the next idle round starts a new spin.
  void reset() { rounds_ = 0; }

  // `timer_ns`: steady-clock time of the executor's next timer (0: none).
  void idle(ReceiveQueue& queue, std::int64_t timer_ns = 0) {
    if (rounds_++ == 0) {
      parked_ = false;
      if (spin_ns_ > 0) {
        spin_until_ns_ = clock_ns() + spin_ns_;
        return;
      }
    }
    if (!parked_ && spin_ns_ > 0 && clock_ns() < spin_until_ns_) {
      if ((rounds_ & 7) == 0) {
        std::this_thread::yield();
      } else {
        pause();
      }
      return;
    }
    parked_ = true;
    auto timeout = max_park_;
    if (timer_ns > 0) {
      const std::int64_t until = timer_ns - clock_ns();
      if (until <= 0) return;
      timeout = std::min(timeout, std::chrono::microseconds(until / 1000 + 1));
    }
    queue.park(timeout);
  }

  // Parks at once for up to `timeout` (a spout whose next_tuple had nothing);
  // a push to the queue ends it sooner.
  void park(ReceiveQueue& queue, std::chrono::microseconds timeout) {
    rounds_ = 1;
    parked_ = true;
    queue.park(timeout);
  }

 private:
  static std::int64_t clock_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }

  std::int64_t spin_ns_;
  std::chrono::microseconds max_park_;
  std::int64_t spin_until_ns_ = 0;
  int rounds_ = 0;
  bool parked_ = false;  // parked since the last work: no more spinning
};

}  // namespace rstorm::worker
