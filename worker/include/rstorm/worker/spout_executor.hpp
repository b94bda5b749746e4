// SpoutExecutor: runs the tasks of one spout component. Its loop drains acks
// and fails from the ackers, times out trees older than
// topology.message.timeout.secs, asks each task for tuples (unless the
// component is deactivated, a downstream queue is full, or the task has
// topology.max.spout.pending trees in flight), and flushes its batches. Its
// emits never block, so it always keeps draining acks: that is what keeps the
// acker and the bolts that wait on it from deadlocking.
#pragma once

#include <memory>
#include <vector>

#include "rstorm/spout.hpp"
#include "rstorm/worker/ack_table.hpp"
#include "rstorm/worker/executor.hpp"

namespace rstorm::worker {

class SpoutExecutor final : public Executor {
 public:
  // With topology.max.spout.pending null (and acking on), each spout task
  // bounds its trees in flight adaptively: the bound starts at
  // kInitialPendingLimit, grows by one per tree that completes within a
  // quarter of topology.message.timeout.secs, holds while trees take a quarter
  // to a half, and is halved (to half of what is in flight, at most once per
  // such wait) when a tree takes longer or times out. Fast topologies never
  // reach it; a slow bolt cannot fill its queue with more than the timeout's
  // worth of work, where every tree would time out and be replayed for ever.
  static constexpr double kInitialPendingLimit = 1024;
  static constexpr double kMaxPendingLimit = 1 << 24;

  // `spouts`: one instance per task of the plan, in task order.
  SpoutExecutor(const ExecutorEnv& env, const ExecutorPlan& plan, std::uint64_t seed);
  // The tasks, `spouts` one instance per task of the plan, in task order. On
  // the executor's thread (Executor::launch), before start().
  void make_tasks(std::vector<std::unique_ptr<Spout>> spouts);
  ~SpoutExecutor() override;

  bool finished() const override {
    return finished_tasks_.load(std::memory_order_relaxed) == tasks_.size();
  }
  std::uint64_t in_flight() const override {
    return in_flight_.load(std::memory_order_relaxed);
  }
  void set_active(bool active) override;
  std::int64_t stalled_ns(std::int64_t now_ns) const override {
    if (!waiting_.load(std::memory_order_acquire)) return 0;
    const std::int64_t since = waiting_since_ns_.load(std::memory_order_relaxed);
    return now_ns > since ? now_ns - since : 0;
  }

 private:
  class Collector;
  struct Task;
  struct Pending {
    Value msg_id;
    int task = 0;  // index into tasks_
    std::int64_t emitted_ns = 0;
  };

  void run() override;
  // Checkpoints: the coordinator starts one every interval (and gives one up
  // that failed or took too long); every spout task stores its part at its
  // barrier.
  void coordinate_checkpoints(std::int64_t now);
  void part_done(std::int64_t id, TaskId task, std::uint64_t bytes);
  void give_up_checkpoint(const std::string& why);
  bool drain_queue();
  void handle(Envelope& e);
  void complete(std::uint64_t root, bool acked);
  // What completing a tree of `t` emitted at `emitted_ns` does once it is
  // out of the pending table (`was_pending`) or never was in it: stats, the
  // adaptive bound, the spout's ack or fail.
  void finish_tree(Task& t, const Value& msg_id, std::int64_t emitted_ns, bool acked,
                   bool was_pending);
  void expire_timed_out(std::int64_t now);
  bool call_next_tuple();
  void ack_unreliable();
  // Completes the trees that ran and were acked wholly inside their emit
  // (LocalTree): after next_tuple, never inside it.
  void complete_here();
  void apply_activation();
  void adapt_limit(Task& t, std::int64_t latency_ns);
  // At its bound with nothing completed for window_starve: doubles the bound.
  void raise_starved_limit(Task& t);
  // Records progress (a completed tree, an untracked emit) and whether the
  // spout waits on something, for stalled_ns().
  void track_progress(bool blocked);

  std::vector<std::unique_ptr<Task>> tasks_;
  AckTable<Pending> pending_;
  std::vector<std::pair<int, Value>> immediate_acks_;  // acking off: ack at once
  // A tree that ran and was acked wholly inside its emit: never in pending_.
  struct CompletedHere {
    // A constructor, not aggregate initialization: emplace_back builds one
    // in place, and clang has no parenthesized aggregate initialization.
    CompletedHere(int t, Value id, std::int64_t ns)
        : task(t), msg_id(std::move(id)), emitted_ns(ns) {}
    int task;
    Value msg_id;
    std::int64_t emitted_ns;
  };
  std::vector<CompletedHere> completed_here_;          // see complete_here()
  std::vector<CompletedHere> completing_;              // complete_here()'s, reused
  // Trees not yet acked or failed: pending, or complete and waiting for
  // their ack() (while complete_here runs, counted until it returns).
  void store_in_flight() {
    in_flight_.store(pending_.size() + completed_here_.size() + completing_.size(),
                     std::memory_order_relaxed);
  }
  LocalTree local_tree_state_;                         // local_tree_ when a fused head
  std::atomic<bool> want_active_{true};
  bool active_ = false;
  std::atomic<std::uint64_t> in_flight_{0};
  std::atomic<std::size_t> finished_tasks_{0};  // tasks that called finish()
  std::int64_t next_sweep_ns_ = 0;
  std::int64_t sweep_period_ns_;
  std::int64_t timeout_ns_;
  std::int64_t latency_target_ns_;  // half the message timeout beyond windows' hold
  double min_limit_;                 // the adaptive bound's floor (windows to fill)
  std::int64_t starve_ns_;           // RuntimeSettings::window_starve; 0: off
  // topology.max.spout.pending of this spout: its own (add_configuration,
  // Storm's setMaxSpoutPending) else the topology's; 0 for none.
  std::uint32_t max_pending_;
  bool adaptive_;                   // max.spout.pending null and acking on
  std::size_t burst_;
  std::uint64_t emits_ = 0;
  std::int64_t now_ns_ = 0;        // refreshed each loop and every 16 reliable emits
  std::uint32_t clock_reads_ = 0;  // emits so far (to see whether next_tuple emitted)
  // A next_tuple call emitted nothing: the next call waits until this time.
  std::int64_t next_poll_ns_ = 0;
  bool progressed_ = false;        // a tree completed or an untracked emit, this pass
  // Since when the spout waits without progress (valid while waiting_).
  std::atomic<std::int64_t> waiting_since_ns_{0};
  std::atomic<bool> waiting_{false};
  // The checkpoint coordinator (this executor runs the plan's
  // checkpoint_coordinator task): the last id used, the one in progress (0:
  // none), when it started, the tasks that stored their part (index: task
  // id) and how many bytes, and when the next one is due.
  bool coordinator_ = false;
  std::int64_t checkpoint_id_ = 0;
  std::int64_t checkpoint_running_ = 0;
  std::int64_t checkpoint_started_ns_ = 0;
  std::int64_t checkpoint_started_ms_ = 0;
  std::vector<char> checkpoint_parts_;
  int checkpoint_parts_done_ = 0;
  std::uint64_t checkpoint_bytes_ = 0;
  std::int64_t next_checkpoint_ns_ = 0;
};

}  // namespace rstorm::worker
