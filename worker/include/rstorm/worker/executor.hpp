// Executor: one thread running one or more tasks of one component, with its
// bounded receive queue, its outgoing Transfer, its Emitter and its counters.
// Subclasses (spout, bolt, acker) supply the loop.
//
// Thread contract: launch/start/stop/join and the const accessors from the owning
// runtime's thread; everything else runs on the executor's own thread. stats()
// may be read from any thread at any time.
#pragma once

#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "rstorm/status.hpp"
#include "rstorm/worker/emitter.hpp"
#include "rstorm/worker/executor_stats.hpp"
#include "rstorm/worker/idle_strategy.hpp"
#include "rstorm/worker/receive_queue.hpp"
#include "rstorm/worker/topology_plan.hpp"
#include "rstorm/worker/transfer.hpp"

namespace rstorm::worker {

// What the executors of one running topology share. Borrowed; outlives them.
class CheckpointUploader;

struct ExecutorEnv {
  const TopologyPlan* plan = nullptr;
  std::vector<TupleSink*> sinks;  // index: executor index, then one per remote task
  std::vector<int> task_sink;     // index: task id -> index into sinks
  std::vector<const ComponentPlan*> sink_components;  // index: sink; whose tasks it takes
  std::shared_ptr<spdlog::logger> logger;
  const std::atomic<bool>* stopping = nullptr;
  // Checkpoints: stores the tasks' parts off their threads; null: stored on
  // the task's thread.
  CheckpointUploader* uploader = nullptr;
};

// A fused chain with acking (topology.fuse.executors): while its spout head
// emits a reliable tuple, the members run that tuple's tree on the same
// thread, inside the emit. Their acks of it are XORed here instead of sent to
// an acker; the spout then sends the acker one init carrying the XOR of its
// edges and of those acks, or, when that is zero (the whole tree ran and was
// acked inside the emit), sends nothing and completes the tree itself. A tree
// that reaches other threads completes at the acker as before.
struct LocalTree {
  std::uint64_t root = 0;  // the tree being emitted; 0: none
  std::uint64_t acks = 0;  // XOR of the acks of it made meanwhile
};

// One error a task reported or threw, kept for heartbeats.
struct RecentError {
  TaskId task;
  std::int64_t time_ms = 0;  // wall clock, ms since the epoch
  std::string message;       // at most kMaxErrorMessage bytes
};

class Executor {
 public:
  // Errors kept per executor (newest kept) and the longest message kept.
  static constexpr std::size_t kMaxRecentErrors = 5;
  static constexpr std::size_t kMaxErrorMessage = 1024;

  Executor(const ExecutorEnv& env, const ExecutorPlan& plan, Transfer::Mode mode,
           std::chrono::microseconds max_park, std::uint64_t seed);
  virtual ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Makes the executor's thread and runs `construct` on it (the tasks'
  // spout or bolt instances and what the executor keeps per task), so that
  // they are allocated by the thread that writes them: glibc gives each
  // thread its own arena, and instances of two executors made one after the
  // other by one thread could share a cache line, each thread's writes then
  // stalling the other (two fused chains no faster than one). Returns what
  // `construct` returned, or threw, once it has run; the thread then waits
  // for start() or stop(). Called once, before start().
  api::Status launch(const std::function<api::Status()>& construct);
  // Lets the executor's thread open its fused members (below), run the
  // loop, then close them (launching it first when launch() was not
  // called). An inline member runs on its head's thread: its start() binds
  // its sinks, resolves its fused hop and lets its own thread end; it must
  // come before its head's (TopologyRuntime::start starts members first).
  void start();
  // Asks the loop to end (it then closes its tasks) and wakes it, or the
  // thread waiting for start().
  void stop();
  void join();

  ReceiveQueue& queue() { return queue_; }
  const ExecutorStats& stats() const { return stats_; }
  const ExecutorPlan& plan() const { return plan_; }
  const TopologyPlan& topology_plan() const { return *env_.plan; }
  // Spouts: reliable tuples not yet acked or failed.
  virtual std::uint64_t in_flight() const { return 0; }
  // Spouts: every task said it has no more input (SpoutOutputCollector::finish).
  // Any thread.
  virtual bool finished() const { return false; }
  // Spouts: how long, at steady-clock time `now_ns`, the spout has been
  // waiting without progress: trees pending (or its output held back by a full
  // queue) and no tree completed (or, untracked, emitted) since. 0 when it is
  // not waiting. Any thread.
  virtual std::int64_t stalled_ns(std::int64_t now_ns) const { return 0; }
  // Spouts: asks the loop to call activate()/deactivate() on its tasks.
  virtual void set_active(bool active) {}
  // Steady-clock time in ns (the clock of stalled_ns()).
  static std::int64_t now_ns() { return steady_now_ns(); }
  // The last kMaxRecentErrors errors, oldest first. Any thread.
  std::vector<RecentError> recent_errors() const;
  // Errors are logged at most one a second; those held back are counted on
  // the next one logged. This logs that count when no error came since (a
  // burst that ended), once a second has passed or at once with `now`.
  // Any thread (the worker's heartbeat; the executor's as it ends).
  void log_errors_not_logged(bool now = false);
  // Why this executor cannot run (a task's open or prepare threw), naming the
  // component and task; empty while it can. As in Storm, such an executor's
  // worker must end: its task never became ready. Any thread.
  std::string fatal_error() const;
  // Checkpoints: reads `state` (frozen at the barrier; empty: no state),
  // stores it as `task`'s part of checkpoint `checkpoint`, counts it (or its
  // failure, reported naming the task and checkpoint), and returns what the
  // coordinator is told: the part's size, or kCheckpointPartFailed. Any
  // thread (CheckpointUploader's).
  std::uint64_t store_part(TaskId task, std::int64_t checkpoint, const StateStore::Frozen& state);
  // Whether every task of this executor is open or prepared (the loop runs).
  // Any thread.
  bool ready() const { return ready_.load(std::memory_order_acquire); }

  // --- Fused executors (topology.fuse.executors; TopologyRuntime decides). ---
  // An inline member runs on its head's thread: the head's output to it goes
  // through an InlineSink, which runs each batch by function call. Set up
  // before start(); the head then opens and closes its members.
  void add_member(Executor* member) {
    member->head_ = this;
    members_.push_back(member);
  }
  // The executor whose thread runs this one; nullptr when it has its own.
  const Executor* head() const { return head_; }
  // Makes this executor's round robin for subscription `counter_index` use
  // only `tasks` (a head sends only to its own member's tasks).
  void pin_route(int counter_index, const std::vector<TaskId>* tasks) {
    emitter_.pin(counter_index, tasks);
  }
  // Members only, on the head's thread: open the tasks (false when one failed:
  // fatal_error() says which), run one envelope (its output kept for the next
  // flush), flush, close.
  virtual bool open_inline() { return false; }
  // False when it needs its own thread (a bolt with a timer: windowed bolts).
  virtual bool can_run_inline() const { return true; }
  virtual void run_one_inline(Envelope& e) {}
  void flush_inline() { transfer_.flush(); }
  // As a member: its head ran out of work (Transfer::wake_consumers).
  void wake_inline() { transfer_.wake_consumers(); }
  virtual void close_inline() {}

 protected:
  // The loop, on the executor's thread; returns once stop_requested().
  virtual void run() = 0;

  bool stop_requested() const { return stop_.load(std::memory_order_relaxed); }
  // Counts an error and logs it with its context, at most once a second.
  // Any thread.
  void report_error(TaskId task, std::string_view what);
  // Reports the error and marks the executor as unable to run (fatal_error()).
  void report_fatal(TaskId task, std::string_view what);
  // The context a task of this executor is opened or prepared with (its id,
  // its index among the component's tasks, the topology's layout, metrics
  // and state backend). On the executor's thread (make_tasks).
  std::unique_ptr<TopologyContext> make_context(TaskId task) const;
  // Called by run() once every task is open or prepared.
  void mark_ready() { ready_.store(true, std::memory_order_release); }
  // Checkpoints: the barrier of checkpoint `id` has reached `task` on every
  // input. Stores its part (a snapshot of its state store), sends the
  // barrier on to every downstream task, behind what it emitted so far, and
  // reports the part done (or failed, logged naming the task) to the
  // coordinator.
  void complete_barrier(TaskId task, std::int64_t id);
  // Called by complete_barrier right before `task`'s store is snapshotted:
  // a bolt writes what it keeps in memory (Bolt::pre_checkpoint). An
  // exception fails the task's part.
  virtual void before_snapshot(TaskId task, std::int64_t id) {}

  // Opens the fused members (recursively), handing them local_tree_; false
  // when one failed.
  bool open_members();
  void close_members();
  bool has_members() const { return !members_.empty(); }

  const ExecutorEnv& env_;
  const ExecutorPlan& plan_;
  ReceiveQueue queue_;
  ExecutorStats stats_;
  Transfer transfer_;
  Emitter emitter_;
  IdleStrategy idle_;
  // A spout head's tree being emitted, shared with its fused members (on its
  // thread); nullptr when not in such a chain.
  LocalTree* local_tree_ = nullptr;
  // The one hop of every usual emit (the default stream, routed to one
  // task) when that task is a fused member run on this thread: resolved at
  // start(), so that such an emit fills the member's input and calls it
  // with no route, batch or sink looked up. member == nullptr: none.
  struct FusedHop {
    BoltExecutor* member = nullptr;
    TaskId dest;
    const StreamInfo* info = nullptr;
    // info->fields.size(), kept here as RouteState::num_fields is: the
    // emit's arity check then needs one load, not two. kNoHop when there
    // is no hop, so that the arity check is also the test for one.
    static constexpr std::size_t kNoHop = ~std::size_t{0};
    std::size_t num_fields = kNoHop;
    // num_fields when a bolt's anchors change nothing on the hop (acking
    // off), kNoHop otherwise: a BasicBolt's emit, always anchored, passes
    // one test to the hop.
    std::size_t plain_fields = kNoHop;
  };
  FusedHop hop_;
  // Fills `e` (a slot of the hop's batch, or the inline envelope) as
  // hop_'s input from `source_task` with copies of `values`
  // (Tuple::reassign_scalars), the values first, then what it needs from
  // hop_. False when that would allocate or free: the emit takes the
  // routed path then.
  [[gnu::always_inline]] bool fill_hop_input(Envelope& e, TaskId source_task,
                                             std::span<const Value> values) {
    if (!e.tuple.reassign_scalars(values)) return false;
    e.dest = hop_.dest;
    e.kind = MessageKind::kTuple;
    e.tuple.set_source(hop_.info, source_task);
    return true;
  }
  // fill_hop_input for a slot of the hop's batch, which holds its
  // destination, kind and stream from the start (Transfer::bind_hop) and is
  // never anchored: only the values, completion and the source task are
  // written. fill_hop_pair: two values (the usual tuple), no call on the
  // way; fill_hop_any: any values, a string or bytes copied (and the
  // transfer told: Transfer::hop_slot). REQUIRES: as many values as the
  // hop's fields.
  [[gnu::always_inline]] bool fill_hop_pair(Envelope& e, TaskId source_task,
                                            std::span<const Value> values) {
    if (values.size() != 2 || !e.tuple.refill_scalar_pair(values.data())) return false;
    if (e.tuple.source_task() != source_task) [[unlikely]] e.tuple.set_source_task(source_task);
    return true;
  }
  void fill_hop_any(Envelope& e, TaskId source_task, std::span<const Value> values) {
    if (!e.tuple.refill_scalars(values)) {
      e.tuple.reset_tracking();
      e.tuple.mutable_values().assign(values.begin(), values.end());
      transfer_.hop_holds_mixed();
    }
    e.tuple.set_source_task(source_task);
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<bool> ready_{false};
  std::int64_t last_error_log_ns_ = 0;   // GUARDED_BY(errors_mutex_)
  std::uint64_t errors_not_logged_ = 0;  // GUARDED_BY(errors_mutex_)
  // Errors are rare: a mutex here costs nothing on the tuple path.
  mutable std::mutex errors_mutex_;
  std::deque<RecentError> recent_errors_;  // GUARDED_BY(errors_mutex_)
  std::string fatal_;                      // GUARDED_BY(errors_mutex_)
  // Fused executors: the one whose thread runs this one, and those this one
  // runs. Set before start(), fixed after.
  const Executor* head_ = nullptr;
  std::vector<Executor*> members_;
  // What the launched thread does once construct() has run: wait, run the
  // loop (start), or end (stop, or a fused member's start).
  enum class Go { kWait, kRun, kEnd };
  std::mutex go_mutex_;
  std::condition_variable go_cv_;
  Go go_ = Go::kWait;  // GUARDED_BY(go_mutex_)
  std::jthread thread_;
};

}  // namespace rstorm::worker
