// Bounded polling for tests: no fixed sleeps, no timing assertions.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace rstorm::testing {

// Calls `condition` until it returns true or `timeout` passes; returns its last result.
template <typename F>
bool eventually(F&& condition, std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Collects values pushed from other threads; wait_for_size() blocks with a deadline.
template <typename T>
class Recorder {
 public:
  void push(T value) {
    // Notify under the lock: a waiter that wakes may destroy the Recorder.
    std::lock_guard lock(mutex_);
    values_.push_back(std::move(value));
    cv_.notify_all();
  }
  bool wait_for_size(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return values_.size() >= n; });
  }
  std::vector<T> values() const {
    std::lock_guard lock(mutex_);
    return values_;
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return values_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<T> values_;
};

}  // namespace rstorm::testing
