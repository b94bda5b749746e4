// ReceiveQueue: an executor's bounded multi-producer single-consumer queue of
// batches (Vyukov's bounded ring: one CAS per push, no lock), an overflow list
// behind it for pushes that must never wait, plus parking so that an idle
// consumer sleeps instead of spinning.
//
// Two ways in. try_push refuses when the ring is full or anything waits in the
// overflow (the producer decides to wait or keep the batch). force_push never
// refuses: it goes to the ring when it can and to the overflow otherwise. It is
// for the producers that must not wait on this executor: the network reader
// (one full executor must not stop a connection), an acker's completions to a
// spout, and the edges of a cycle in the topology. Whoever force-pushes bounds
// what it pushes (see worker/README.md, "Flow control"). The consumer takes the
// ring first, then the overflow, so one producer's batches stay in order.
//
// Thread contract: try_push, force_push and notify from any thread; try_pop and
// park only from the one consumer thread. Nothing is ever dropped.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>

#include "rstorm/worker/envelope.hpp"

namespace rstorm::worker {

class BoltExecutor;

// Where a producer hands a batch: a local executor's queue, or a transport to
// the tasks of another worker (the seam for remote delivery). try_push may be
// called from any producer thread; false means full: retry later, never drop.
class TupleSink {
 public:
  virtual ~TupleSink() = default;
  virtual bool try_push(Batch& batch) = 0;
  // As try_push, but `batch` may come back holding envelopes a consumer
  // finished with (any content), for the producer to fill again in place
  // (Transfer) rather than destroy them here and construct new ones.
  virtual bool try_push_recycling(Batch& batch) { return try_push(batch); }
  // As try_push_recycling, but a consumer asleep is left asleep while only
  // a few batches wait for it: the push sets `*wake_owed` instead, and the
  // producer calls wake() once it runs out of work, before it waits for
  // anything, or a short while later (Transfer::wake_consumers). A
  // producer's wake-ups are so coalesced: a consumer woken at each batch,
  // when it shared the producer's core, took the core from it a batch at a
  // time (a futex wake and two context switches a batch; three executors
  // on two cores fell from 30 to 9 M tuples/s in runs where two of them
  // shared a core). The default pushes as try_push_recycling does.
  virtual bool try_push_deferring_wake(Batch& batch, bool* wake_owed) {
    *wake_owed = false;
    return try_push_recycling(batch);
  }
  // Wakes the consumer if it sleeps (a wake try_push_deferring_wake owed).
  virtual void wake() {}
  // Takes `batch` whatever the sink's state: never refuses, never waits long
  // (for control messages and cycle edges; see ReceiveQueue). `batch` comes
  // back empty.
  virtual void force_push(Batch& batch) = 0;
  // Waits until a push might succeed, or `timeout`. May return early.
  virtual void wait_for_space(std::chrono::microseconds timeout) = 0;

  // A fused member's sink (topology.fuse.executors) runs each envelope on
  // the producer's thread as the producer commits it, instead of taking
  // batches: the tuple passes by reference, with no batch to fill and empty.
  // The member that runs them (Transfer calls it directly: run_inline).
  virtual BoltExecutor* inline_member() const { return nullptr; }
  // Sinks with an inline member: hands on what the runs emitted (the
  // producer's flush, after each burst of work).
  virtual void flush() {}
};

class ReceiveQueue final : public TupleSink {
 public:
  // `capacity` batches, rounded up to a power of two (at least 2).
  explicit ReceiveQueue(std::size_t capacity);
  ReceiveQueue(const ReceiveQueue&) = delete;
  ReceiveQueue& operator=(const ReceiveQueue&) = delete;

  // Moves `batch` in and wakes a parked consumer; `batch` comes back empty,
  // possibly with a recycled buffer. false (batch untouched) when full.
  bool try_push(Batch& batch) override { return push_to_ring(batch, true); }
  // `batch` comes back holding the envelopes the consumer finished with.
  bool try_push_recycling(Batch& batch) override { return push_to_ring(batch, false); }
  // Wakes a parked consumer at once only when kWakeDepth batches (or half
  // the ring, if less) are queued.
  bool try_push_deferring_wake(Batch& batch, bool* wake_owed) override {
    return push_to_ring(batch, false, wake_owed);
  }
  void wake() override {
    if (parked_.load(std::memory_order_seq_cst)) notify();
  }
  static constexpr std::size_t kWakeDepth = 8;
  // Never refuses. Returns true when the batch went to the ring, false when
  // it went to the overflow (the queue is over its capacity). `recycling`:
  // `batch` may come back holding envelopes the consumer finished with (as
  // try_push_recycling); otherwise it comes back empty. `wake_owed`: not
  // null, a batch that went to the ring leaves a parked consumer asleep as
  // try_push_deferring_wake does (one that went to the overflow wakes it).
  bool push_or_overflow(Batch& batch, bool recycling = false, bool* wake_owed = nullptr);
  void force_push(Batch& batch) override { push_or_overflow(batch); }
  // Swaps the oldest batch into `out`; the batch `out` held (finished with)
  // goes to the next producer to use this slot, which clears and reuses it.
  // Wakes producers waiting for space once the ring is down to half its
  // capacity (or the overflow emptied), not at every slot freed: a woken
  // producer then has room for many batches, where waking it per slot made
  // it and the consumer trade the core a batch at a time (a futex wake and
  // two context switches per batch). false when empty.
  bool try_pop(Batch& out);
  // For producers: sleeps until the consumer has drained the queue to half
  // its capacity, or `timeout` (check for room again either way).
  void wait_for_space(std::chrono::microseconds timeout) override;
  // The ring is full, or something waits in the overflow.
  bool full() const;

  // Sleeps until a push or notify(), or `timeout`. Returns at once when not empty.
  void park(std::chrono::microseconds timeout);
  // Wakes the consumer if it is parked (used to stop it).
  void notify();
  // The consumer is in park() (approximate: for tests).
  bool consumer_parked() const { return parked_.load(std::memory_order_seq_cst); }

  std::size_t capacity() const { return mask_ + 1; }
  // Batches in the queue, overflow included; approximate while producers run.
  std::size_t depth() const;
  // Batches in the overflow right now.
  std::size_t overflow_depth() const { return overflow_size_.load(std::memory_order_relaxed); }
  // Most batches the overflow has held at once.
  std::size_t overflow_peak() const { return overflow_peak_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    std::atomic<std::size_t> sequence;
    Batch batch;
  };

  std::size_t mask_;
  std::size_t wake_depth_;  // kWakeDepth, at most half the ring
  std::unique_ptr<Slot[]> slots_;
  alignas(64) std::atomic<std::size_t> enqueue_pos_{0};
  alignas(64) std::atomic<std::size_t> dequeue_pos_{0};
  alignas(64) std::atomic<bool> parked_{false};
  std::mutex park_mutex_;
  std::condition_variable park_cv_;
  alignas(64) std::atomic<int> waiting_producers_{0};
  std::mutex space_mutex_;
  std::condition_variable space_cv_;
  bool try_pop_overflow(Batch& out);
  // try_push; `clear`: empties the batch handed back. `wake_owed`: not
  // null, a parked consumer with fewer than wake_depth_ batches queued is
  // not woken, and *wake_owed is set (otherwise cleared).
  bool push_to_ring(Batch& batch, bool clear, bool* wake_owed = nullptr);
  alignas(64) std::atomic<std::size_t> overflow_size_{0};
  std::atomic<std::size_t> overflow_peak_{0};
  std::mutex overflow_mutex_;
  std::deque<Batch> overflow_;  // GUARDED_BY(overflow_mutex_)
};

}  // namespace rstorm::worker
