// CallbackLifeline: lets the watch callbacks an object hands to a
// coordination store reach it only while it lives. A store runs a callback on
// its dispatch thread whenever the watch fires, which may be while the object
// that set it is being destroyed or after (its last watch outlives it). A
// guarded callback runs its body under the lifeline's mutex and only while
// the lifeline is open; close() waits for a body that is running and makes
// every later one a no-op.
//
// Thread-safe. REQUIRES: close() is not called from a guarded callback, and
// a guarded body does not wait for a thread that may be in close().
#pragma once

#include <memory>
#include <mutex>
#include <utility>

namespace rstorm {

class CallbackLifeline {
 public:
  CallbackLifeline() : state_(std::make_shared<State>()) {}
  ~CallbackLifeline() { close(); }
  CallbackLifeline(const CallbackLifeline&) = delete;
  CallbackLifeline& operator=(const CallbackLifeline&) = delete;

  // `body`, to be called with the callback's arguments while open.
  template <typename F>
  auto guard(F body) const {
    return [state = state_, body = std::move(body)](auto&&... args) {
      std::lock_guard lock(state->mutex);
      if (state->open) body(std::forward<decltype(args)>(args)...);
    };
  }

  void close() {
    std::lock_guard lock(state_->mutex);
    state_->open = false;
  }

 private:
  struct State {
    std::mutex mutex;
    bool open = true;
  };
  std::shared_ptr<State> state_;  // shared with every guarded callback
};

}  // namespace rstorm
