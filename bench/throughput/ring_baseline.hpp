// The machine's limit for the bench's shape: three threads (source -> map ->
// sink) joined by two bounded single-producer single-consumer rings, moving
// {uint64, uint64} tuples by value. Positions are published once per batch of
// 256, so the rings cost a few cache-line transfers per batch; a thread with
// nothing to do spins briefly and then yields (three threads share two cores).
// No engine can move this shape faster on this machine, so rstorm's figure is
// printed as a ratio to it.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace rstorm_bench {

struct TwoInts {
  std::uint64_t a = 0;
  std::uint64_t b = 0;
};

class SpscRing {
 public:
  static constexpr std::size_t kBatch = 256;

  explicit SpscRing(std::size_t capacity) : slots_(capacity), mask_(capacity - 1) {}

  // Producer side: room for `n` more items, waiting (spin, then yield) while full.
  // false when `stop` was raised meanwhile.
  bool wait_room(std::size_t n, const std::atomic<bool>& stop) {
    for (int spins = 0; head_local_ + n - tail_cache_ > slots_.size(); ++spins) {
      tail_cache_ = tail_.load(std::memory_order_acquire);
      if (head_local_ + n - tail_cache_ <= slots_.size()) break;
      if (stop.load(std::memory_order_relaxed)) return false;
      idle(spins);
    }
    return true;
  }
  TwoInts& slot(std::size_t i) { return slots_[(head_local_ + i) & mask_]; }
  void publish(std::size_t n) {
    head_local_ += n;
    head_.store(head_local_, std::memory_order_release);
  }

  // Consumer side: items available (waiting while none), 0 when stopped.
  std::size_t wait_items(const std::atomic<bool>& stop) {
    for (int spins = 0;; ++spins) {
      const std::size_t head = head_.load(std::memory_order_acquire);
      if (head != tail_local_) return head - tail_local_;
      if (stop.load(std::memory_order_relaxed)) return 0;
      idle(spins);
    }
  }
  const TwoInts& item(std::size_t i) const { return slots_[(tail_local_ + i) & mask_]; }
  void release(std::size_t n) {
    tail_local_ += n;
    tail_.store(tail_local_, std::memory_order_release);
  }

 private:
  static void idle(int spins) {
    if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      std::this_thread::yield();
    }
  }

  std::vector<TwoInts> slots_;
  std::size_t mask_;
  alignas(64) std::atomic<std::size_t> head_{0};
  alignas(64) std::size_t head_local_ = 0;
  std::size_t tail_cache_ = 0;
  alignas(64) std::atomic<std::size_t> tail_{0};
  alignas(64) std::size_t tail_local_ = 0;
};

inline volatile std::uint64_t observed_checksum = 0;

// Median tuples/s at the sink over `windows` windows of `window`, after a
// warm-up of one window; every window's rate goes to `all`.
inline double ring_baseline(int windows, std::chrono::milliseconds window,
                            std::vector<double>* all) {
  constexpr std::size_t kCapacity = 8192;
  auto in = std::make_unique<SpscRing>(kCapacity);
  auto out = std::make_unique<SpscRing>(kCapacity);
  std::atomic<bool> stop{false};
  alignas(64) std::atomic<std::uint64_t> received{0};
  std::uint64_t checksum = 0;

  std::thread source([&] {
    std::uint64_t seq = 0;
    while (in->wait_room(SpscRing::kBatch, stop)) {
      for (std::size_t i = 0; i < SpscRing::kBatch; ++i) in->slot(i) = {seq++, 42};
      in->publish(SpscRing::kBatch);
    }
  });
  std::thread map([&] {
    for (;;) {
      const std::size_t n = std::min(in->wait_items(stop), SpscRing::kBatch);
      if (n == 0 || !out->wait_room(n, stop)) return;
      for (std::size_t i = 0; i < n; ++i) out->slot(i) = in->item(i);  // identity
      in->release(n);
      out->publish(n);
    }
  });
  std::thread sink([&] {
    std::uint64_t sum = 0;
    std::uint64_t count = 0;
    for (;;) {
      const std::size_t n = out->wait_items(stop);
      if (n == 0) break;
      for (std::size_t i = 0; i < n; ++i) sum += out->item(i).a ^ out->item(i).b;
      out->release(n);
      count += n;
      received.store(count, std::memory_order_relaxed);
    }
    checksum = sum;
  });

  using Clock = std::chrono::steady_clock;
  std::this_thread::sleep_for(window);  // warm-up
  std::vector<double> rates;
  auto last = received.load(std::memory_order_relaxed);
  auto last_at = Clock::now();
  for (int i = 0; i < windows; ++i) {
    std::this_thread::sleep_for(window);
    const auto now_count = received.load(std::memory_order_relaxed);
    const auto now = Clock::now();
    rates.push_back(static_cast<double>(now_count - last) /
                    std::chrono::duration<double>(now - last_at).count());
    last = now_count;
    last_at = now;
  }
  stop.store(true);
  source.join();
  map.join();
  sink.join();
  observed_checksum = checksum;  // keeps the sink's work observable
  *all = rates;
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace rstorm_bench
