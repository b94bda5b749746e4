#include "common/callback_dispatcher.hpp"

#include <vector>

namespace rstorm {

CallbackDispatcher::CallbackDispatcher() {
  std::unique_lock lock(mutex_);
  thread_ = std::thread([this] { run(); });
  thread_id_ = thread_.get_id();
}

CallbackDispatcher::~CallbackDispatcher() { stop(); }

void CallbackDispatcher::post(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    queue_.push_back(std::move(task));
    ++posted_;
  }
  cv_.notify_all();
}

void CallbackDispatcher::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  joined_ = true;
  cv_.notify_all();
}

void CallbackDispatcher::wait_idle() {
  std::unique_lock lock(mutex_);
  const std::uint64_t target = posted_;
  cv_.wait(lock, [&] { return done_ >= target || joined_; });
}

void CallbackDispatcher::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping and drained
    auto task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
    lock.lock();
    ++done_;
    cv_.notify_all();
  }
}

std::uint64_t SessionListeners::add(SessionCallback listener) {
  std::lock_guard lock(mutex_);
  const std::uint64_t id = next_id_++;
  listeners_.emplace(id, std::move(listener));
  return id;
}

void SessionListeners::remove(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  listeners_.erase(id);
}

void SessionListeners::notify(SessionEvent event) {
  std::lock_guard lock(mutex_);
  std::vector<std::uint64_t> ids;
  for (const auto& [id, listener] : listeners_) ids.push_back(id);
  for (auto id : ids) {
    auto it = listeners_.find(id);
    if (it == listeners_.end()) continue;  // removed by an earlier listener
    SessionCallback listener = it->second;  // a copy: it may remove itself
    listener(event);
  }
}

}  // namespace rstorm
