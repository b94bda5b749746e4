// How long a cache line takes to go from one core to another and back on
// this machine, now: two threads, pinned to the first two CPUs the process
// may use, bounce a counter. On a VM this is not a constant: the host may
// run the two vCPUs on cores near each other or far apart, and move them
// (on the 2-core EPYC VM of 2026-12-05 it sat at about 118 ns, then at about
// 515 ns for 35 s, then at 118 again). Every figure of executors on two
// cores moves with it, so the benches print it beside each.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace rstorm_bench {

// The median of five bursts of `trips` round trips, in nanoseconds; 0 when
// the process may use fewer than two CPUs.
inline double cross_core_round_trip_ns(int trips = 4000) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2) return 0;
  int cpus[2] = {-1, -1};
  for (int c = 0, found = 0; c < CPU_SETSIZE && found < 2; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus[found++] = c;
  }
  auto pin = [](int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
  };
  struct alignas(64) Line {
    std::atomic<int> value{0};
  };
  std::vector<double> bursts;
  for (int burst = 0; burst < 5; ++burst) {
    Line ping;
    Line pong;
    std::thread echo([&] {
      pin(cpus[1]);
      for (int i = 1; i <= trips; ++i) {
        while (ping.value.load(std::memory_order_acquire) != i) {
        }
        pong.value.store(i, std::memory_order_release);
      }
    });
    double ns = 0;
    std::thread probe([&] {
      pin(cpus[0]);
      const auto start = std::chrono::steady_clock::now();
      for (int i = 1; i <= trips; ++i) {
        ping.value.store(i, std::memory_order_release);
        while (pong.value.load(std::memory_order_acquire) != i) {
        }
      }
      ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
               .count() /
           trips;
    });
    probe.join();
    echo.join();
    bursts.push_back(ns);
  }
  std::sort(bursts.begin(), bursts.end());
  return bursts[bursts.size() / 2];
}

}  // namespace rstorm_bench
