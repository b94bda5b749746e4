#include "rstorm/worker/spout_executor.hpp"

#include <algorithm>

namespace rstorm::worker {

struct SpoutExecutor::Task {
  TaskId id;
  std::unique_ptr<Spout> spout;
  std::unique_ptr<TopologyContext> context;
  std::unique_ptr<Collector> collector;
  std::uint32_t pending = 0;
  bool finished = false;  // said it has no more input (finish())
  // With topology.max.spout.pending null: the adaptive bound on `pending`.
  double limit = SpoutExecutor::kInitialPendingLimit;
  std::int64_t last_decrease_ns = 0;
  // The last tree completed, or the bound last raised for want of one
  // (window_starve); 0 until the bound is first reached.
  std::int64_t last_progress_ns = 0;
};

class SpoutExecutor::Collector final : public SpoutOutputCollector {
 public:
  Collector(SpoutExecutor& ex, int task_index, TaskId task)
      : ex_(ex), task_index_(task_index), task_(task) {}

  void emit_to(std::string_view stream, Values&& values, Value msg_id, TaskId direct) override {
    send<Values>(ex_.emitter_.route(stream, values, direct), values, std::move(msg_id));
  }

  // emit({...}) and emit of a Values to copy: the values are copied into
  // each tuple sent, with no Values in between, whenever the stream is
  // routed once (route_usual); any other emit goes through emit_to with
  // them in a Values.
  //
  // An unreliable emit to a fused member run on this thread (FusedHop)
  // fills the next slot of the hop's batch in place (Transfer::hop_slot),
  // which the member runs when it is full or at the flush: no call on the
  // way for values that need no allocation. A reliable one runs the member
  // at once, inside its tree (emit_tracked_hop), after the batch.
  void emit_list(std::string_view stream, std::span<const Value> values, Value msg_id,
                 TaskId direct) override {
    const Executor::FusedHop& hop = ex_.hop_;
    if (values.size() != hop.num_fields || stream != kDefaultStream ||
        direct.valid()) [[unlikely]] {
      emit_routed(stream, values, msg_id, direct);
      return;
    }
    if (!msg_id.is_null()) {
      emit_tracked_hop(values, msg_id);
      return;
    }
    emit_on_hop(values);
  }
  // emit_list(kDefaultStream, values, Value(), TaskId()).
  void emit_usual(std::span<const Value> values) override {
    const Executor::FusedHop& hop = ex_.hop_;
    if (values.size() != hop.num_fields) [[unlikely]] {
      emit_routed(kDefaultStream, values, none_, TaskId());
      return;
    }
    emit_on_hop(values);
  }
  // An unreliable emit on the fused hop, of as many values as its fields.
  [[gnu::always_inline]] void emit_on_hop(std::span<const Value> values) {
    // From here on only `values` is kept for a way out (emit_hop_slow).
    // `ex_` read once: the stores below would otherwise make it be read
    // again.
    SpoutExecutor& ex = ex_;
    Envelope& e = ex.transfer_.hop_slot();
    if (!ex.fill_hop_pair(e, task_, values)) [[unlikely]] {
      emit_hop_slow(values);
      return;
    }
    ++ex.emits_;
    ex.progressed_ = true;  // no tree to wait for: the emit is the progress
    ex.transfer_.commit_hop();  // counted emitted and transferred when run
  }
  // emit_on_hop's emit of values that fill_hop_pair could not copy (not a
  // pair of scalars).
  [[gnu::noinline]] void emit_hop_slow(std::span<const Value> values) {
    Envelope& e = ex_.transfer_.hop_slot();
    ex_.fill_hop_any(e, task_, values);
    ++ex_.emits_;
    ex_.progressed_ = true;
    ex_.transfer_.commit_hop();
  }
  // emit_list's reliable emit on the fused hop: with acking, emit_tracked's
  // tree for the hop's one task, its tuple filled in place
  // (fill_hop_input); otherwise, or when the values cannot be copied so,
  // the routed path.
  [[gnu::noinline]] void emit_tracked_hop(std::span<const Value> values, Value& msg_id) {
    Emitter& em = ex_.emitter_;
    ex_.transfer_.drain_hop();  // the hop's batch was emitted first
    Envelope& e = ex_.transfer_.inline_envelope();
    if (!em.acking() || !ex_.fill_hop_input(e, task_, values)) {
      emit_routed(kDefaultStream, values, msg_id, TaskId());
      return;
    }
    ++ex_.emits_;
    bump(ex_.stats_.emitted);
    const std::uint64_t root = em.next_root();
    LocalTree* local = ex_.local_tree_;
    if (local != nullptr) {
      local->root = root;
      local->acks = 0;
    }
    const std::uint64_t edge = em.next_id();
    e.tuple.mutable_anchors().xor_in(root, edge);
    run_inline(*ex_.hop_.member, e);
    track_tree(root, edge, local, msg_id, 1);
  }
  // Any other emit of a list. Out of line: emit_list's own path saves no
  // register.
  [[gnu::noinline]] void emit_routed(std::string_view stream, std::span<const Value> values,
                                     Value& msg_id, TaskId direct) {
    const StreamRoute* route = ex_.emitter_.route_usual(stream, values.size(), direct);
    if (route == nullptr) {
      emit_unrouted(stream, values, msg_id, direct);
      return;
    }
    send<std::span<const Value>>(*route, values, std::move(msg_id));
  }
  // An emit route_usual did not route (another stream, a grouping by
  // fields, a direct task): routed from the list itself, whose values are
  // copied into each tuple (no Values built in between). Out of line: its
  // locals take no room in emit_list's frame.
  [[gnu::noinline]] void emit_unrouted(std::string_view stream, std::span<const Value> values,
                                       Value& msg_id, TaskId direct) {
    send<std::span<const Value>>(ex_.emitter_.route(stream, values, direct), values,
                                 std::move(msg_id));
  }

  // A routed emit. The usual unreliable one (one target) here, the rest out
  // of line, so that this path saves few registers. `values`: a Values
  // (moved into the last tuple) or a span.
  template <typename V>
  [[gnu::always_inline]] void send(const StreamRoute& route, EmittedArg<V> values, Value&& msg_id) {
    Emitter& em = ex_.emitter_;
    const auto targets = em.targets();
    if (targets.size() == 1 && msg_id.is_null()) [[likely]] {
      // Counted first, so that the commit (a fused member's run) is the
      // last call: no registers kept across it.
      ++ex_.emits_;
      ex_.progressed_ = true;  // no tree to wait for: the emit is the progress
      bump(ex_.stats_.emitted);
      bump(ex_.stats_.transferred);
      Emitter::begin_tuple(ex_.transfer_, targets[0], &route.info, task_, values, true);
      ex_.transfer_.commit();
      return;
    }
    emit_tracked<V>(route, targets, values, std::move(msg_id));
  }

  // `values`: a Values (moved into the last tuple) or a span of a list's.
  template <typename V>
  [[gnu::noinline]] void emit_tracked(const StreamRoute& route, std::span<const TaskId> targets,
                                      EmittedArg<V> values, Value msg_id) {
    Emitter& em = ex_.emitter_;
    ++ex_.emits_;
    bump(ex_.stats_.emitted);
    const std::size_t n = targets.size();
    const bool reliable = !msg_id.is_null();
    if (reliable && em.acking()) {
      const std::uint64_t root = em.next_root();
      // Fused members run the tuples inside commit(); their acks of this
      // tree are XORed into `local` (see LocalTree).
      LocalTree* local = ex_.local_tree_;
      if (local != nullptr) {
        local->root = root;
        local->acks = 0;
      }
      std::uint64_t all_edges = 0;
      for (std::size_t i = 0; i < n; ++i) {
        Tuple& t =
            Emitter::begin_tuple(ex_.transfer_, targets[i], &route.info, task_, values, i + 1 == n);
        const std::uint64_t edge = em.next_id();
        t.mutable_anchors().xor_in(root, edge);
        all_edges ^= edge;
        ex_.transfer_.commit();
      }
      track_tree(root, all_edges, local, msg_id, n);
      return;
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        Emitter::begin_tuple(ex_.transfer_, targets[i], &route.info, task_, values, i + 1 == n);
        ex_.transfer_.commit();
      }
      if (reliable) ex_.immediate_acks_.emplace_back(task_index_, std::move(msg_id));
      ex_.progressed_ = true;  // no tree to wait for: the emit is the progress
    }
    bump(ex_.stats_.transferred, n);
  }

  // After a reliable emit's `n` tuples of tree `root`, with edges XORed to
  // `all_edges`, went out (fused members ran them, acking into `local`):
  // the tree, complete already or pending at its acker.
  void track_tree(std::uint64_t root, std::uint64_t all_edges, LocalTree* local, Value& msg_id,
                  std::size_t n) {
    Emitter& em = ex_.emitter_;
    std::uint64_t init = all_edges;
    if (local != nullptr) {
      init ^= local->acks;
      local->root = 0;
    }
    // The clock is read once per 16 reliable emits (and per loop): cheap
    // enough for millions of emits a second, precise enough for latency.
    if ((++ex_.clock_reads_ & 15) == 0) ex_.now_ns_ = now_ns();
    bump(ex_.stats_.transferred, n);
    if (local != nullptr && init == 0) {
      // Complete already: acked after next_tuple returns, never pending.
      ex_.completed_here_.emplace_back(task_index_, std::move(msg_id), ex_.now_ns_);
      // In flight until its ack() was called: `rstorm local` ends on none.
      ex_.store_in_flight();
      return;
    }
    em.send_control(em.acker_for(root), MessageKind::kAckInit, root, init, task_);
    Pending& p = ex_.pending_.get_or_insert(root);
    p.msg_id = std::move(msg_id);
    p.task = task_index_;
    p.emitted_ns = ex_.now_ns_;
    ++ex_.tasks_[static_cast<std::size_t>(task_index_)]->pending;
    ex_.store_in_flight();
  }

  void report_error(std::string_view message) override {
    ex_.report_error(task_, "reported error: " + std::string(message));
  }

  void finish() override {
    auto& task = *ex_.tasks_[static_cast<std::size_t>(task_index_)];
    if (task.finished) return;
    task.finished = true;
    ex_.finished_tasks_.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  SpoutExecutor& ex_;
  // The message id of an unreliable emit: null, and still null when
  // emit_routed has moved from it (a null Value's move copies it).
  Value none_;
  int task_index_;
  TaskId task_;
};

SpoutExecutor::SpoutExecutor(const ExecutorEnv& env, const ExecutorPlan& plan, std::uint64_t seed)
    : Executor(env, plan, Transfer::Mode::kNonBlocking, env.plan->settings.spout_wait_park, seed),
      timeout_ns_(std::chrono::nanoseconds(env.plan->settings.message_timeout).count()),
      // Half the timeout is left for queues, beyond what windows hold trees.
      latency_target_ns_(
          (timeout_ns_ +
           std::min(timeout_ns_,
                    std::chrono::nanoseconds(env.plan->settings.window_hold).count())) /
          2),
      min_limit_(std::max(1.0, env.plan->settings.window_min_pending)),
      starve_ns_(std::chrono::nanoseconds(env.plan->settings.window_starve).count()),
      max_pending_(static_cast<std::uint32_t>(std::max<std::int64_t>(
          0, config_int(plan.component->config, keys::kTopologyMaxSpoutPending,
                        env.plan->settings.max_spout_pending)))),
      adaptive_(max_pending_ == 0 && env.plan->acking()),
      burst_(env.plan->settings.batch_size) {
  sweep_period_ns_ = std::clamp<std::int64_t>(timeout_ns_ / 10, 100'000'000, 1'000'000'000);
  // A fused head with acking completes the trees that run wholly on its
  // thread itself (LocalTree); run() drops it when there are no members.
  if (env.plan->acking()) local_tree_ = &local_tree_state_;
  coordinator_ = env.plan->checkpoint.enabled &&
                 std::find(plan.tasks.begin(), plan.tasks.end(),
                           env.plan->checkpoint_coordinator) != plan.tasks.end();
  if (coordinator_) checkpoint_parts_.assign(env.plan->task_executor.size(), 0);
  if (adaptive_) {
    stats_.pending_limit.store(
        static_cast<std::uint64_t>(std::max(kInitialPendingLimit, min_limit_)) * plan.tasks.size(),
        std::memory_order_relaxed);
  }
}

void SpoutExecutor::make_tasks(std::vector<std::unique_ptr<Spout>> spouts) {
  for (std::size_t i = 0; i < plan_.tasks.size(); ++i) {
    auto t = std::make_unique<Task>();
    t->id = plan_.tasks[i];
    t->spout = std::move(spouts[i]);
    t->context = make_context(t->id);
    t->collector = std::make_unique<Collector>(*this, static_cast<int>(i), t->id);
    t->limit = std::max(kInitialPendingLimit, min_limit_);
    tasks_.push_back(std::move(t));
  }
}

SpoutExecutor::~SpoutExecutor() {
  stop();
  join();
}

void SpoutExecutor::set_active(bool active) {
  want_active_.store(active, std::memory_order_relaxed);
  queue_.notify();
}

void SpoutExecutor::run() {
  const Config& conf = plan_.component->config;
  for (auto& t : tasks_) {
    try {
      t->spout->open(conf, *t->context, *t->collector);
    } catch (const std::exception& e) {
      report_fatal(t->id, std::string("open threw: ") + e.what());
      return;  // the worker ends on it (TopologyRuntime::fatal_error)
    } catch (...) {
      report_fatal(t->id, "open threw a non-standard exception");
      return;
    }
  }
  // Only a fused head completes trees itself (its members, opened before
  // run(), share local_tree_).
  if (!has_members()) local_tree_ = nullptr;
  mark_ready();
  // Set by the runtime's restore, after this executor was made.
  if (coordinator_) checkpoint_id_ = env_.plan->checkpoint_restored;
  while (!stop_requested()) {
    const std::int64_t previous = now_ns_;
    const std::int64_t now = now_ns_ = now_ns();
    // Time since the last pass counts as throttled when that pass was.
    if (stats_.throttled.load(std::memory_order_relaxed)) {
      bump(stats_.throttled_ns, static_cast<std::uint64_t>(std::max<std::int64_t>(0, now - previous)));
    }
    bool work = drain_queue();
    apply_activation();
    if (coordinator_) coordinate_checkpoints(now);
    if (now >= next_sweep_ns_) {
      if (pending_.size() > 0) expire_timed_out(now);
      next_sweep_ns_ = now + sweep_period_ns_;
    }
    const bool blocked = transfer_.has_backlog() && !transfer_.flush();
    stats_.throttled.store(blocked, std::memory_order_relaxed);
    if (active_ && !blocked && now_ns_ >= next_poll_ns_) work = call_next_tuple() || work;
    complete_here();
    ack_unreliable();
    transfer_.flush();
    track_progress(blocked);
    if (work) {
      idle_.reset();
      continue;
    }
    transfer_.wake_consumers();
    if (blocked) {
      // Throttled by a full queue: wake as soon as it has room, but soon
      // enough to keep draining acks.
      transfer_.wait_for_backlog(std::chrono::microseconds(200));
    } else if (!active_ || next_poll_ns_ > now_ns_) {
      // Deactivated (nothing to poll: wait up to 100 ms), or the source had
      // nothing (ask it again at next_poll_ns_, as Storm's spout wait
      // strategy does). Activation, a stop and completions wake it sooner;
      // completions are handled at once but do not make it ask sooner.
      std::int64_t deadline = active_ ? next_poll_ns_ : now_ns_ + 100'000'000;
      if (pending_.size() > 0) deadline = std::min(deadline, next_sweep_ns_);
      if (coordinator_ && active_) deadline = std::min(deadline, next_checkpoint_ns_);
      idle_.park_until(queue_, deadline);
    } else {
      std::int64_t deadline = pending_.size() > 0 ? next_sweep_ns_ : 0;
      if (coordinator_ && active_) {
        deadline = deadline == 0 ? next_checkpoint_ns_ : std::min(deadline, next_checkpoint_ns_);
      }
      idle_.idle(queue_, deadline);
    }
  }
  for (auto& t : tasks_) {
    try {
      if (active_) t->spout->deactivate();
      t->spout->close();
    } catch (const std::exception& e) {
      report_error(t->id, std::string("close threw: ") + e.what());
    }
  }
}

void SpoutExecutor::coordinate_checkpoints(std::int64_t now) {
  const TopologyPlan& plan = *env_.plan;
  const std::int64_t interval = std::chrono::nanoseconds(plan.checkpoint.interval).count();
  if (checkpoint_running_ != 0) {
    // A barrier lost with a worker, or a task that cannot keep up: give the
    // checkpoint up after the longer of ten intervals and the message timeout.
    const std::int64_t limit = std::max(10 * interval, timeout_ns_);
    if (now - checkpoint_started_ns_ >= limit) {
      give_up_checkpoint("not every task stored its part within " +
                         std::to_string(limit / 1'000'000) + " ms");
    }
    return;
  }
  if (next_checkpoint_ns_ == 0) next_checkpoint_ns_ = now + interval;
  if (!active_ || now < next_checkpoint_ns_) return;
  checkpoint_running_ = ++checkpoint_id_;
  checkpoint_started_ns_ = now;
  checkpoint_started_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  std::fill(checkpoint_parts_.begin(), checkpoint_parts_.end(), 0);
  checkpoint_parts_done_ = 0;
  checkpoint_bytes_ = 0;
  next_checkpoint_ns_ = now + interval;
  for (const auto& cp : plan.components) {
    if (cp->role != ExecutorRole::kSpout) continue;
    for (TaskId t : cp->tasks) {
      emitter_.send_control(t, MessageKind::kBarrier,
                            static_cast<std::uint64_t>(checkpoint_running_), 0,
                            plan.checkpoint_coordinator);
    }
  }
}

void SpoutExecutor::part_done(std::int64_t id, TaskId task, std::uint64_t bytes) {
  if (!coordinator_ || id != checkpoint_running_) return;  // one given up on
  if (bytes == kCheckpointPartFailed) {
    give_up_checkpoint("task " + std::to_string(task.value) + " (component '" +
                       env_.plan->layout->task_component[static_cast<std::size_t>(task.value)] +
                       "') could not store its part (see its errors)");
    return;
  }
  const auto t = static_cast<std::size_t>(task.value);
  if (t >= checkpoint_parts_.size() || checkpoint_parts_[t]) return;
  checkpoint_parts_[t] = 1;
  checkpoint_bytes_ += bytes;
  if (++checkpoint_parts_done_ < env_.plan->checkpoint_tasks) return;
  const TopologyPlan& plan = *env_.plan;
  CheckpointRecord record;
  record.id = id;
  record.started_ms = checkpoint_started_ms_;
  record.completed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  record.bytes = checkpoint_bytes_;
  record.tasks = checkpoint_parts_done_;
  record.epoch = plan.checkpoint_store->epoch();
  checkpoint_running_ = 0;
  api::Status s = plan.checkpoint_store->complete(record, plan.checkpoint.retained);
  if (!s.is_ok()) {
    bump(stats_.checkpoints_failed);
    report_error(plan.checkpoint_coordinator,
                 "checkpoint " + std::to_string(id) + ": " + s.message());
    return;
  }
  bump(stats_.checkpoints_completed);
  stats_.last_checkpoint_id.store(static_cast<std::uint64_t>(id), std::memory_order_relaxed);
  stats_.last_checkpoint_ms.store(static_cast<std::uint64_t>(record.completed_ms),
                                  std::memory_order_relaxed);
  stats_.last_checkpoint_duration_ns.store(
      static_cast<std::uint64_t>(std::max<std::int64_t>(0, now_ns() - checkpoint_started_ns_)),
      std::memory_order_relaxed);
  stats_.last_checkpoint_bytes.store(record.bytes, std::memory_order_relaxed);
}

void SpoutExecutor::give_up_checkpoint(const std::string& why) {
  const std::int64_t id = checkpoint_running_;
  checkpoint_running_ = 0;
  bump(stats_.checkpoints_failed);
  std::string missing;
  int listed = 0;
  for (const auto& cp : env_.plan->components) {
    if (cp->role == ExecutorRole::kAcker) continue;
    for (TaskId t : cp->tasks) {
      if (checkpoint_parts_[static_cast<std::size_t>(t.value)] || ++listed > 8) continue;
      missing += (missing.empty() ? "" : ", ") + std::to_string(t.value) + " ('" + cp->id + "')";
    }
  }
  report_error(env_.plan->checkpoint_coordinator,
               "checkpoint " + std::to_string(id) + " given up: " + why +
                   (missing.empty() ? "" : "; tasks without a part: " + missing) +
                   "; the topology goes on, the last complete checkpoint stays the one restored");
}

void SpoutExecutor::track_progress(bool blocked) {
  const bool waiting = pending_.size() > 0 || blocked || transfer_.has_backlog();
  const bool was_waiting = waiting_.load(std::memory_order_relaxed);
  // Progress, or the start of a wait, restarts the clock.
  if (progressed_ || (waiting && !was_waiting)) {
    waiting_since_ns_.store(now_ns_, std::memory_order_relaxed);
  }
  progressed_ = false;
  if (waiting != was_waiting) waiting_.store(waiting, std::memory_order_release);
}

void SpoutExecutor::apply_activation() {
  const bool want = want_active_.load(std::memory_order_relaxed);
  if (want == active_) return;
  active_ = want;
  for (auto& t : tasks_) {
    try {
      if (want) {
        t->spout->activate();
      } else {
        t->spout->deactivate();
      }
    } catch (const std::exception& e) {
      report_error(t->id, std::string(want ? "activate" : "deactivate") + " threw: " + e.what());
    }
  }
}

bool SpoutExecutor::call_next_tuple() {
  // What the loop reads kept in locals: next_tuple is a call, after which
  // members would be read again.
  const std::uint32_t max_pending = max_pending_;
  const std::size_t burst = burst_;
  bool emitted = false;
  for (auto& owned : tasks_) {
    Task& t = *owned;
    if (t.finished) continue;
    const std::uint32_t bound = adaptive_ ? static_cast<std::uint32_t>(t.limit) : max_pending;
    Spout& spout = *t.spout;
    std::size_t calls = 0;  // that emitted: one that did not ends the loop
    bool backlog = false;
    while (calls < burst && !t.finished) {
      if (transfer_.has_backlog()) {
        backlog = true;
        break;
      }
      if (bound > 0 && t.pending >= bound) {
        if (adaptive_ && starve_ns_ > 0) raise_starved_limit(t);
        break;
      }
      const std::uint64_t before = emits_;
      try {
        spout.next_tuple();
      } catch (const std::exception& e) {
        report_error(t.id, std::string("next_tuple threw: ") + e.what());
        break;
      }
      if (emits_ == before) {
        next_poll_ns_ =
            now_ns_ + std::chrono::nanoseconds(env_.plan->settings.spout_wait_park).count();
        break;
      }
      ++calls;
    }
    emitted = emitted || calls > 0;
    if (backlog) return emitted;
  }
  return emitted;
}

bool SpoutExecutor::drain_queue() {
  bool any = false;
  Batch batch;
  for (int i = 0; i < 16 && queue_.try_pop(batch); ++i) {
    any = true;
    for (auto& e : batch) handle(e);
  }
  return any;
}

void SpoutExecutor::handle(Envelope& e) {
  if (e.kind == MessageKind::kBarrier) {
    // Between two next_tuple calls: the part holds exactly what the task
    // emitted before, and the barrier goes out behind those tuples.
    complete_barrier(e.dest, static_cast<std::int64_t>(e.root()));
    return;
  }
  if (e.kind == MessageKind::kCheckpointDone) {
    part_done(static_cast<std::int64_t>(e.root()), e.task(), e.value());
    return;
  }
  // A tree the ackers completed or failed is progress; a timeout is not.
  if (e.kind == MessageKind::kAckComplete || e.kind == MessageKind::kAckFailed) {
    progressed_ = true;
    const bool acked = e.kind == MessageKind::kAckComplete;
    for (std::size_t i = 0; i < e.messages(); ++i) complete(e.root(i), acked);
  }
}

void SpoutExecutor::complete(std::uint64_t root, bool acked) {
  Pending* p = pending_.find(root);
  if (p == nullptr) return;  // already timed out
  Task& t = *tasks_[static_cast<std::size_t>(p->task)];
  Value msg_id = std::move(p->msg_id);
  const std::int64_t emitted_ns = p->emitted_ns;
  pending_.erase(root);  // `p` is gone from here on
  --t.pending;
  store_in_flight();
  finish_tree(t, msg_id, emitted_ns, acked, true);
}

void SpoutExecutor::finish_tree(Task& t, const Value& msg_id, std::int64_t emitted_ns, bool acked,
                                bool was_pending) {
  t.last_progress_ns = now_ns_;
  // The adaptive bound is on pending trees: one that completed inside its
  // emit never pended, and says nothing of the queues.
  if (adaptive_ && was_pending) adapt_limit(t, std::max<std::int64_t>(0, now_ns_ - emitted_ns));
  try {
    if (acked) {
      bump(stats_.acked);
      record_latency(stats_.complete_ns, stats_.complete_samples, stats_.complete_latency,
                     static_cast<std::uint64_t>(std::max<std::int64_t>(0, now_ns_ - emitted_ns)));
      t.spout->ack(msg_id);
    } else {
      bump(stats_.failed);
      t.spout->fail(msg_id);
    }
  } catch (const std::exception& e) {
    report_error(t.id, std::string(acked ? "ack" : "fail") + " threw: " + e.what());
  }
}

void SpoutExecutor::adapt_limit(Task& t, std::int64_t latency_ns) {
  if (latency_ns > latency_target_ns_) {
    // Trees wait too long (queues hold more than half the timeout's worth):
    // halve what is in flight, once per such wait, so that the trees already
    // emitted can show the effect before the next cut.
    if (now_ns_ - t.last_decrease_ns >= latency_ns) {
      t.limit = std::max(min_limit_, std::min(t.limit, static_cast<double>(t.pending) + 1) / 2);
      t.last_decrease_ns = now_ns_;
      bump(stats_.pending_limit_cuts);
    }
  } else if (latency_ns <= latency_target_ns_ / 2 && t.limit < kMaxPendingLimit) {
    t.limit += 1;  // within a quarter of the timeout (a quarter to a half: hold)
  } else {
    return;  // the bound holds
  }
  double sum = 0;
  for (const auto& task : tasks_) sum += task->limit;
  stats_.pending_limit.store(static_cast<std::uint64_t>(sum), std::memory_order_relaxed);
}

void SpoutExecutor::raise_starved_limit(Task& t) {
  if (t.last_progress_ns == 0) {
    t.last_progress_ns = now_ns_;
  } else if (now_ns_ - t.last_progress_ns >= starve_ns_ && t.limit < kMaxPendingLimit) {
    t.limit = std::min(kMaxPendingLimit, t.limit * 2);
    t.last_progress_ns = now_ns_;
    double sum = 0;
    for (const auto& task : tasks_) sum += task->limit;
    stats_.pending_limit.store(static_cast<std::uint64_t>(sum), std::memory_order_relaxed);
  }
}

void SpoutExecutor::expire_timed_out(std::int64_t now) {
  std::vector<std::uint64_t> expired;
  pending_.for_each([&](std::uint64_t root, Pending& p) {
    if (now - p.emitted_ns >= timeout_ns_) expired.push_back(root);
  });
  for (std::uint64_t root : expired) complete(root, false);
}

void SpoutExecutor::complete_here() {
  if (completed_here_.empty()) return;
  progressed_ = true;
  // A spout may emit from ack(), adding to completed_here_ meanwhile.
  completing_.swap(completed_here_);
  for (CompletedHere& c : completing_) {
    finish_tree(*tasks_[static_cast<std::size_t>(c.task)], c.msg_id, c.emitted_ns, true, false);
  }
  completing_.clear();
  store_in_flight();
}

void SpoutExecutor::ack_unreliable() {
  if (immediate_acks_.empty()) return;
  std::vector<std::pair<int, Value>> acks;
  acks.swap(immediate_acks_);
  for (auto& [task, msg_id] : acks) {
    bump(stats_.acked);
    try {
      tasks_[static_cast<std::size_t>(task)]->spout->ack(msg_id);
    } catch (const std::exception& e) {
      report_error(tasks_[static_cast<std::size_t>(task)]->id,
                   std::string("ack threw: ") + e.what());
    }
  }
}

}  // namespace rstorm::worker
