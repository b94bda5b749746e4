#include "rstorm/worker/executor.hpp"

#include <pthread.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "rstorm/worker/checkpoint_uploader.hpp"

namespace rstorm::worker {
namespace {
std::size_t queue_slots(const RuntimeSettings& s) {
  std::size_t slots = s.receive_buffer_size / s.batch_size;
  return slots < 4 ? 4 : slots;
}

// Which destinations this executor never waits on (index: sink index).
std::vector<char> never_wait_sinks(const ExecutorEnv& env, const ExecutorPlan& self) {
  std::vector<char> out(env.sink_components.size(), 0);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = TopologyPlan::never_wait(*self.component, *env.sink_components[i]) ? 1 : 0;
  }
  return out;
}
}  // namespace

Executor::Executor(const ExecutorEnv& env, const ExecutorPlan& plan, Transfer::Mode mode,
                   std::chrono::microseconds max_park, std::uint64_t seed)
    : env_(env),
      plan_(plan),
      queue_(queue_slots(env.plan->settings)),
      transfer_(&env.sinks, env.sinks.size(), &env.task_sink, never_wait_sinks(env, plan),
                env.plan->settings.batch_size, mode, &stats_, env.stopping),
      emitter_(*env.plan, *plan.component, transfer_, stats_, seed, plan.index),
      idle_(env.plan->settings.wait_spin, max_park) {}

Executor::~Executor() {
  stop();
  join();
}

void Executor::start() {
  std::vector<TupleSink*> member_sinks;
  for (const Executor* m : members_) {
    member_sinks.push_back(env_.sinks[static_cast<std::size_t>(m->plan().index)]);
  }
  transfer_.bind_sinks(member_sinks);
  TaskId dest;
  const StreamRoute* usual = emitter_.single_usual_route(&dest);
  BoltExecutor* member = usual != nullptr ? transfer_.inline_member(dest) : nullptr;
  if (member != nullptr) {
    const std::size_t n = usual->info.fields.size();
    hop_ = {member, dest, &usual->info, n, emitter_.acking() ? FusedHop::kNoHop : n};
    transfer_.bind_hop(member, dest, &usual->info);
  }
  if (!thread_.joinable()) (void)launch([] { return api::Status::ok(); });
  {
    std::lock_guard lock(go_mutex_);
    if (go_ == Go::kWait) go_ = head_ != nullptr ? Go::kEnd : Go::kRun;  // a member: its head's
  }
  go_cv_.notify_all();
}

api::Status Executor::launch(const std::function<api::Status()>& construct) {
  std::optional<api::Status> made;  // GUARDED_BY(go_mutex_)
  thread_ = std::jthread([this, &construct, &made] {
    // "rs:<component>" (15 chars at most), so that top -H and perf name it.
    std::string name = "rs:" + plan_.component->id;
    name.resize(std::min<std::size_t>(name.size(), 15));
    pthread_setname_np(pthread_self(), name.c_str());
    api::Status s = api::Status::ok();
    try {
      s = construct();
    } catch (const std::exception& e) {
      s = api::Status::error("component '" + plan_.component->id + "': " + e.what());
    } catch (...) {
      s = api::Status::error("component '" + plan_.component->id +
                             "': a non-standard exception while making its tasks");
    }
    Go go;
    {
      std::unique_lock lock(go_mutex_);
      // launch() returns once this lock is let go: `construct` and `made`
      // are not touched after it.
      made = std::move(s);
      go_cv_.notify_all();
      go_cv_.wait(lock, [this] { return go_ != Go::kWait; });
      go = go_;
    }
    if (go != Go::kRun) return;
    if (open_members()) run();
    close_members();
    log_errors_not_logged(/*now=*/true);
    for (Executor* m : members_) m->log_errors_not_logged(/*now=*/true);
  });
  std::unique_lock lock(go_mutex_);
  go_cv_.wait(lock, [&made] { return made.has_value(); });
  return std::move(*made);
}

bool Executor::open_members() {
  for (Executor* m : members_) {
    m->local_tree_ = local_tree_;
    if (!m->open_inline()) return false;
  }
  return true;
}

void Executor::close_members() {
  for (Executor* m : members_) m->close_inline();
}

void Executor::stop() {
  stop_.store(true, std::memory_order_relaxed);
  queue_.notify();
  {
    std::lock_guard lock(go_mutex_);
    if (go_ == Go::kWait) go_ = Go::kEnd;
  }
  go_cv_.notify_all();
}

void Executor::join() {
  if (thread_.joinable()) thread_.join();
}

std::unique_ptr<TopologyContext> Executor::make_context(TaskId task) const {
  const ComponentPlan& c = *plan_.component;
  return std::make_unique<TopologyContext>(env_.plan->name, c.id, task,
                                           task.value - c.tasks.front().value, env_.plan->layout,
                                           env_.plan->user_metrics, env_.plan->state_backend);
}

std::vector<RecentError> Executor::recent_errors() const {
  std::lock_guard lock(errors_mutex_);
  return {recent_errors_.begin(), recent_errors_.end()};
}

void Executor::report_fatal(TaskId task, std::string_view what) {
  report_error(task, what);
  std::lock_guard lock(errors_mutex_);
  if (fatal_.empty()) {
    fatal_ = "component '" + plan_.component->id + "' task " + std::to_string(task.value) + ": " +
             std::string(what.substr(0, kMaxErrorMessage));
  }
}

std::string Executor::fatal_error() const {
  std::lock_guard lock(errors_mutex_);
  return fatal_;
}

void Executor::report_error(TaskId task, std::string_view what) {
  // The executor's thread, and the checkpoint uploader's for parts.
  stats_.errors.fetch_add(1, std::memory_order_relaxed);
  std::uint64_t not_logged = 0;
  {
    RecentError e{task,
                  std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count(),
                  std::string(what.substr(0, kMaxErrorMessage))};
    std::lock_guard lock(errors_mutex_);
    if (recent_errors_.size() == kMaxRecentErrors) recent_errors_.pop_front();
    recent_errors_.push_back(std::move(e));
    const std::int64_t now = now_ns();
    if (now - last_error_log_ns_ < 1'000'000'000 && last_error_log_ns_ != 0) {
      ++errors_not_logged_;
      return;
    }
    last_error_log_ns_ = now;
    not_logged = std::exchange(errors_not_logged_, 0);
  }
  if (env_.logger) {
    env_.logger->error("[topology={} component={} task={}] {}{}", env_.plan->name,
                       plan_.component->id, task.value, what,
                       not_logged ? " (" + std::to_string(not_logged) +
                                        " more errors in the last second not logged)"
                                  : std::string());
  }
}

void Executor::log_errors_not_logged(bool now) {
  std::uint64_t not_logged = 0;
  {
    std::lock_guard lock(errors_mutex_);
    const std::int64_t t = now_ns();
    if (errors_not_logged_ == 0 || (!now && t - last_error_log_ns_ < 1'000'000'000)) return;
    last_error_log_ns_ = t;
    not_logged = std::exchange(errors_not_logged_, 0);
  }
  if (env_.logger) {
    env_.logger->error(
        "[topology={} component={}] {} more error{} not logged (one a second is; `rstorm "
        "describe` shows the last ones, rstorm_task_errors_total counts them all)",
        env_.plan->name, plan_.component->id, not_logged, not_logged == 1 ? "" : "s");
  }
}

void Executor::complete_barrier(TaskId task, std::int64_t id) {
  const TopologyPlan& plan = *env_.plan;
  const std::int64_t start = now_ns();
  // The task stops only to freeze its state (RocksDB: a snapshot; memory: a
  // copy); reading it, encoding the part and storing it happen off its
  // thread (CheckpointUploader) while it goes on.
  std::optional<StateStore::Frozen> state;  // empty function: no state kept
  try {
    before_snapshot(task, id);
    try {
      StateStore::Frozen frozen;
      if (plan.state_backend->holds(task)) {
        frozen = plan.state_backend->open(task, plan_.component->id)->freeze();
      }
      state = std::move(frozen);
    } catch (const std::exception& e) {
      report_error(task, "checkpoint " + std::to_string(id) +
                             ": cannot snapshot the state store: " + e.what());
    }
  } catch (const std::exception& e) {
    report_error(task, "checkpoint " + std::to_string(id) + ": pre_checkpoint threw: " + e.what());
  }
  bump(stats_.checkpoint_snapshot_ns, static_cast<std::uint64_t>(now_ns() - start));
  for (TaskId d : plan_.component->downstream_tasks) {
    emitter_.send_control(d, MessageKind::kBarrier, static_cast<std::uint64_t>(id), 0, task);
  }
  if (state && env_.uploader != nullptr) {
    env_.uploader->submit(CheckpointUploader::Part{this, task, id, std::move(*state)});
    return;
  }
  std::uint64_t bytes = kCheckpointPartFailed;
  if (state) {
    bytes = store_part(task, id, *state);
  } else {
    stats_.checkpoint_part_failures.fetch_add(1, std::memory_order_relaxed);
  }
  emitter_.send_control(plan.checkpoint_coordinator, MessageKind::kCheckpointDone,
                        static_cast<std::uint64_t>(id), bytes, task);
}

std::uint64_t Executor::store_part(TaskId task, std::int64_t checkpoint,
                                   const StateStore::Frozen& state) {
  // fetch_add: the executor's thread and the uploader's may both count.
  auto failed = [&](const std::string& why) {
    report_error(task, "checkpoint " + std::to_string(checkpoint) + ": " + why);
    stats_.checkpoint_part_failures.fetch_add(1, std::memory_order_relaxed);
    return kCheckpointPartFailed;
  };
  std::string part;
  try {
    part = encode_task_snapshot(checkpoint, task, state ? state() : StateEntries());
  } catch (const std::exception& e) {
    return failed(std::string("cannot snapshot the state store: ") + e.what());
  }
  api::Status stored = env_.plan->checkpoint_store->put(checkpoint, task, part);
  if (!stored.is_ok()) return failed(stored.message());
  stats_.checkpoint_parts.fetch_add(1, std::memory_order_relaxed);
  stats_.checkpoint_bytes.fetch_add(part.size(), std::memory_order_relaxed);
  return part.size();
}

}  // namespace rstorm::worker
