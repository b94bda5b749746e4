#include "rstorm/worker/acker_executor.hpp"

#include <algorithm>

namespace rstorm::worker {

AckerExecutor::AckerExecutor(const ExecutorEnv& env, const ExecutorPlan& plan, std::uint64_t seed)
    : Executor(env, plan, Transfer::Mode::kBlocking, std::chrono::milliseconds(50), seed),
      // Of N acker tasks, each takes every N-th root of a spout (root % N):
      // an executor of one task sees a spout's roots N apart.
      trees_(plan.tasks.size() == 1 ? env.plan->acker_tasks.size() : 1),
      timeout_ns_(std::chrono::nanoseconds(env.plan->settings.message_timeout).count()) {}

AckerExecutor::~AckerExecutor() {
  stop();
  join();
}

void AckerExecutor::run() {
  mark_ready();
  const std::int64_t sweep_period =
      std::clamp<std::int64_t>(timeout_ns_ / 10, 100'000'000, 1'000'000'000);
  Batch batch;
  while (!stop_requested()) {
    bool work = false;
    now_ = now_ns();
    for (int i = 0; i < 8 && queue_.try_pop(batch); ++i) {
      work = true;
      std::size_t messages = 0;
      for (const auto& e : batch) messages += handle(e);
      bump(stats_.executed, messages);
    }
    if (now_ >= next_sweep_ns_) {
      expire(now_);
      next_sweep_ns_ = now_ + sweep_period;
    }
    transfer_.flush();
    if (work) {
      idle_.reset();
    } else {
      transfer_.wake_consumers();
      idle_.idle(queue_, trees_.size() > 0 ? next_sweep_ns_ : 0);
    }
  }
}

std::size_t AckerExecutor::handle(const Envelope& e) {
  if (!is_acking(e.kind)) return 1;
  const std::size_t n = e.messages();
  for (std::size_t i = 0; i < n; ++i) handle(e.kind, e.root(i), e.value(i), e.task());
  return n;
}

void AckerExecutor::handle(MessageKind kind, std::uint64_t root, std::uint64_t value, TaskId task) {
  bool inserted = false;
  switch (kind) {
    case MessageKind::kAckInit: {
      Entry& en = trees_.get_or_insert(root, &inserted);
      if (inserted) en.created_ns = now_;
      en.value ^= value;
      en.spout = task;
      en.init = true;
      if (en.failed || en.value == 0) finish(root, en, !en.failed);
      break;
    }
    case MessageKind::kAck: {
      Entry& en = trees_.get_or_insert(root, &inserted);
      if (inserted) en.created_ns = now_;
      en.value ^= value;
      if (en.init && en.value == 0) finish(root, en, true);
      break;
    }
    case MessageKind::kFail: {
      Entry& en = trees_.get_or_insert(root, &inserted);
      if (inserted) en.created_ns = now_;
      en.failed = true;
      if (en.init) finish(root, en, false);
      break;
    }
    default:
      break;
  }
}

void AckerExecutor::finish(std::uint64_t root, Entry& entry, bool complete) {
  const TaskId spout = entry.spout;
  trees_.erase(root);  // `entry` is gone from here on
  emitter_.send_control(spout, complete ? MessageKind::kAckComplete : MessageKind::kAckFailed,
                        root, 0);
  bump(complete ? stats_.acked : stats_.failed);
}

void AckerExecutor::expire(std::int64_t now) {
  if (trees_.size() == 0) return;
  std::vector<std::uint64_t> old;
  trees_.for_each([&](std::uint64_t root, Entry& en) {
    if (now - en.created_ns >= timeout_ns_) old.push_back(root);
  });
  for (std::uint64_t root : old) trees_.erase(root);
}

}  // namespace rstorm::worker
