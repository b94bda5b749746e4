#include "rstorm/worker/transfer.hpp"

#include <algorithm>

#include "rstorm/worker/clock.hpp"

namespace rstorm::worker {

Transfer::Transfer(const std::vector<TupleSink*>* sinks, std::size_t num_sinks,
                   const std::vector<int>* task_sink, std::vector<char> forced,
                   std::size_t batch_size, Mode mode, ExecutorStats* stats,
                   const std::atomic<bool>* stopping)
    : sinks_(sinks),
      task_sink_(task_sink),
      batch_size_(batch_size),
      mode_(mode),
      stats_(stats),
      stopping_(stopping),
      forced_(std::move(forced)),
      pending_(num_sinks),
      filled_(num_sinks, 0),
      dirty_flag_(num_sinks, 0),
      wake_owed_flag_(num_sinks, 0),
      coalesce_at_(num_sinks, kNoEnvelope) {
  // No sink runs inline until bind_sinks (a Transfer that never binds, the
  // checkpoint uploader's, sends to queues only).
  fill_routes({});
}

void Transfer::bind_sinks(const std::vector<TupleSink*>& members) { fill_routes(members); }

void Transfer::fill_routes(const std::vector<TupleSink*>& members) {
  task_routes_.resize(task_sink_->size());
  inline_sinks_.clear();
  for (TupleSink* sink : members) {
    if (sink->inline_member() != nullptr) inline_sinks_.push_back(sink);
  }
  for (std::size_t t = 0; t < task_routes_.size(); ++t) {
    const int d = (*task_sink_)[t];
    TupleSink* sink = d >= 0 ? (*sinks_)[static_cast<std::size_t>(d)] : nullptr;
    const bool member = sink != nullptr && std::find(inline_sinks_.begin(), inline_sinks_.end(),
                                                     sink) != inline_sinks_.end();
    task_routes_[t].sink = d;
    task_routes_[t].inline_member = member ? sink->inline_member() : nullptr;
  }
}

void Transfer::bind_hop(BoltExecutor* member, TaskId dest, const StreamInfo* stream) {
  hop_member_ = member;
  hop_batch_.resize(kHopBatch);
  for (Envelope& e : hop_batch_) {
    e.reuse(dest);
    e.tuple.set_source(stream, TaskId());
    e.tuple.mutable_values().assign(stream->fields.size(), Value());
  }
  hop_filled_ = 0;
  hop_mixed_ = false;
}

void Transfer::run_hop() {
  // Emptied first: the member's run fills its own hop, never this one.
  const std::size_t n = hop_filled_;
  hop_filled_ = 0;
  // Each slot is one emit, sent to one task; counted before the member
  // runs, as a routed emit is before its commit.
  bump(stats_->emitted, n);
  bump(stats_->transferred, n);
  run_inline_batch(*hop_member_, hop_batch_.data(), n);
  if (hop_mixed_) [[unlikely]] {
    // Back to scalars, as bind_hop left them (hop_slot's promise).
    hop_mixed_ = false;
    for (Envelope& e : hop_batch_) {
      for (Value& v : e.tuple.mutable_values()) {
        if (v.type() >= ValueType::kString) v = Value();
      }
    }
  }
}

void Transfer::mark_dirty(int d) {
  dirty_flag_[static_cast<std::size_t>(d)] = true;
  dirty_.push_back(d);
}

Envelope& Transfer::append_to_batch(int d, TaskId dest) {
  if (!dirty_flag_[static_cast<std::size_t>(d)]) mark_dirty(d);
  Batch& b = pending_[static_cast<std::size_t>(d)];
  std::size_t& n = filled_[static_cast<std::size_t>(d)];
  if (n < b.size()) {
    Envelope& e = b[n++];
    if (n + 1 < b.size()) {
      // The envelope after the next was last written by the consumer's
      // thread: asked for now, its lines are here when it is filled.
      const char* next = reinterpret_cast<const char*>(&b[n + 1]);
      for (std::size_t line = 0; line < sizeof(Envelope); line += 64) {
        __builtin_prefetch(next + line, 1);
      }
    }
    e.reuse(dest);  // the caller assigns the values or sets a control message
    return e;
  }
  if (b.capacity() == 0) b.reserve(batch_size_);
  Envelope& e = b.emplace_back();
  e.dest = dest;
  ++n;
  return e;
}

bool Transfer::push(int d, bool full) {
  Batch& b = pending_[static_cast<std::size_t>(d)];
  std::size_t& n = filled_[static_cast<std::size_t>(d)];
  if (n < b.size()) b.erase(b.begin() + static_cast<std::ptrdiff_t>(n), b.end());
  TupleSink* sink = (*sinks_)[static_cast<std::size_t>(d)];
  if (!forced_.empty() && forced_[static_cast<std::size_t>(d)]) {
    sink->force_push(b);
    n = b.size();  // 0: a forced push takes the batch whole
    return true;
  }
  bool wake_owed = false;
  if (full ? sink->try_push_deferring_wake(b, &wake_owed) : sink->try_push_recycling(b)) {
    n = 0;  // what came back is to be filled again
    if (wake_owed && !wake_owed_flag_[static_cast<std::size_t>(d)]) {
      if (wakes_owed_.empty()) wake_owed_since_ns_ = steady_now_ns();
      wake_owed_flag_[static_cast<std::size_t>(d)] = 1;
      wakes_owed_.push_back(d);
    }
    return true;
  }
  if (mode_ == Mode::kNonBlocking) {
    backlog_ = true;
    return false;
  }
  bump(stats_->backpressure_waits);
  const auto waited_since = std::chrono::steady_clock::now();
  const auto account = [&] {
    bump(stats_->backpressure_wait_ns,
         static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now() - waited_since)
                                        .count()));
  };
  wake_consumers();
  for (;;) {
    if (stopping_->load(std::memory_order_relaxed)) {
      b.clear();  // the topology is going away
      n = 0;
      account();
      return true;
    }
    sink->wait_for_space(std::chrono::milliseconds(1));
    if (sink->try_push_recycling(b)) {
      n = 0;
      account();
      return true;
    }
  }
}

void Transfer::pay_owed_wakes() {
  for (int d : wakes_owed_) {
    wake_owed_flag_[static_cast<std::size_t>(d)] = 0;
    (*sinks_)[static_cast<std::size_t>(d)]->wake();
  }
  wakes_owed_.clear();
}

void Transfer::wake_consumers() {
  pay_owed_wakes();
  for (TupleSink* sink : inline_sinks_) sink->wake();
}

void Transfer::wait_for_backlog(std::chrono::microseconds timeout) {
  wake_consumers();
  for (int d : dirty_) {
    if (filled_[static_cast<std::size_t>(d)] > 0) {
      (*sinks_)[static_cast<std::size_t>(d)]->wait_for_space(timeout);
      return;
    }
  }
}

bool Transfer::flush() {
  drain_hop();
  backlog_ = false;
  std::size_t kept = 0;
  for (int d : dirty_) {
    const std::size_t n = filled_[static_cast<std::size_t>(d)];
    if (n > 0 && !push(d, n >= batch_size_)) {
      dirty_[kept++] = d;  // still pending: keep it listed
      continue;
    }
    dirty_flag_[static_cast<std::size_t>(d)] = 0;
  }
  // Each member hands on what its runs emitted (nothing to do when none ran).
  for (TupleSink* sink : inline_sinks_) sink->flush();
  dirty_.resize(kept);
  backlog_ = kept > 0;
  if (!wakes_owed_.empty() && steady_now_ns() - wake_owed_since_ns_ >= kWakeDelayNs) {
    pay_owed_wakes();
  }
  return kept == 0;
}

}  // namespace rstorm::worker
