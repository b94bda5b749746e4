#include "rstorm/worker/bolt_executor.hpp"

#include <algorithm>
#include <deque>

namespace rstorm::worker {

struct BoltExecutor::Task {
  TaskId id;
  std::unique_ptr<Bolt> bolt;
  BasicBolt* basic = nullptr;  // the BasicBolt `bolt` adapts, called directly
  TimedBolt* timed = nullptr;  // the bolt, when it asked for a timer
  std::int64_t timer_period_ns = 0;
  std::int64_t next_timer_ns = 0;
  std::unique_ptr<TopologyContext> context;
  std::unique_ptr<Collector> collector;
  // Checkpoints: the one being aligned (0: none), the last one stored, which
  // upstream tasks (index: position in the component's upstream_tasks)
  // delivered its barrier, and what came from them since, in order.
  std::int64_t aligning = 0;
  std::int64_t last_stored = 0;
  std::vector<char> blocked;
  std::size_t blocked_count = 0;
  std::int64_t aligning_since_ns = 0;
  std::deque<Envelope> held;
};

class BoltExecutor::Collector final : public OutputCollector {
 public:
  Collector(BoltExecutor& ex, TaskId task) : ex_(ex), task_(task) {}

  void emit_to(std::string_view stream, const Tuple* const* anchors, std::size_t num_anchors,
               Values&& values, TaskId direct) override {
    send<Values>(ex_.emitter_.route(stream, values, direct), anchors, num_anchors, values);
  }

  // emit({...}) and emit of a Values to copy: the values are copied into
  // each tuple sent, with no Values in between, whenever the stream is
  // routed once (route_usual); any other emit goes through emit_to with
  // them in a Values.
  //
  // An emit that joins no tree to a fused member run on this thread
  // (FusedHop) fills the next slot of the hop's batch in place
  // (Transfer::hop_slot), which the member runs when it is full or at the
  // flush: no call on the way for values that need no allocation. One that
  // joins trees runs the member at once with its anchors
  // (emit_anchored_hop), after the batch.
  void emit_list(std::string_view stream, const Tuple* const* anchors, std::size_t num_anchors,
                 std::span<const Value> values, TaskId direct) override {
    const Executor::FusedHop& hop = ex_.hop_;
    if (values.size() != hop.num_fields || stream != kDefaultStream ||
        direct.valid()) [[unlikely]] {
      emit_routed(stream, anchors, num_anchors, values, direct);
      return;
    }
    emit_on_hop(anchors, num_anchors, values);
  }
  // emit_list(kDefaultStream, anchors, num_anchors, values, TaskId()).
  void emit_usual(const Tuple* const* anchors, std::size_t num_anchors,
                  std::span<const Value> values) override {
    const Executor::FusedHop& hop = ex_.hop_;
    if (values.size() == hop.plain_fields) [[likely]] {
      emit_plain_on_hop(values);
      return;
    }
    if (values.size() != hop.num_fields) {
      emit_routed(kDefaultStream, anchors, num_anchors, values, TaskId());
      return;
    }
    emit_on_hop(anchors, num_anchors, values);
  }
  // An emit on the fused hop, of as many values as its fields.
  [[gnu::always_inline]] void emit_on_hop(const Tuple* const* anchors, std::size_t num_anchors,
                                          std::span<const Value> values) {
    if (num_anchors != 0 && ex_.emitter_.acking()) {
      emit_anchored_hop(anchors, num_anchors, values);
      return;
    }
    emit_plain_on_hop(values);
  }
  // emit_on_hop with acking off or no anchor: the anchors change nothing.
  [[gnu::always_inline]] void emit_plain_on_hop(std::span<const Value> values) {
    // From here on only `values` is kept for a way out (emit_hop_slow).
    // `ex_` read once: the counts' stores would otherwise make it be read
    // again.
    BoltExecutor& ex = ex_;
    Envelope& e = ex.transfer_.hop_slot();
    if (!ex.fill_hop_pair(e, task_, values)) [[unlikely]] {
      emit_hop_slow(values);
      return;
    }
    ex.transfer_.commit_hop();  // counted emitted and transferred when run
  }
  // emit_on_hop's emit of values that fill_hop_pair could not copy (not a
  // pair of scalars).
  [[gnu::noinline]] void emit_hop_slow(std::span<const Value> values) {
    Envelope& e = ex_.transfer_.hop_slot();
    ex_.fill_hop_any(e, task_, values);
    ex_.transfer_.commit_hop();
  }
  // emit_list's anchored emit on the fused hop, with acking: the tuple
  // filled in place (fill_hop_input) and anchored as emit_anchored does;
  // the routed path when the values cannot be copied so.
  [[gnu::noinline]] void emit_anchored_hop(const Tuple* const* anchors, std::size_t num_anchors,
                                           std::span<const Value> values) {
    ex_.transfer_.drain_hop();  // the hop's batch was emitted first
    Envelope& e = ex_.transfer_.inline_envelope();
    if (!ex_.fill_hop_input(e, task_, values)) {
      emit_routed(kDefaultStream, anchors, num_anchors, values, TaskId());
      return;
    }
    bump(ex_.stats_.emitted);
    bump(ex_.stats_.transferred);
    anchor(e.tuple, anchors, num_anchors, ex_.emitter_);
    run_inline(*ex_.hop_.member, e);
  }
  // Any other emit of a list. Out of line: emit_list's own path saves no
  // register.
  [[gnu::noinline]] void emit_routed(std::string_view stream, const Tuple* const* anchors,
                                     std::size_t num_anchors, std::span<const Value> values,
                                     TaskId direct) {
    const StreamRoute* route = ex_.emitter_.route_usual(stream, values.size(), direct);
    if (route == nullptr) {
      emit_unrouted(stream, anchors, num_anchors, values, direct);
      return;
    }
    send<std::span<const Value>>(*route, anchors, num_anchors, values);
  }
  // An emit route_usual did not route (another stream, a grouping by
  // fields, a direct task): routed from the list itself, whose values are
  // copied into each tuple (no Values built in between). Out of line: its
  // locals take no room in emit_list's frame.
  [[gnu::noinline]] void emit_unrouted(std::string_view stream, const Tuple* const* anchors,
                                       std::size_t num_anchors, std::span<const Value> values,
                                       TaskId direct) {
    send<std::span<const Value>>(ex_.emitter_.route(stream, values, direct), anchors, num_anchors,
                                 values);
  }

  // A routed emit. The usual one (one target, no tree to join: acking off,
  // or no anchor) here, the rest out of line, so that this path saves few
  // registers. `values`: a Values (moved into the last tuple) or a span.
  template <typename V>
  [[gnu::always_inline]] void send(const StreamRoute& route, const Tuple* const* anchors,
                                   std::size_t num_anchors, EmittedArg<V> values) {
    Emitter& em = ex_.emitter_;
    const auto targets = em.targets();
    if (targets.size() == 1 && (num_anchors == 0 || !em.acking())) [[likely]] {
      // Counted first, so that the commit (a fused member's run) is the
      // last call: no registers kept across it.
      bump(ex_.stats_.emitted);
      bump(ex_.stats_.transferred);
      Emitter::begin_tuple(ex_.transfer_, targets[0], &route.info, task_, values, true);
      ex_.transfer_.commit();
      return;
    }
    emit_anchored<V>(route, targets, anchors, num_anchors, values);
  }

  // `values`: a Values (moved into the last tuple) or a span of a list's.
  template <typename V>
  [[gnu::noinline]] void emit_anchored(const StreamRoute& route, std::span<const TaskId> targets,
                                       const Tuple* const* anchors, std::size_t num_anchors,
                                       EmittedArg<V> values) {
    Emitter& em = ex_.emitter_;
    bump(ex_.stats_.emitted);
    const std::size_t n = targets.size();
    const bool acking = em.acking();
    for (std::size_t i = 0; i < n; ++i) {
      Tuple& t =
          Emitter::begin_tuple(ex_.transfer_, targets[i], &route.info, task_, values, i + 1 == n);
      if (acking) anchor(t, anchors, num_anchors, em);
      ex_.transfer_.commit();
    }
    bump(ex_.stats_.transferred, n);
  }

  // Anchors `t` to the trees of `anchors`: a new edge per anchor that
  // belongs to any, XORed into that anchor's ack value and into t's entry
  // for each of its roots.
  void anchor(Tuple& t, const Tuple* const* anchors, std::size_t num_anchors, Emitter& em) {
    if (num_anchors > kFewAnchors) {
      anchor_many(t, anchors, num_anchors, em);
      return;
    }
    for (std::size_t a = 0; a < num_anchors; ++a) {
      const MessageAnchors& roots = anchors[a]->anchors();
      if (roots.empty()) continue;
      const std::uint64_t edge = em.next_id();
      anchors[a]->xor_ack_val(edge);
      for (std::size_t r = 0; r < roots.size(); ++r) {
        t.mutable_anchors().xor_in(roots[r].root, edge);
      }
    }
  }

  // Anchors `t` to many tuples (a window's): the roots gathered, sorted and
  // merged once instead of one scan of t's anchors per root.
  void anchor_many(Tuple& t, const Tuple* const* anchors, std::size_t num_anchors, Emitter& em) {
    scratch_.clear();
    for (std::size_t a = 0; a < num_anchors; ++a) {
      const MessageAnchors& roots = anchors[a]->anchors();
      if (roots.empty()) continue;
      const std::uint64_t edge = em.next_id();
      anchors[a]->xor_ack_val(edge);
      for (std::size_t r = 0; r < roots.size(); ++r) scratch_.push_back({roots[r].root, edge});
    }
    std::sort(scratch_.begin(), scratch_.end(),
              [](const AnchorEntry& x, const AnchorEntry& y) { return x.root < y.root; });
    std::size_t out = 0;
    for (std::size_t i = 0; i < scratch_.size(); ++i) {
      if (out > 0 && scratch_[out - 1].root == scratch_[i].root) {
        scratch_[out - 1].edge ^= scratch_[i].edge;
      } else {
        scratch_[out++] = scratch_[i];
      }
    }
    t.mutable_anchors().assign_distinct(scratch_.data(), out);
  }

  void ack(const Tuple& input) override {
    if (!ex_.count_ack(input)) return;
    if (ex_.emitter_.acking() && !input.anchors().empty()) send_acks(input);
  }

  // Kept out of ack(), whose common cases (acking off, an unanchored input)
  // then need no registers saved. An input of one tree that its fused spout
  // head is emitting (the usual input of a fused chain with acking) XORs its
  // ack into the head's local tree here; any other goes to send_acks_on,
  // so that this saves no register either.
  [[gnu::noinline]] void send_acks(const Tuple& input) {
    const MessageAnchors& roots = input.anchors();
    LocalTree* local = ex_.local_tree_;
    if (local != nullptr && roots.size() == 1 && local->root == roots[0].root) {
      local->acks ^= roots[0].edge ^ input.ack_val();
      return;
    }
    send_acks_on(input);
  }
  // Each root's ack: into the local tree when it is the head's, else to
  // the root's acker.
  [[gnu::noinline]] void send_acks_on(const Tuple& input) {
    Emitter& em = ex_.emitter_;
    const MessageAnchors& roots = input.anchors();
    LocalTree* local = ex_.local_tree_;
    for (std::size_t r = 0; r < roots.size(); ++r) {
      const std::uint64_t value = roots[r].edge ^ input.ack_val();
      if (local != nullptr && local->root == roots[r].root) {
        local->acks ^= value;  // the tree its fused spout head is emitting
        continue;
      }
      em.send_control(em.acker_for(roots[r].root), MessageKind::kAck, roots[r].root, value);
    }
  }

  void fail(const Tuple& input) override {
    if (input.completed()) return;
    input.mark_completed();
    bump(ex_.stats_.failed);
    Emitter& em = ex_.emitter_;
    if (!em.acking()) return;
    const MessageAnchors& roots = input.anchors();
    for (std::size_t r = 0; r < roots.size(); ++r) {
      em.send_control(em.acker_for(roots[r].root), MessageKind::kFail, roots[r].root, 0);
    }
  }

  void report_error(std::string_view message) override {
    ex_.report_error(task_, "reported error: " + std::string(message));
  }

 private:
  // Above this many anchors, emit_to gathers their roots (anchor_many).
  static constexpr std::size_t kFewAnchors = 8;

  BoltExecutor& ex_;
  TaskId task_;
  std::vector<AnchorEntry> scratch_;
};

BoltExecutor::BoltExecutor(const ExecutorEnv& env, const ExecutorPlan& plan, std::uint64_t seed)
    : Executor(env, plan, Transfer::Mode::kBlocking, std::chrono::milliseconds(50), seed) {
  const ComponentPlan& c = *plan.component;
  tick_info_ = StreamInfo{std::string(kSystemComponent), std::string(kTickStream),
                          Fields{"rate_secs"}, true};
  const std::int64_t tick_secs = config_int(c.config, keys::kTopologyTickTupleFreqSecs, 0);
  tick_period_ns_ = tick_secs > 0 ? tick_secs * 1'000'000'000 : 0;
  checkpointing_ = env.plan->checkpoint.enabled;
  if (!plan.tasks.empty()) first_task_ = plan.tasks.front().value;
  flush_interval_ns_ =
      std::max<std::int64_t>(1, config_int(c.config, keys::kTopologyBatchFlushIntervalMillis, 1)) *
      1'000'000;
}

void BoltExecutor::make_tasks(std::vector<std::unique_ptr<Bolt>> bolts) {
  const ComponentPlan& c = *plan_.component;
  for (std::size_t i = 0; i < plan_.tasks.size(); ++i) {
    auto t = std::make_unique<Task>();
    t->id = plan_.tasks[i];
    t->bolt = std::move(bolts[i]);
    t->context = make_context(t->id);
    t->collector = std::make_unique<Collector>(*this, t->id);
    t->basic = adapted_basic_bolt(*t->bolt);
    if (dynamic_cast<TimedBolt*>(t->bolt.get()) != nullptr) has_timed_bolt_ = true;
    t->blocked.assign(c.upstream_tasks.size(), 0);
    tasks_.push_back(std::move(t));
  }
  if (tasks_.size() == 1) only_task_ = tasks_.front().get();
}

BoltExecutor::~BoltExecutor() {
  stop();
  join();
}

bool BoltExecutor::prepare_tasks() {
  const Config& conf = plan_.component->config;
  for (auto& t : tasks_) {
    try {
      t->bolt->prepare(conf, *t->context, *t->collector);
    } catch (const std::exception& e) {
      report_fatal(t->id, std::string("prepare threw: ") + e.what());
      return false;  // the worker ends on it (TopologyRuntime::fatal_error)
    } catch (...) {
      report_fatal(t->id, "prepare threw a non-standard exception");
      return false;
    }
  }
  for (auto& t : tasks_) {
    auto* timed = dynamic_cast<TimedBolt*>(t->bolt.get());
    if (timed == nullptr) continue;
    const std::int64_t period = std::chrono::nanoseconds(timed->timer_period()).count();
    if (period <= 0) continue;
    t->timed = timed;
    t->timer_period_ns = period;
    t->next_timer_ns = now_ns() + period;
    timed_tasks_.push_back(t.get());
  }
  prepared_ = true;
  mark_ready();
  return true;
}

void BoltExecutor::cleanup_tasks() {
  if (!prepared_) return;
  prepared_ = false;
  for (auto& t : tasks_) {
    try {
      t->bolt->cleanup();
    } catch (const std::exception& e) {
      report_error(t->id, std::string("cleanup threw: ") + e.what());
    }
  }
}

bool BoltExecutor::open_inline() { return prepare_tasks() && open_members(); }

void BoltExecutor::close_inline() {
  close_members();
  cleanup_tasks();
}

void BoltExecutor::run() {
  if (!prepare_tasks()) return;
  if (tick_period_ns_ > 0) next_tick_ns_ = now_ns() + tick_period_ns_;
  const std::int32_t first_task = plan_.tasks.front().value;
  Batch batch;
  while (!stop_requested()) {
    bool work = false;
    std::int64_t flushed_ns = 0;  // when this burst's output was last handed on
    for (int i = 0; i < 4 && !stop_requested() && queue_.try_pop(batch); ++i) {
      if (!work) flushed_ns = last_check_ns_ = now_ns();
      work = true;
      for (auto& e : batch) {
        Task& task = *tasks_[static_cast<std::size_t>(e.dest.value - first_task)];
        if (checkpointing_) {
          receive(task, e);
        } else if (e.kind == MessageKind::kTuple) {
          execute(task, e.tuple, false);
        }
        if (--flush_countdown_ == 0) [[unlikely]] {
          flush_if_due(flushed_ns);
          // Stopping (a kill, the end of `rstorm local`): what is still
          // queued is not worked through, which a slow bolt (its stride is
          // one input) would take its time over; their trees fail or
          // replay as any lost tuple's.
          if (stop_requested()) break;
        }
      }
    }
    if (tick_period_ns_ > 0 && now_ns() >= next_tick_ns_) {
      send_ticks();
      work = true;
    }
    std::int64_t deadline = tick_period_ns_ > 0 ? next_tick_ns_ : 0;
    if (!timed_tasks_.empty()) {
      const std::int64_t now = now_ns();
      for (Task* t : timed_tasks_) {
        if (now >= t->next_timer_ns) {
          run_timer(*t);
          t->next_timer_ns = now + t->timer_period_ns;
          work = true;
        }
        if (deadline == 0 || t->next_timer_ns < deadline) deadline = t->next_timer_ns;
      }
    }
    transfer_.flush();
    if (work) {
      idle_.reset();
    } else {
      transfer_.wake_consumers();
      idle_.idle(queue_, deadline);
    }
  }
  cleanup_tasks();
}

void BoltExecutor::flush_if_due(std::int64_t& flushed_ns) {
  const std::int64_t now = now_ns();
  // Waited on a full queue since the last look: output is flowing as fast
  // as it is taken, and flushing would only hand on smaller batches; that
  // wait says nothing of the bolt's pace either.
  const std::uint64_t waits = stats_.backpressure_waits.load(std::memory_order_relaxed);
  if (waits != waits_seen_) {
    waits_seen_ = waits;
    last_check_ns_ = now;
    flush_countdown_ = flush_stride_;
    flushed_ns = now;
    return;
  }
  // The next look after about one flush interval's inputs at the pace just
  // seen: at every input for a bolt that takes a millisecond or more, once
  // in kMaxFlushStride for a quick one (reading the clock stays cheap).
  const std::int64_t elapsed = now - last_check_ns_;
  const std::int64_t stride =
      elapsed <= 0 ? kMaxFlushStride
                   : std::clamp<std::int64_t>(flush_interval_ns_ * flush_stride_ / elapsed, 1,
                                              kMaxFlushStride);
  flush_stride_ = static_cast<std::uint32_t>(stride);
  flush_countdown_ = flush_stride_;
  last_check_ns_ = now;
  // Acks and emits of a slow bolt working through a long queue go out every
  // flush interval, not at the end of the burst: held back, its trees timed
  // out upstream while it had long processed them.
  if (now - flushed_ns >= flush_interval_ns_) {
    transfer_.flush();
    flushed_ns = now;
  }
}

inline void BoltExecutor::call_bolt(Task& task, const Tuple& input) {
  try {
    if (task.basic != nullptr) {
      // What BasicBoltAdapter::execute does, with the ack a direct call;
      // with acking off only its count (nothing to send), not reached
      // through the task's collector.
      BasicOutputCollector out(*task.collector, input);
      task.basic->execute(input, out);
      if (emitter_.acking()) [[unlikely]] {
        task.collector->ack(input);
      } else {
        count_ack(input);
      }
    } else {
      task.bolt->execute(input);
    }
  } catch (...) {
    execute_threw(task, input, std::current_exception());
  }
}

inline void BoltExecutor::execute(Task& task, const Tuple& input, bool tick) {
  if (--sample_countdown_ == 0) [[unlikely]] {
    execute_sampled(task, input, tick);
    return;
  }
  call_bolt(task, input);
  bump(tick ? stats_.ticks : stats_.executed);
}

std::uint32_t BoltExecutor::sample_run_for(std::uint64_t mean_ns) {
  // Two clock reads (tens of ns) per kTimedNs of executes at most: timing a
  // bolt of 40 ns costs it about 1 %, not 4 % as one in 32 would.
  constexpr std::uint64_t kTimedNs = 5000;
  std::uint32_t run = kMinSampleRun;
  while (mean_ns > 0 && run < kMaxSampleRun && run * mean_ns < kTimedNs) run *= 2;
  return run;
}

void BoltExecutor::execute_sampled(Task& task, const Tuple& input, bool tick) {
  // One execute in each run is timed, at a random place in it, so that the
  // sample does not alias with a periodic input (a fixed sentence list fills
  // transfer batches on a fixed rhythm). The next run's length follows the
  // mean execute (sample_run_for).
  const std::uint32_t run = sample_run_for(sample_mean_ns_);
  sample_state_ ^= sample_state_ << 13;
  sample_state_ ^= sample_state_ >> 17;
  sample_state_ ^= sample_state_ << 5;
  const std::uint32_t place = sample_state_ & (run - 1);
  sample_countdown_ = sample_run_ - sample_place_ + place;
  sample_place_ = place;
  sample_run_ = run;
  const std::int64_t start = now_ns();
  // Time blocked on a full downstream queue inside execute is backpressure,
  // counted apart (backpressure_wait_ns), not execute latency.
  const std::uint64_t waited_before = stats_.backpressure_wait_ns.load(std::memory_order_relaxed);
  call_bolt(task, input);
  bump(tick ? stats_.ticks : stats_.executed);
  const std::uint64_t elapsed = static_cast<std::uint64_t>(now_ns() - start);
  const std::uint64_t waited =
      stats_.backpressure_wait_ns.load(std::memory_order_relaxed) - waited_before;
  const std::uint64_t took = elapsed > waited ? elapsed - waited : 0;
  record_latency(stats_.execute_ns, stats_.execute_samples, stats_.execute_latency, took);
  // A mean over the last eight or so: one slow execute shortens a run or two.
  sample_mean_ns_ =
      sample_mean_ns_ == 0 ? took + 1 : sample_mean_ns_ - sample_mean_ns_ / 8 + took / 8;
}

void BoltExecutor::execute_threw(Task& task, const Tuple& input, std::exception_ptr error) {
  std::string what = "execute threw a non-standard exception";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    what = std::string("execute threw: ") + e.what();
  } catch (...) {
  }
  report_error(task.id, what + "; input from " + input.source_component() + " failed");
  task.collector->fail(input);
}

void BoltExecutor::receive(Task& task, Envelope& e) {
  if (task.aligning != 0) {
    const auto& up = plan_.component->upstream_tasks;
    const TaskId from = e.tuple.source_task();
    auto it = std::lower_bound(up.begin(), up.end(), from);
    if (it != up.end() && *it == from && task.blocked[static_cast<std::size_t>(it - up.begin())]) {
      task.held.push_back(std::move(e));
      return;
    }
  }
  if (e.kind == MessageKind::kBarrier) {
    on_barrier(task, static_cast<std::int64_t>(e.root()), e.task());
  } else if (e.kind == MessageKind::kTuple) {
    if (!resumed_) note_resumed(task);
    execute(task, e.tuple, false);
  }
}

void BoltExecutor::note_resumed(const Task& task) {
  resumed_ = true;
  const std::int64_t restored = env_.plan->checkpoint_restored;
  if (restored == 0 || !env_.logger) return;
  // How long a recovery takes, end to end: the first tuple this executor
  // processes after its worker restored a checkpoint.
  env_.logger->info(
      "[topology={} component={} task={}] first tuple after restoring checkpoint {} received",
      env_.plan->name, plan_.component->id, task.id.value, restored);
}

void BoltExecutor::on_barrier(Task& task, std::int64_t id, TaskId from) {
  if (id <= task.last_stored) return;  // of a checkpoint given up on
  if (task.aligning != 0 && id > task.aligning) {
    // A newer checkpoint's barrier before the one aligned was complete: that
    // one was given up on (a barrier lost with a worker). Start over.
    release(task);
  }
  const auto& up = plan_.component->upstream_tasks;
  auto it = std::lower_bound(up.begin(), up.end(), from);
  if (it == up.end() || *it != from) {
    report_error(task.id, "checkpoint " + std::to_string(id) + ": a barrier from task " +
                              std::to_string(from.value) + ", which does not send to this one");
    return;
  }
  if (task.aligning == 0) {
    task.aligning = id;
    task.aligning_since_ns = now_ns();
  }
  char& b = task.blocked[static_cast<std::size_t>(it - up.begin())];
  if (b) return;
  b = 1;
  if (++task.blocked_count < up.size()) return;
  bump(stats_.checkpoint_alignment_ns,
       static_cast<std::uint64_t>(now_ns() - task.aligning_since_ns));
  complete_barrier(task.id, id);
  task.last_stored = id;
  release(task);
}

void BoltExecutor::before_snapshot(TaskId task, std::int64_t id) {
  tasks_[static_cast<std::size_t>(task.value - plan_.tasks.front().value)]->bolt->pre_checkpoint(
      id);
}

void BoltExecutor::release(Task& task) {
  task.aligning = 0;
  task.blocked_count = 0;
  std::fill(task.blocked.begin(), task.blocked.end(), 0);
  std::deque<Envelope> held;
  held.swap(task.held);
  for (auto& e : held) receive(task, e);
}

void BoltExecutor::run_timer(Task& task) {
  try {
    task.timed->on_timer();
  } catch (const std::exception& e) {
    report_error(task.id, std::string("on_timer threw: ") + e.what());
  } catch (...) {
    report_error(task.id, "on_timer threw a non-standard exception");
  }
}

void BoltExecutor::send_ticks() {
  const std::int64_t secs = tick_period_ns_ / 1'000'000'000;
  for (auto& t : tasks_) {
    // Outside every tree: its ack or fail is a no-op, counted in neither
    // acked nor failed (it is counted as a tick, not as executed).
    Tuple tick(&tick_info_, TaskId(), Values{secs});
    tick.mark_completed();
    execute(*t, tick, /*tick=*/true);
  }
  next_tick_ns_ = now_ns() + tick_period_ns_;
}

void BoltExecutor::run_one_inline(Envelope& e) { run_inline(*this, e); }

void BoltExecutor::execute_run(Task& task, Envelope* es, std::size_t n) {
  if (task.basic == nullptr || emitter_.acking()) {
    for (std::size_t i = 0; i < n; ++i) execute(task, es[i].tuple, false);
    return;
  }
  // call_bolt's BasicBolt with acking off. Its counts follow from the run:
  // every input not timed (execute_sampled counts those) is executed, and
  // acked unless execute threw (a BasicBolt cannot ack or fail otherwise),
  // so nothing is stored per input but what execute itself does. The run
  // is cut at the next timed execute (the countdown reaching it), so that
  // the executes between test nothing but the end of their stretch.
  BasicBolt& bolt = *task.basic;
  OutputCollector& collector = *task.collector;
  std::uint32_t countdown = sample_countdown_;  // >= 1: the next timed execute is the countdown-th
  std::size_t timed = 0;
  std::size_t threw = 0;
  BasicOutputCollector out(collector, es[0].tuple);
  Envelope* e = es;
  Envelope* const end = es + n;
  while (e != end) {
    const std::size_t untimed =
        std::min<std::size_t>(countdown - 1, static_cast<std::size_t>(end - e));
    countdown -= static_cast<std::uint32_t>(untimed);
    for (Envelope* const stop = e + untimed; e != stop; ++e) {
      try {
        out.set_input(e->tuple);
        bolt.execute(e->tuple, out);
      } catch (...) {
        execute_threw(task, e->tuple, std::current_exception());
        ++threw;
      }
    }
    if (e == end) break;
    execute_sampled(task, e->tuple, false);  // the countdown reached it
    countdown = sample_countdown_;
    ++timed;
    ++e;
  }
  sample_countdown_ = countdown;
  bump(stats_.executed, n - timed);
  bump(stats_.acked, n - timed - threw);
}

void run_inline_batch(BoltExecutor& member, Envelope* es, std::size_t n) {
  BoltExecutor::Task* task =
      member.only_task_ != nullptr
          ? member.only_task_
          : member.tasks_[static_cast<std::size_t>(es[0].dest.value - member.first_task_)].get();
  member.execute_run(*task, es, n);
}

void run_inline(BoltExecutor& member, Envelope& e) {
  if (e.kind != MessageKind::kTuple) return;  // no checkpoints when fused
  // Two loads to the task, not five in a chain (the head waits on them).
  BoltExecutor::Task* task =
      member.only_task_ != nullptr
          ? member.only_task_
          : member.tasks_[static_cast<std::size_t>(e.dest.value - member.first_task_)].get();
  member.execute(*task, e.tuple, false);
}

}  // namespace rstorm::worker
