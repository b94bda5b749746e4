// ExecutorStats: plain counters of one executor. Written only by the
// executor's thread (single writer: load + store, no atomic read-modify-write),
// read from any thread at any time without locks (relaxed atomics): a metrics
// layer reads them at scrape time.
#pragma once

#include <atomic>
#include <cstdint>

namespace rstorm::worker {

struct alignas(64) ExecutorStats {
  std::atomic<std::uint64_t> emitted{0};      // emit calls
  std::atomic<std::uint64_t> transferred{0};  // tuples sent to tasks (emits x targets)
  std::atomic<std::uint64_t> acked{0};        // spout: trees completed; bolt: inputs acked
  std::atomic<std::uint64_t> failed{0};       // spout: trees failed/timed out; bolt: inputs failed
  std::atomic<std::uint64_t> executed{0};     // bolt: inputs executed
  std::atomic<std::uint64_t> errors{0};       // exceptions and report_error calls
  std::atomic<std::uint64_t> execute_ns{0};   // sum over sampled executes
  std::atomic<std::uint64_t> execute_samples{0};
  std::atomic<std::uint64_t> complete_ns{0};  // spout: sum of emit-to-ack times
  std::atomic<std::uint64_t> complete_samples{0};
  std::atomic<std::uint64_t> backpressure_waits{0};  // times a full queue made it wait
  std::atomic<bool> throttled{false};                // spout: not calling next_tuple
};

// Single-writer increment.
inline void bump(std::atomic<std::uint64_t>& counter, std::uint64_t n = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

}  // namespace rstorm::worker
