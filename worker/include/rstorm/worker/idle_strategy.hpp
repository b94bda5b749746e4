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

#include "rstorm/worker/clock.hpp"
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
        spin_until_ns_ = steady_now_ns() + spin_ns_;
        return;
      }
    }
    if (!parked_ && spin_ns_ > 0 && steady_now_ns() < spin_until_ns_) {
      if ((rounds_ & 7) == 0) {
        std::this_thread::yield();
      } else {
        pause();
      }
      return;
    }
    const std::int64_t longest = steady_now_ns() + std::chrono::nanoseconds(max_park_).count();
    park_until(queue, timer_ns > 0 ? std::min(timer_ns, longest) : longest);
  }

  // Parks at once (no spin) until steady-clock time `deadline_ns`; a push to
  // the queue or a stop ends it sooner. Returns at once when it is past.
  void park_until(ReceiveQueue& queue, std::int64_t deadline_ns) {
    rounds_ = std::max(rounds_, 1);
    parked_ = true;
    const std::int64_t until = deadline_ns - steady_now_ns();
    if (until > 0) queue.park(std::chrono::microseconds(until / 1000 + 1));
  }

 private:
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
