#include "rstorm/worker/topology_runtime.hpp"

#include <algorithm>
#include <map>
#include <thread>

#include "rstorm/worker/acker_executor.hpp"
#include "rstorm/worker/bolt_executor.hpp"
#include "rstorm/worker/spout_executor.hpp"
#include "rstorm/worker/state_backends.hpp"

namespace rstorm::worker {
namespace {

// One instance per task, made by the component's factory.
template <typename T, typename Make>
api::Result<std::vector<std::unique_ptr<T>>> make_instances(const ExecutorPlan& ep, Make make) {
  std::vector<std::unique_ptr<T>> out;
  const std::string& id = ep.component->id;
  for (std::size_t i = 0; i < ep.tasks.size(); ++i) {
    try {
      auto instance = make(id);
      if (!instance) {
        return api::Status::error("component '" + id + "': its factory returned no instance");
      }
      out.push_back(std::move(instance));
    } catch (const std::exception& e) {
      return api::Status::error("component '" + id + "': its factory threw: " + e.what());
    }
  }
  return out;
}

// Makes an executor of type E (SpoutExecutor or BoltExecutor) into `out` and
// launches its thread, which makes its tasks' instances of T with `make`.
// Returns what that construction returned.
template <typename E, typename T, typename Make>
api::Status launch_with(const ExecutorEnv& env, const ExecutorPlan& ep, std::uint64_t seed,
                        Make make, std::unique_ptr<Executor>& out) {
  auto ex = std::make_unique<E>(env, ep, seed);
  E* e = ex.get();
  out = std::move(ex);
  return e->launch([&]() -> api::Status {
    auto instances = make_instances<T>(ep, make);
    if (!instances.ok()) return instances.status();
    e->make_tasks(std::move(instances).value());
    return api::Status::ok();
  });
}

// Where a fused head sends its member's tuples: the member runs each tuple
// as the head commits it, on the head's thread (a function call, no batch,
// no queue, no wake-up), and hands its own output on at the head's flush.
class InlineSink final : public TupleSink {
 public:
  // A member is a bolt (BoltExecutor is final: its calls here are direct).
  explicit InlineSink(BoltExecutor* member) : member_(member) {}
  bool try_push(Batch& batch) override {
    for (auto& e : batch) member_->run_one_inline(e);
    member_->flush_inline();
    batch.clear();
    return true;
  }
  void force_push(Batch& batch) override { try_push(batch); }
  void wait_for_space(std::chrono::microseconds) override {}
  BoltExecutor* inline_member() const override { return member_; }
  void flush() override { member_->flush_inline(); }
  // The member's own consumers: the head ran out of work.
  void wake() override { member_->wake_inline(); }

 private:
  BoltExecutor* member_;
};

}  // namespace

api::Result<std::unique_ptr<TopologyRuntime>> TopologyRuntime::create(
    const std::string& name, const Config& config, const Topology& topology,
    std::shared_ptr<spdlog::logger> logger, std::uint64_t seed) {
  auto plan = make_plan(name, config, topology);
  if (!plan.ok()) return plan.status();
  // Local mode: state in memory unless the config asks for RocksDB. A
  // storm.local.dir that is not a string (the validator refuses it) counts as
  // absent: reading it must not fail topologies that keep no state.
  const Config::Entry* local_dir = config.find(keys::kLocalDir);
  StateBackendDefaults state;
  state.dir = std::filesystem::path(local_dir != nullptr && local_dir->value.is_string()
                                        ? local_dir->value.as_string()
                                        : "rstorm-local") /
              "state" / name;
  state.topology = name;
  auto backend = make_state_backend(config, state);
  if (!backend.ok()) return backend.status();
  (*plan)->state_backend = std::move(backend).value();
  if ((*plan)->checkpoint.enabled) {
    auto store = make_checkpoint_store(
        config, "memory",
        std::filesystem::path(local_dir != nullptr && local_dir->value.is_string()
                                  ? local_dir->value.as_string()
                                  : "rstorm-local") /
            "checkpoints",
        name);
    if (!store.ok()) return store.status();
    (*plan)->checkpoint_store = std::move(store).value();
  }
  return create(std::move(plan).value(), topology, std::move(logger), seed, ExecutorPlacement{});
}

api::Result<std::unique_ptr<TopologyRuntime>> TopologyRuntime::create(
    std::unique_ptr<TopologyPlan> plan, const Topology& topology,
    std::shared_ptr<spdlog::logger> logger, std::uint64_t seed, ExecutorPlacement placement) {
  std::unique_ptr<TopologyRuntime> rt(new TopologyRuntime(topology));
  rt->plan_ = std::move(plan);
  const std::size_t n = rt->plan_->executors.size();
  auto here = [&](std::size_t i) { return placement.run_here.empty() || placement.run_here[i]; };
  rt->env_.plan = rt->plan_.get();
  // Sinks 0..n-1: the executors run here (a remote executor's entry stays
  // unused); then one per task run elsewhere, so that how another worker
  // groups its tasks into executors can change without this plan changing.
  rt->env_.task_sink = rt->plan_->task_executor;
  rt->env_.sinks.assign(n, nullptr);
  rt->env_.sink_components.assign(n, nullptr);
  for (std::size_t i = 0; i < n; ++i) rt->env_.sink_components[i] = rt->plan_->executors[i].component;
  rt->env_.logger = std::move(logger);
  rt->env_.stopping = &rt->stopping_;
  for (const auto& ep : rt->plan_->executors) {
    if (here(static_cast<std::size_t>(ep.index))) continue;
    rt->partial_ = true;
    for (TaskId t : ep.tasks) {
      const auto task = static_cast<std::size_t>(t.value);
      if (task >= placement.remote_task_sinks.size() || placement.remote_task_sinks[task] == nullptr) {
        return api::Status::error("task " + std::to_string(t.value) + " of component '" +
                                  ep.component->id + "' runs elsewhere but has no sink");
      }
      rt->env_.task_sink[task] = static_cast<int>(rt->env_.sinks.size());
      rt->env_.sinks.push_back(placement.remote_task_sinks[task]);
      rt->env_.sink_components.push_back(ep.component);
    }
  }
  rt->local_index_.assign(rt->env_.sinks.size(), -1);
  try {
    for (const auto& ep : rt->plan_->executors) {
      if (!here(static_cast<std::size_t>(ep.index))) continue;
      const std::uint64_t s = seed ^ (0x9e3779b97f4a7c15ULL * (ep.index + 1));
      std::unique_ptr<Executor> ex;
      // The instances are made on the executor's own thread (launch).
      api::Status made = api::Status::ok();
      if (ep.component->role == ExecutorRole::kSpout) {
        made = launch_with<SpoutExecutor, Spout>(
            rt->env_, ep, s, [&](const std::string& id) { return topology.create_spout(id); }, ex);
      } else if (ep.component->role == ExecutorRole::kBolt) {
        made = launch_with<BoltExecutor, Bolt>(
            rt->env_, ep, s, [&](const std::string& id) { return topology.create_bolt(id); }, ex);
      } else {
        ex = std::make_unique<AckerExecutor>(rt->env_, ep, s);
        made = ex->launch([] { return api::Status::ok(); });
      }
      if (!made.is_ok()) return made;
      rt->env_.sinks[static_cast<std::size_t>(ep.index)] = &ex->queue();
      rt->local_index_[static_cast<std::size_t>(ep.index)] = static_cast<int>(rt->executors_.size());
      rt->executors_.push_back(std::move(ex));
    }
  } catch (const ConfigError& e) {
    return api::Status::error(e.what());
  }
  rt->deliver_scratch_.resize(rt->executors_.size());
  if (rt->plan_->checkpoint.enabled) {
    if (auto s = rt->restore_checkpoint(); !s.is_ok()) return s;
    rt->uploader_ = std::make_unique<CheckpointUploader>(rt->env_);
    rt->env_.uploader = rt->uploader_.get();
  }
  if (rt->plan_->settings.fuse_executors) rt->fuse_executors(placement.worker_of);
  return rt;
}

api::Status TopologyRuntime::restore_checkpoint() {
  TopologyPlan& plan = *plan_;
  std::vector<TaskId> all;
  std::vector<TaskId> local;
  for (const auto& cp : plan.components) {
    if (cp->role == ExecutorRole::kAcker) continue;
    all.insert(all.end(), cp->tasks.begin(), cp->tasks.end());
  }
  for (const auto& ex : executors_) {
    if (ex->plan().component->role == ExecutorRole::kAcker) continue;
    local.insert(local.end(), ex->plan().tasks.begin(), ex->plan().tasks.end());
  }
  auto warn = [&](const std::string& what) {
    if (env_.logger) env_.logger->error("[topology={}] {}", plan.name, what);
  };
  auto chosen = read_checkpoint(*plan.checkpoint_store, all, local, warn);
  if (!chosen.ok()) {
    return api::Status::error("topology '" + plan.name +
                              "' cannot restore its state: " + chosen.status().message());
  }
  // A task's state is what the checkpoint holds, nothing else: what its
  // store kept from a run that ended (killed, or before any checkpoint
  // completed) is thrown away unread.
  const RestoredCheckpoint* r = *chosen ? &**chosen : nullptr;
  try {
    for (TaskId t : local) {
      const std::string& component = plan.layout->task_component[static_cast<std::size_t>(t.value)];
      plan.state_backend->discard(t, component);
      if (r == nullptr) continue;
      const StateEntries& entries = r->local.at(t.value);
      if (entries.empty()) continue;
      std::vector<StateWrite> writes;
      writes.reserve(entries.size());
      for (const auto& [key, value] : entries) writes.push_back({key, value});
      plan.state_backend->open(t, component)->apply(writes);
    }
  } catch (const std::exception& e) {
    return api::Status::error(
        "topology '" + plan.name + "' cannot restore " +
        (r ? "checkpoint " + std::to_string(r->record.id) : std::string("its empty state")) + ": " +
        e.what());
  }
  if (r == nullptr) return api::Status::ok();  // no checkpoint yet: every task starts empty
  plan.checkpoint_restored = r->record.id;
  if (env_.logger) {
    env_.logger->info(
        "[topology={}] restored checkpoint {} ({} bytes, {} task{}) from {} for the "
        "{} task{} run here",
        plan.name, r->record.id, r->record.bytes, r->record.tasks, r->record.tasks == 1 ? "" : "s",
        plan.checkpoint_store->describe(), local.size(), local.size() == 1 ? "" : "s");
  }
  return api::Status::ok();
}

// A bolt B is fused into its producer A when B's only input is A by
// local-or-shuffle, A is a spout or a bolt none of whose inputs is global or
// direct, every worker (this one included,
// with at least one) runs as many executors of A as of B, and B has no tick
// tuples nor timer. The scheduler places them so (scheduler/fusion.hpp). The
// i-th executor of A here then runs the i-th of B here on its thread, and
// sends B's input only to that executor's tasks: each member has one
// producer, so its tasks still run on one thread, and nothing else (no other
// component; no other worker, whose A has B's tasks of its own to prefer)
// sends to it. Chains form (A -> B -> C) when C is fused into B. Per-executor
// counters, acking, backpressure downstream and errors are those of separate
// executors.
void TopologyRuntime::fuse_executors(const std::vector<std::uint32_t>& worker_of) {
  std::map<std::string, std::vector<std::pair<const ComponentPlan*, const Subscription*>>, std::less<>>
      inputs;
  for (const auto& c : plan_->components) {
    for (const auto& stream : c->streams) {
      for (const auto& sub : stream->subscriptions) inputs[sub.component].emplace_back(c.get(), &sub);
    }
  }
  auto local_executors = [&](const ComponentPlan* c) {
    std::vector<Executor*> out;
    for (const auto& ex : executors_) {
      if (ex->plan().component == c) out.push_back(ex.get());
    }
    return out;
  };
  // A bolt one of whose inputs is global or direct: its tasks get unequal
  // shares whatever the load, and fused, executor i of b would get only what
  // executor i of a got, where local-or-shuffle spreads a's output over all
  // of b's local tasks (as scheduler::fused_components decides).
  auto fed_unevenly = [&](const std::string& a) {
    auto in = inputs.find(a);
    if (in == inputs.end()) return false;
    return std::any_of(in->second.begin(), in->second.end(), [](const auto& producer_sub) {
      const auto& [producer, sub] = producer_sub;
      return producer->role != ExecutorRole::kAcker && spreads_unevenly(sub->type);
    });
  };
  // Every worker runs as many executors of a as of b.
  auto spread_alike = [&](const ComponentPlan* a, const ComponentPlan* b) {
    std::map<std::uint32_t, int> balance;
    for (const auto& ep : plan_->executors) {
      const auto i = static_cast<std::size_t>(ep.index);
      const std::uint32_t w = i < worker_of.size() ? worker_of[i] : 0;
      balance[w] += (ep.component == a ? 1 : 0) - (ep.component == b ? 1 : 0);
    }
    return std::all_of(balance.begin(), balance.end(), [](const auto& e) { return e.second == 0; });
  };
  for (const auto& b : plan_->components) {
    if (b->role != ExecutorRole::kBolt) continue;
    auto in = inputs.find(b->id);
    if (in == inputs.end() || in->second.size() != 1) continue;
    const auto [a, sub] = in->second.front();
    if (a == b.get() || a->role == ExecutorRole::kAcker) continue;
    if (sub->type != GroupingType::kLocalOrShuffle) continue;
    if (config_int(b->config, keys::kTopologyTickTupleFreqSecs, 0) > 0) continue;
    if (a->role == ExecutorRole::kBolt && fed_unevenly(a->id)) continue;
    const auto heads = local_executors(a);
    const auto members = local_executors(b.get());
    if (heads.empty() || heads.size() != members.size() || !spread_alike(a, b.get())) continue;
    if (!std::all_of(members.begin(), members.end(),
                     [](const Executor* m) { return m->can_run_inline(); })) {
      continue;
    }
    for (std::size_t i = 0; i < heads.size(); ++i) {
      heads[i]->add_member(members[i]);
      heads[i]->pin_route(sub->counter_index, &members[i]->plan().tasks);
      // Only bolts are fused (the role checked above).
      inline_sinks_.push_back(std::make_unique<InlineSink>(static_cast<BoltExecutor*>(members[i])));
      env_.sinks[static_cast<std::size_t>(members[i]->plan().index)] = inline_sinks_.back().get();
    }
  }
}

TopologyRuntime::~TopologyRuntime() { stop(); }

void TopologyRuntime::start() {
  started_ = std::chrono::steady_clock::now();
  running_ = true;
  if (uploader_) uploader_->start();
  // Fused members first: their start() binds their sinks and resolves their
  // fused hop, which their head's thread reads from its first emit on, so
  // that must be done before any head's thread runs.
  for (auto& ex : executors_) {
    if (ex->head() != nullptr) ex->start();
  }
  for (auto& ex : executors_) {
    if (ex->head() == nullptr) ex->start();
  }
}

void TopologyRuntime::activate() {
  for (auto& ex : executors_) ex->set_active(true);
}

void TopologyRuntime::deactivate() {
  for (auto& ex : executors_) ex->set_active(false);
}

void TopologyRuntime::stop() {
  if (!running_) return;
  running_ = false;
  stopping_.store(true, std::memory_order_relaxed);
  for (auto& ex : executors_) ex->stop();
  for (auto& ex : executors_) ex->join();
  if (uploader_) uploader_->stop();
}

std::uint64_t TopologyRuntime::in_flight() const {
  std::uint64_t n = 0;
  for (const auto& ex : executors_) n += ex->in_flight();
  return n;
}

std::string TopologyRuntime::fatal_error() const {
  for (const auto& ex : executors_) {
    if (std::string e = ex->fatal_error(); !e.empty()) return e;
  }
  return "";
}

bool TopologyRuntime::ready() const {
  for (const auto& ex : executors_) {
    if (!ex->ready()) return false;
  }
  return true;
}

bool TopologyRuntime::spouts_finished() const {
  bool any = false;
  for (const auto& ex : executors_) {
    if (ex->plan().component->role != ExecutorRole::kSpout) continue;
    if (!ex->finished()) return false;
    any = true;
  }
  return any;
}

std::vector<std::string> TopologyRuntime::unfinished_spouts() const {
  std::vector<std::string> out;
  for (const auto& ex : executors_) {
    const ComponentPlan& c = *ex->plan().component;
    if (c.role != ExecutorRole::kSpout || ex->finished()) continue;
    if (std::find(out.begin(), out.end(), c.id) == out.end()) out.push_back(c.id);
  }
  return out;
}

bool TopologyRuntime::runs_task(TaskId task) const { return local_executor_of(task) >= 0; }

int TopologyRuntime::local_executor_of(TaskId task) const {
  if (task.value < 0 || static_cast<std::size_t>(task.value) >= env_.task_sink.size()) return -1;
  const int e = env_.task_sink[static_cast<std::size_t>(task.value)];
  return e < 0 ? -1 : local_index_[static_cast<std::size_t>(e)];
}

bool TopologyRuntime::deliver_remote(Batch& batch, Batch* foreign,
                                     std::vector<ReceiveQueue*>* owed) {
  if (batch.empty()) return true;
  // A push that leaves its consumer asleep notes the queue in `owed`, once
  // for a run of frames to it.
  const auto push = [owed](ReceiveQueue& q, Batch& b, bool recycling) {
    bool wake_owed = false;
    const bool in_ring = q.push_or_overflow(b, recycling, owed != nullptr ? &wake_owed : nullptr);
    if (wake_owed && (owed->empty() || owed->back() != &q)) owed->push_back(&q);
    return in_ring;
  };
  // Fast path: a frame usually holds envelopes for one executor only.
  // Envelopes for the first's task need no look-up.
  const TaskId first_task = batch.front().dest;
  const int first = local_executor_of(first_task);
  bool one = first >= 0;
  for (std::size_t i = 1; one && i < batch.size(); ++i) {
    one = batch[i].dest == first_task || local_executor_of(batch[i].dest) == first;
  }
  if (one) return push(executors_[static_cast<std::size_t>(first)]->queue(), batch, true);

  std::lock_guard lock(deliver_mutex_);
  for (auto& e : batch) {
    const int local = local_executor_of(e.dest);
    if (local < 0) {
      foreign->push_back(std::move(e));
    } else {
      deliver_scratch_[static_cast<std::size_t>(local)].push_back(std::move(e));
    }
  }
  batch.clear();
  bool in_rings = true;
  for (std::size_t i = 0; i < deliver_scratch_.size(); ++i) {
    Batch& b = deliver_scratch_[i];
    if (b.empty()) continue;
    in_rings = push(executors_[i]->queue(), b, false) && in_rings;  // b comes back empty
  }
  return in_rings;
}

StallReport TopologyRuntime::stall_report(std::chrono::milliseconds threshold) const {
  StallReport r;
  const std::int64_t now = Executor::now_ns();
  const std::int64_t limit_ns = std::chrono::nanoseconds(threshold).count();
  auto add = [](std::vector<std::string>& list, const std::string& id) {
    if (std::find(list.begin(), list.end(), id) == list.end()) list.push_back(id);
  };
  for (const auto& ex : executors_) {
    const std::string& id = ex->plan().component->id;
    const std::int64_t waited = ex->stalled_ns(now);
    r.stalled_ms = std::max(r.stalled_ms, waited / 1'000'000);
    if (waited > 0 && waited >= limit_ns) {
      add(r.stalled_spouts, id);
      r.pending += ex->in_flight();
    }
    const ReceiveQueue& q = const_cast<Executor&>(*ex).queue();
    if (q.depth() > 0) add(r.queued, id);
    if (q.depth() * 10 >= q.capacity() * 9) add(r.full_queues, id);
  }
  return r;
}

TopologyStats TopologyRuntime::stats() const {
  TopologyStats out;
  out.name = plan_->name;
  out.uptime_secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  out.in_flight = in_flight();
  for (const auto& c : plan_->components) {
    ComponentStats cs;
    cs.id = c->id;
    cs.is_spout = c->role == ExecutorRole::kSpout;
    cs.is_system = c->role == ExecutorRole::kAcker;
    cs.tasks = partial_ ? 0 : static_cast<int>(c->tasks.size());
    std::uint64_t exec_ns = 0, exec_n = 0, complete_ns = 0, complete_n = 0;
    for (const auto& ex : executors_) {
      if (ex->plan().component != c.get()) continue;
      const ExecutorStats& s = ex->stats();
      auto get = [](const std::atomic<std::uint64_t>& a) {
        return a.load(std::memory_order_relaxed);
      };
      ++cs.executors;
      if (partial_) cs.tasks += static_cast<int>(ex->plan().tasks.size());
      cs.emitted += get(s.emitted);
      cs.transferred += get(s.transferred);
      cs.acked += get(s.acked);
      cs.failed += get(s.failed);
      cs.executed += get(s.executed);
      cs.errors += get(s.errors);
      cs.backpressure_waits += get(s.backpressure_waits);
      exec_ns += get(s.execute_ns);
      exec_n += get(s.execute_samples);
      complete_ns += get(s.complete_ns);
      complete_n += get(s.complete_samples);
    }
    for (const auto& ex : executors_) {
      if (ex->plan().component == c.get() && ex->head() != nullptr) {
        cs.fused_into = ex->head()->plan().component->id;
      }
    }
    cs.execute_latency_ms = exec_n ? exec_ns / 1e6 / static_cast<double>(exec_n) : 0;
    cs.complete_latency_ms = complete_n ? complete_ns / 1e6 / static_cast<double>(complete_n) : 0;
    const double count = static_cast<double>(cs.is_spout ? cs.emitted : cs.executed);
    cs.throughput = out.uptime_secs > 0 ? count / out.uptime_secs : 0;
    // A worker lists only the components it runs.
    if (!partial_ || cs.executors > 0) out.components.push_back(std::move(cs));
  }
  return out;
}

}  // namespace rstorm::worker
