#include "rstorm/worker/receive_queue.hpp"

#include <algorithm>
#include <bit>

namespace rstorm::worker {

ReceiveQueue::ReceiveQueue(std::size_t capacity)
    : mask_(std::bit_ceil(capacity < 2 ? std::size_t{2} : capacity) - 1),
      wake_depth_(std::min(kWakeDepth, (mask_ + 1) / 2)),
      slots_(new Slot[mask_ + 1]) {
  for (std::size_t i = 0; i <= mask_; ++i) slots_[i].sequence.store(i, std::memory_order_relaxed);
}

bool ReceiveQueue::push_to_ring(Batch& batch, bool clear, bool* wake_owed) {
  if (wake_owed != nullptr) *wake_owed = false;
  // Batches in the overflow go first: a ring push now would overtake them.
  if (overflow_size_.load(std::memory_order_acquire) > 0) return false;
  std::size_t pos = enqueue_pos_.load(std::memory_order_relaxed);
  Slot* slot;
  for (;;) {
    slot = &slots_[pos & mask_];
    std::size_t seq = slot->sequence.load(std::memory_order_acquire);
    auto diff = static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos);
    if (diff == 0) {
      if (enqueue_pos_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) break;
    } else if (diff < 0) {
      return false;  // full
    } else {
      pos = enqueue_pos_.load(std::memory_order_relaxed);
    }
  }
  // Swap rather than move: the producer gets back the batch the consumer
  // finished with in this slot. Clearing it here (or overwriting its
  // envelopes, try_push_recycling) frees its tuples' values on the thread
  // that most likely allocated them (the allocator's fast path) and recycles
  // the buffer without allocating.
  std::swap(slot->batch, batch);
  if (clear) batch.clear();
  // seq_cst store and load, paired with park(): either the consumer sees the
  // batch or we see it parked (no lost wake-up).
  slot->sequence.store(pos + 1, std::memory_order_seq_cst);
  if (parked_.load(std::memory_order_seq_cst)) {
    if (wake_owed != nullptr &&
        pos + 1 - dequeue_pos_.load(std::memory_order_relaxed) < wake_depth_) {
      *wake_owed = true;  // the producer wakes it (Transfer::wake_consumers)
    } else {
      notify();
    }
  }
  return true;
}

bool ReceiveQueue::push_or_overflow(Batch& batch, bool recycling, bool* wake_owed) {
  if (wake_owed != nullptr) *wake_owed = false;
  if (overflow_size_.load(std::memory_order_acquire) == 0 &&
      push_to_ring(batch, !recycling, wake_owed)) {
    return true;
  }
  {
    std::lock_guard lock(overflow_mutex_);
    // The consumer may have emptied the overflow meanwhile: the ring first
    // then, under the lock so that no other overflow push can pass this one.
    if (overflow_.empty() && push_to_ring(batch, !recycling)) return true;
    overflow_.push_back(std::move(batch));
    const std::size_t n = overflow_.size();
    overflow_size_.store(n, std::memory_order_seq_cst);
    if (n > overflow_peak_.load(std::memory_order_relaxed)) {
      overflow_peak_.store(n, std::memory_order_relaxed);
    }
  }
  batch.clear();
  if (parked_.load(std::memory_order_seq_cst)) notify();
  return false;
}

bool ReceiveQueue::try_pop_overflow(Batch& out) {
  if (overflow_size_.load(std::memory_order_acquire) == 0) return false;
  bool emptied;
  {
    std::lock_guard lock(overflow_mutex_);
    if (overflow_.empty()) return false;
    std::swap(out, overflow_.front());
    overflow_.pop_front();
    emptied = overflow_.empty();
    overflow_size_.store(overflow_.size(), std::memory_order_seq_cst);
  }
  if (emptied && waiting_producers_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard lock(space_mutex_); }
    space_cv_.notify_all();
  }
  return true;
}

bool ReceiveQueue::try_pop(Batch& out) {
  std::size_t pos = dequeue_pos_.load(std::memory_order_relaxed);
  Slot* slot = &slots_[pos & mask_];
  std::size_t seq = slot->sequence.load(std::memory_order_acquire);
  if (static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos + 1) < 0) {
    return try_pop_overflow(out);
  }
  dequeue_pos_.store(pos + 1, std::memory_order_relaxed);
  std::swap(out, slot->batch);  // leaves the finished batch for the next producer to clear
  // seq_cst, paired with wait_for_space(): either the producer sees the free
  // slot or we see it waiting. A waiting producer is woken once the ring is
  // down to half (the low-water mark): the batches still queued keep this
  // consumer busy while the producer refills, and it is woken once per half
  // a ring rather than once per batch. If the ring stops draining above the
  // mark, the producer's own timeout has it look again.
  slot->sequence.store(pos + mask_ + 1, std::memory_order_seq_cst);
  if (waiting_producers_.load(std::memory_order_seq_cst) > 0 &&
      enqueue_pos_.load(std::memory_order_relaxed) - (pos + 1) <= (mask_ + 1) / 2) {
    { std::lock_guard lock(space_mutex_); }
    space_cv_.notify_all();
  }
  return true;
}

bool ReceiveQueue::full() const {
  if (overflow_size_.load(std::memory_order_seq_cst) > 0) return true;
  std::size_t pos = enqueue_pos_.load(std::memory_order_relaxed);
  std::size_t seq = slots_[pos & mask_].sequence.load(std::memory_order_seq_cst);
  return static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos) < 0;
}

void ReceiveQueue::wait_for_space(std::chrono::microseconds timeout) {
  waiting_producers_.fetch_add(1, std::memory_order_seq_cst);
  {
    std::unique_lock lock(space_mutex_);
    if (full()) space_cv_.wait_for(lock, timeout);
  }
  waiting_producers_.fetch_sub(1, std::memory_order_relaxed);
}

std::size_t ReceiveQueue::depth() const {
  std::size_t in = enqueue_pos_.load(std::memory_order_relaxed);
  std::size_t out = dequeue_pos_.load(std::memory_order_relaxed);
  return (in > out ? in - out : 0) + overflow_size_.load(std::memory_order_relaxed);
}

void ReceiveQueue::park(std::chrono::microseconds timeout) {
  std::unique_lock lock(park_mutex_);
  parked_.store(true, std::memory_order_seq_cst);
  std::size_t pos = dequeue_pos_.load(std::memory_order_relaxed);
  std::size_t seq = slots_[pos & mask_].sequence.load(std::memory_order_seq_cst);
  if (seq != pos + 1 && overflow_size_.load(std::memory_order_seq_cst) == 0) {
    park_cv_.wait_for(lock, timeout);
  }
  parked_.store(false, std::memory_order_relaxed);
}

void ReceiveQueue::notify() {
  { std::lock_guard lock(park_mutex_); }
  park_cv_.notify_one();
}

}  // namespace rstorm::worker
