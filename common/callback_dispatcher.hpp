// CallbackDispatcher: one thread that runs posted tasks one at a time, in the
// order they were posted. The coordination stores deliver watch and session
// callbacks through it so that a callback may call back into the store (the
// ZooKeeper client's own event thread must never block on a synchronous call).
// The queue is unbounded: it carries control-plane events (a handful per
// second), and a producer on ZooKeeper's event thread must never block.
// Thread-safe.
//
// SessionListeners: the session-listener registry both stores share.
// Thread-safe; notify() runs on the dispatch thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "common/coordination_store.hpp"

namespace rstorm {

class CallbackDispatcher {
 public:
  CallbackDispatcher();
  ~CallbackDispatcher();  // stop()
  CallbackDispatcher(const CallbackDispatcher&) = delete;
  CallbackDispatcher& operator=(const CallbackDispatcher&) = delete;

  // Queues `task`; dropped when the dispatcher has stopped.
  void post(std::function<void()> task);
  // Runs the tasks already queued, then joins the thread. Idempotent.
  // REQUIRES: not called from a task, nor from two threads at once.
  void stop();
  // Blocks until every task posted before the call has run.
  // REQUIRES: not called from a task.
  void wait_idle();
  bool on_dispatch_thread() const { return std::this_thread::get_id() == thread_id_; }

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mutex_
  std::uint64_t posted_ = 0;                 // guarded by mutex_
  std::uint64_t done_ = 0;                   // guarded by mutex_
  bool stopping_ = false;                    // guarded by mutex_
  bool joined_ = false;                      // guarded by mutex_
  std::thread thread_;
  std::thread::id thread_id_;
};

class SessionListeners {
 public:
  std::uint64_t add(SessionCallback listener);
  void remove(std::uint64_t id);
  // Calls every listener registered now with `event`.
  void notify(SessionEvent event);

 private:
  // Recursive: a listener may add or remove listeners while being notified;
  // held during calls so that remove() returning means "no longer called".
  std::recursive_mutex mutex_;
  std::map<std::uint64_t, SessionCallback> listeners_;  // guarded by mutex_
  std::uint64_t next_id_ = 1;                           // guarded by mutex_
};

}  // namespace rstorm
