// Transfer: an executor's outgoing side. Envelopes are appended to one batch
// per destination sink; a batch is handed over when it reaches the batch size
// and on flush(), which the executor calls after each burst of work (so a
// tuple waits at most one burst, about the flush interval under load).
//
// Backpressure: in blocking mode (bolts, ackers) a full destination makes the
// producer wait, backing off, until there is room or the topology stops. In
// non-blocking mode (spouts) the batch is kept and has_backlog() turns true:
// the spout stops calling next_tuple until flush() succeeds. A destination
// marked `forced` (a spout receiving completions, or an edge inside a cycle of
// the topology) is never waited on: its batches are force-pushed. Nothing is
// dropped except when the topology is being stopped. Single thread: one per
// executor.
#pragma once

#include <atomic>
#include <chrono>
#include <vector>

#include "rstorm/worker/envelope.hpp"
#include "rstorm/worker/executor_stats.hpp"
#include "rstorm/worker/receive_queue.hpp"

namespace rstorm::worker {

// Runs `e` on the fused member `member` now (BoltExecutor::run_one_inline):
// a direct call from commit(), no dispatch through the sink.
void run_inline(BoltExecutor& member, Envelope& e);
// Runs the `n` tuples at `es`, all for one task of `member`, in order: the
// member's task looked up, its registers saved and its counts stored once
// for the run, not once a tuple.
void run_inline_batch(BoltExecutor& member, Envelope* es, std::size_t n);

class Transfer {
 public:
  enum class Mode { kBlocking, kNonBlocking };

  // `sinks`: one per destination (`num_sinks` of them, filled in before the
  // first send); `task_sink`: task id -> index into `sinks`; `forced`: index
  // into `sinks` -> never wait on it (empty: none). All pointers are borrowed
  // and must outlive the Transfer.
  Transfer(const std::vector<TupleSink*>* sinks, std::size_t num_sinks,
           const std::vector<int>* task_sink, std::vector<char> forced,
           std::size_t batch_size, Mode mode, ExecutorStats* stats,
           const std::atomic<bool>* stopping);

  // Notes the sinks that run inline: `members`, the sinks of this executor's
  // fused members (TupleSink::inline_member). Called once the sinks are
  // final, before the first send.
  void bind_sinks(const std::vector<TupleSink*>& members = {});

  // Appends a default envelope for `dest` to its batch and returns it to be
  // filled in place; commit() must follow before the next append. For a sink
  // that runs inline, the envelope is one kept here, run at commit().
  // REQUIRES: dest is a task of this topology.
  [[gnu::always_inline]] Envelope& append(TaskId dest) {
    const TaskRoute& t = task_routes_[static_cast<std::size_t>(dest.value)];
    last_inline_ = t.inline_member;
    if (last_inline_ != nullptr) {
      drain_hop();  // the hop's tuples run first: they were emitted first
      inline_envelope_.reuse(dest);
      return inline_envelope_;
    }
    last_ = t.sink;
    return append_to_batch(t.sink, dest);
  }
  // Runs the envelope of the last append on its member (a sink that runs
  // inline), or hands its batch over if it is full.
  [[gnu::always_inline]] void commit() {
    if (last_inline_ != nullptr) {
      run_inline(*last_inline_, inline_envelope_);
      return;
    }
    if (filled_[static_cast<std::size_t>(last_)] >= batch_size_ && !backlog_) push(last_, true);
  }

  // The fused member `dest` runs on, when its sink runs inline (bind_sinks);
  // nullptr otherwise.
  BoltExecutor* inline_member(TaskId dest) const {
    return task_routes_[static_cast<std::size_t>(dest.value)].inline_member;
  }
  // The envelope append() hands out for a sink that runs inline: filled in
  // place and given to run_inline() by a caller that resolved the member
  // itself (Executor::FusedHop), without append() and commit().
  Envelope& inline_envelope() { return inline_envelope_; }

  // The fused hop's batch (Executor::FusedHop): an emit on the hop fills
  // the next slot in place (hop_slot) and commits it (commit_hop); the
  // member runs the slots a batch at a time (run_inline_batch) when the
  // batch is full, before anything else reaches a member run inline
  // (append: the hop's tuples were emitted first), and at flush(). The
  // slots are reused: each holds `dest` and `stream` from the start, and
  // an emit writes its values in place, with no allocation for scalars.
  // Set once by the executor's start().
  static constexpr std::size_t kHopBatch = 16;
  void bind_hop(BoltExecutor* member, TaskId dest, const StreamInfo* stream);
  // REQUIRES: bind_hop. The slot holds as many values as the stream's
  // fields, all null, bool, int64 or double: an emit of scalars overwrites
  // them with no test of what they were. One that fills the slot with a
  // string or bytes says so (hop_holds_mixed), and run_hop sets those back
  // to null once the member has run them.
  Envelope& hop_slot() { return hop_batch_[hop_filled_]; }
  void hop_holds_mixed() { hop_mixed_ = true; }
  [[gnu::always_inline]] void commit_hop() {
    if (++hop_filled_ == kHopBatch) run_hop();
  }
  // Runs the hop's pending tuples now, if any.
  void drain_hop() {
    if (hop_filled_ != 0) run_hop();
  }

  // Sends a control message (Envelope::set_control). An acking message
  // (is_acking) joins the pending batch's last acking envelope of the same
  // kind from `task` to `dest`, while that holds fewer than
  // kMaxCoalescedMessages: a bolt's acks to one acker, a spout's inits, an
  // acker's completions to one spout travel a batch at a time in one
  // envelope each. A message for the root of the envelope's last one is
  // XORed into it; otherwise a root may repeat in an envelope (each pair is
  // one message: the acker XORs them all, and scanning for the root cost
  // more than the acker's extra look-up). Any other control message (a
  // barrier, a checkpoint part) is never joined and nothing sent before it
  // joins anything after it, so it keeps its place among them.
  void send_control(TaskId dest, MessageKind kind, std::uint64_t root, std::uint64_t value,
                    TaskId task) {
    const auto d =
        static_cast<std::size_t>(task_routes_[static_cast<std::size_t>(dest.value)].sink);
    std::size_t& at = coalesce_at_[d];
    if (is_acking(kind)) {
      Batch& b = pending_[d];
      if (at < filled_[d] && b[at].kind == kind && b[at].dest == dest && b[at].task() == task &&
          b[at].messages() < kMaxCoalescedMessages) {
        b[at].tuple.mutable_anchors().append_message(root, value, kMaxCoalescedMessages - 1);
        return;
      }
      append(dest).set_control(kind, root, value, task);
      at = last_inline_ != nullptr ? kNoEnvelope : filled_[d] - 1;
    } else {
      at = kNoEnvelope;
      append(dest).set_control(kind, root, value, task);
    }
    commit();
  }
  static constexpr std::size_t kMaxCoalescedMessages = 32;

  // Hands every pending batch over. Returns true when none is left (always in
  // blocking mode unless stopping).
  bool flush();
  bool has_backlog() const { return backlog_; }
  // Wakes the consumers that pushes of full batches left asleep (TupleSink::try_push_deferring_wake),
  // and those of the fused members' pushes (TupleSink::wake). Called by the
  // executor when it runs out of work, and here before any wait (a consumer
  // left asleep may be the one to make room). A busy producer's owed wakes
  // are also paid by the first flush kWakeDelay after the first was owed,
  // and at once by a push that leaves kWakeDepth batches queued: the
  // consumers of a producer that never idles are woken that often at most.
  void wake_consumers();
  static constexpr std::int64_t kWakeDelayNs = 1'000'000;
  // Non-blocking mode: waits until a destination holding back a batch might
  // take it, or `timeout`.
  void wait_for_backlog(std::chrono::microseconds timeout);

 private:
  // `full`: a batch of batch_size_ envelopes, handed on in the middle of a
  // burst: its push may leave a parked consumer asleep, the wake owed
  // (TupleSink::try_push_deferring_wake). A partial batch (a flush: the
  // producer's output is coming slower than batches fill) wakes it at once,
  // so that no latency is added when the rate is low.
  bool push(int d, bool full);
  // Wakes the consumers in wakes_owed_ (not the members').
  void pay_owed_wakes();
  // task_routes_ from *task_sink_, with `members` run inline.
  void fill_routes(const std::vector<TupleSink*>& members);
  // Out of line, so that append() for a sink that runs inline needs no
  // registers saved. Both mark the sink dirty: flush() hands it on.
  Envelope& append_to_batch(int d, TaskId dest);
  [[gnu::noinline]] void mark_dirty(int d);
  [[gnu::noinline]] void run_hop();

  const std::vector<TupleSink*>* sinks_;
  const std::vector<int>* task_sink_;
  // Index: task id. *task_sink_ and the sink, if it runs inline, in one
  // entry, so that an append waits on one load rather than a chain of them.
  struct TaskRoute {
    int sink = 0;
    BoltExecutor* inline_member = nullptr;  // the sink's, if it runs inline (bind_sinks)
  };
  std::vector<TaskRoute> task_routes_;
  // The sinks that run inline (bind_sinks), flushed at every flush(): an
  // append for them marks nothing (that was a load and a test a tuple).
  std::vector<TupleSink*> inline_sinks_;
  std::size_t batch_size_;
  Mode mode_;
  ExecutorStats* stats_;
  const std::atomic<bool>* stopping_;
  std::vector<char> forced_;  // index: sink
  std::vector<Batch> pending_;
  // Index: sink; the envelopes of its pending batch in use. Those after them
  // are ones a sink handed back (try_push_recycling), filled again in place
  // by append: no envelope destroyed and constructed per tuple.
  std::vector<std::size_t> filled_;
  std::vector<char> dirty_flag_;
  std::vector<int> dirty_;
  std::vector<int> wakes_owed_;  // sinks, each once (wake_owed_flag_)
  std::vector<char> wake_owed_flag_;
  std::int64_t wake_owed_since_ns_ = 0;  // steady clock, when wakes_owed_ became non-empty
  // Index: sink; the envelope of its pending batch that send_control last
  // started for acking messages. A hint: checked against the envelope there
  // (the batch may have been handed over and refilled since).
  static constexpr std::size_t kNoEnvelope = ~std::size_t{0};
  std::vector<std::size_t> coalesce_at_;
  Envelope inline_envelope_;  // the one handed out for sinks that run inline
  BoltExecutor* hop_member_ = nullptr;
  std::vector<Envelope> hop_batch_;  // kHopBatch slots once bound
  std::size_t hop_filled_ = 0;       // slots committed, not yet run
  bool hop_mixed_ = false;           // a slot holds a string or bytes (hop_holds_mixed)
  bool backlog_ = false;
  BoltExecutor* last_inline_ = nullptr;  // the member of the last append, if it runs inline
  int last_ = 0;                         // the sink of the last append to a batch
};

}  // namespace rstorm::worker
