// BoltExecutor: runs the tasks of one bolt component: executes each input on
// its task, sends tick tuples at topology.tick.tuple.freq.secs, calls a
// TimedBolt's on_timer at its period (windowed bolts), turns an
// exception from user code into a failed input plus a counted, logged error,
// and flushes its batches after each burst. Its emits wait while a downstream
// queue is full (backpressure).
#pragma once

#include <exception>
#include <memory>
#include <vector>

#include "rstorm/bolt.hpp"
#include "rstorm/worker/executor.hpp"

namespace rstorm::worker {

class BoltExecutor final : public Executor {
 public:
  BoltExecutor(const ExecutorEnv& env, const ExecutorPlan& plan, std::uint64_t seed);
  // The tasks, `bolts` one instance per task of the plan, in task order. On
  // the executor's thread (Executor::launch), before start().
  void make_tasks(std::vector<std::unique_ptr<Bolt>> bolts);
  ~BoltExecutor() override;

  // A fused member (topology.fuse.executors) runs on its head's thread.
  bool open_inline() override;
  bool can_run_inline() const override { return !has_timed_bolt_; }
  void run_one_inline(Envelope& e) override;
  void close_inline() override;

  // The length of the next run of executes one of which is timed, for a
  // mean timed execute of `mean_ns` (0: none timed yet): 32, or
  // longer, a power of two up to 1024, when executes are so quick
  // that two clock reads per 32 of them would be a noticeable
  // part of the time (execute_sampled).
  static std::uint32_t sample_run_for(std::uint64_t mean_ns);

 private:
  class Collector;
  struct Task;

  void run() override;
  // Prepares every task; false (the executor marked fatal) when one threw.
  bool prepare_tasks();
  void cleanup_tasks();
  // `tick`: a tick tuple, counted apart from the inputs executed. One
  // execute in each run of sample_run_ is timed (execute_sampled). Inline
  // where it is called on the tuple path (the loop, run_inline).
  [[gnu::always_inline]] inline void execute(Task& task, const Tuple& input, bool tick);
  // Runs a fused member's input by a direct call, execute inline.
  friend void run_inline(BoltExecutor& member, Envelope& e);
  // Runs a batch of a fused hop's inputs, all for one task.
  friend void run_inline_batch(BoltExecutor& member, Envelope* es, std::size_t n);
  // execute of the `n` tuples at `es`, in order, for `task`.
  void execute_run(Task& task, Envelope* es, std::size_t n);
  [[gnu::noinline]] void execute_sampled(Task& task, const Tuple& input, bool tick);
  // The bolt's execute; an exception fails the input and is reported
  // (execute_threw, out of line).
  [[gnu::always_inline]] inline void call_bolt(Task& task, const Tuple& input);
  [[gnu::noinline, gnu::cold]] void execute_threw(Task& task, const Tuple& input,
                                                  std::exception_ptr error);
  // An ack's count: the input marked completed and counted acked, unless
  // it was already (false then). Collector::ack, and a BasicBolt's ack with
  // acking off (call_bolt), which has nothing else to do.
  bool count_ack(const Tuple& input) {
    if (input.completed()) return false;
    input.mark_completed();
    bump(stats_.acked);
    return true;
  }
  void send_ticks();
  // A TimedBolt's on_timer, its exception counted and logged as execute's.
  void run_timer(Task& task);
  // With checkpoints: an envelope for `task` (a tuple or a barrier), held
  // while its sender's barrier is aligned, else executed or aligned.
  void receive(Task& task, Envelope& e);
  void on_barrier(Task& task, std::int64_t id, TaskId from);
  // Logs, once, the first tuple received after a restore (recovery time).
  void note_resumed(const Task& task);
  void before_snapshot(TaskId task, std::int64_t id) override;
  // Ends the alignment of `task` and receives what it held, in order.
  void release(Task& task);

  std::vector<std::unique_ptr<Task>> tasks_;
  Task* only_task_ = nullptr;       // the task, when there is one
  std::int32_t first_task_ = 0;     // its first task's id
  std::vector<Task*> timed_tasks_;  // tasks whose bolt is a TimedBolt with a period
  bool has_timed_bolt_ = false;     // some task's bolt is a TimedBolt
  StreamInfo tick_info_;
  std::int64_t tick_period_ns_ = 0;
  std::int64_t next_tick_ns_ = 0;
  // Executes left until the next timed one, the place of the last timed one
  // in its run, the run's length (a power of two, kMinSampleRun to
  // kMaxSampleRun: longer for quick executes, so that reading the clock
  // stays a small part of the time), the mean of the timed executes that
  // chooses it, and the xorshift32 state that draws the next place
  // (execute_sampled).
  static constexpr std::uint32_t kMinSampleRun = 32;
  static constexpr std::uint32_t kMaxSampleRun = 1024;
  std::uint32_t sample_countdown_ = kMinSampleRun;
  std::uint32_t sample_place_ = kMinSampleRun - 1;
  std::uint32_t sample_run_ = kMinSampleRun;
  std::uint64_t sample_mean_ns_ = 0;
  std::uint32_t sample_state_ = 0x9E3779B9u;
  // While a burst runs, its output is handed on every flush interval
  // (topology.batch.flush.interval.millis): the clock is read once in
  // flush_stride_ inputs (flush_if_due), a stride fitted to the bolt's pace.
  static constexpr std::int64_t kMaxFlushStride = 256;
  void flush_if_due(std::int64_t& flushed_ns);
  std::int64_t flush_interval_ns_ = 1'000'000;
  std::uint32_t flush_stride_ = 1;
  std::uint32_t flush_countdown_ = 1;
  std::int64_t last_check_ns_ = 0;
  std::uint64_t waits_seen_ = 0;  // stats_.backpressure_waits at the last look
  bool prepared_ = false;  // every task prepared: cleanup is due
  bool checkpointing_ = false;  // topology.state.checkpointing
  bool resumed_ = false;        // a tuple was received (note_resumed)
};

}  // namespace rstorm::worker
