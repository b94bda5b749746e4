// ExecutorStats: plain counters of one executor. Written only by the
// executor's thread (single writer: load + store, no atomic read-modify-write)
// except `errors` and the checkpoint part counters, which the checkpoint
// uploader's thread also counts (fetch_add); read from any thread at any time without locks
// (relaxed atomics): a metrics layer reads them at scrape time.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace rstorm::worker {

// Latency histogram with fixed bucket bounds (1 us .. 10 s, the same bounds
// as metrics::latency_buckets_seconds()): one relaxed counter per bucket,
// written by one thread, no lock and no allocation per record.
struct LatencyBuckets {
  static constexpr std::array<std::uint64_t, 22> kUpperBoundsNs = {
      1'000,       2'500,       5'000,         10'000,        25'000,       50'000,
      100'000,     250'000,     500'000,       1'000'000,     2'500'000,    5'000'000,
      10'000'000,  25'000'000,  50'000'000,    100'000'000,   250'000'000,  500'000'000,
      1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000};
  static constexpr std::size_t kBuckets = kUpperBoundsNs.size() + 1;  // last: +Inf

  // The first bucket whose upper bound is at least `ns`. Its bit width
  // names the first bucket that can hold it (kFirstByWidth), and at most two
  // bounds lie within one power of two: a couple of compares, not a binary
  // search (45 instructions of a fused chain's 800 a tuple).
  static std::size_t bucket_of(std::uint64_t ns) {
    std::size_t b = kFirstByWidth[static_cast<std::size_t>(std::bit_width(ns))];
    while (b < kUpperBoundsNs.size() && kUpperBoundsNs[b] < ns) ++b;
    return b;
  }
  // Index: bit width w; the first bucket whose bound is at least the least
  // value of that width (2^(w-1); 0 for width 0).
  static constexpr std::array<std::uint8_t, 65> kFirstByWidth = [] {
    std::array<std::uint8_t, 65> first{};
    for (std::size_t w = 0; w < first.size(); ++w) {
      const std::uint64_t least = w == 0 ? 0 : std::uint64_t{1} << (w - 1);
      std::size_t b = 0;
      while (b < kUpperBoundsNs.size() && kUpperBoundsNs[b] < least) ++b;
      first[w] = static_cast<std::uint8_t>(b);
    }
    return first;
  }();

  std::array<std::atomic<std::uint64_t>, kBuckets> counts{};  // not cumulative
};

struct alignas(64) ExecutorStats {
  std::atomic<std::uint64_t> emitted{0};      // emit calls
  std::atomic<std::uint64_t> transferred{0};  // tuples sent to tasks (emits x targets)
  std::atomic<std::uint64_t> acked{0};        // spout: trees completed; bolt: inputs acked
  std::atomic<std::uint64_t> failed{0};       // spout: trees failed/timed out; bolt: inputs failed
  std::atomic<std::uint64_t> executed{0};     // bolt: inputs executed (tick tuples not counted)
  std::atomic<std::uint64_t> ticks{0};        // bolt: tick tuples executed
  std::atomic<std::uint64_t> errors{0};       // exceptions and report_error calls
  std::atomic<std::uint64_t> execute_ns{0};   // sum over sampled executes
  std::atomic<std::uint64_t> execute_samples{0};
  std::atomic<std::uint64_t> complete_ns{0};  // spout: sum of emit-to-ack times
  std::atomic<std::uint64_t> complete_samples{0};
  std::atomic<std::uint64_t> backpressure_waits{0};  // times a full queue made it wait
  std::atomic<std::uint64_t> backpressure_wait_ns{0};  // time spent in those waits
  std::atomic<bool> throttled{false};                // spout: not calling next_tuple
  std::atomic<std::uint64_t> throttled_ns{0};        // spout: time spent throttled
  std::atomic<std::uint64_t> pending_limit{0};       // spout: adaptive bound on trees in flight (0: none)
  std::atomic<std::uint64_t> pending_limit_cuts{0};  // spout: times that bound was halved
  // Checkpoints (checkpoint.hpp).
  std::atomic<std::uint64_t> checkpoint_parts{0};          // parts its tasks stored
  std::atomic<std::uint64_t> checkpoint_part_failures{0};  // parts that could not be stored
  std::atomic<std::uint64_t> checkpoint_bytes{0};          // bytes of those parts
  std::atomic<std::uint64_t> checkpoint_alignment_ns{0};   // inputs held while aligning
  std::atomic<std::uint64_t> checkpoint_snapshot_ns{0};    // storing the parts
  // The coordinator's executor only.
  std::atomic<std::uint64_t> checkpoints_completed{0};
  std::atomic<std::uint64_t> checkpoints_failed{0};  // abandoned: a part failed or timed out
  std::atomic<std::uint64_t> last_checkpoint_id{0};
  std::atomic<std::uint64_t> last_checkpoint_ms{0};  // wall clock when it completed
  std::atomic<std::uint64_t> last_checkpoint_duration_ns{0};
  std::atomic<std::uint64_t> last_checkpoint_bytes{0};
  LatencyBuckets execute_latency;   // sampled executes, as execute_ns
  LatencyBuckets complete_latency;  // every completed tree, as complete_ns
};

// Single-writer increment. Always inline: a load, an add and a store, on
// the tuple path; a call there would cost more than the count.
[[gnu::always_inline]] inline void bump(std::atomic<std::uint64_t>& counter, std::uint64_t n = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

// Single-writer record of one latency: sum, count and bucket.
inline void record_latency(std::atomic<std::uint64_t>& sum_ns, std::atomic<std::uint64_t>& count,
                           LatencyBuckets& buckets, std::uint64_t ns) {
  bump(sum_ns, ns);
  bump(count);
  bump(buckets.counts[LatencyBuckets::bucket_of(ns)]);
}

}  // namespace rstorm::worker
