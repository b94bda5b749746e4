// Emitter: routing and sending for one executor. Finds the stream's route,
// picks target tasks by grouping (shuffle and local-or-shuffle round robin per
// producer, fields by the stable hash, all, global = lowest task, direct =
// checked), makes edge ids for acking, and hands envelopes to the Transfer.
// Single thread: one per executor, shared by its tasks' collectors.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <vector>

#include "rstorm/worker/topology_plan.hpp"
#include "rstorm/worker/transfer.hpp"

namespace rstorm::worker {

// Thrown by an emit the topology does not allow (undeclared stream, wrong
// number of values, bad direct task). Caught by the executor like any
// exception from user code.
class EmitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// How a collector's routed emit holds the values it sends: a Values by
// reference (moved into the last tuple), a span of a braced list's or a
// kept Values' by value. By value, the span stays in the registers it came
// in: spilled to be passed by reference, its two words were read back as
// one 16-byte load that no store could forward, which waited for every
// store before it (the envelope just written) to reach the cache: a stall
// on every emit.
template <typename V>
using EmittedArg = std::conditional_t<std::is_same_v<V, Values>, Values&, std::span<const Value>>;

class Emitter {
 public:
  Emitter(const TopologyPlan& plan, const ComponentPlan& component, Transfer& transfer,
          ExecutorStats& stats, std::uint64_t seed, int producer_index);

  // Routes one emit: sets targets() and returns the stream's route. The
  // common case (the default stream, routed once) is inline; the rest, and
  // every error, out of line.
  const StreamRoute& route(std::string_view stream, std::span<const Value> values, TaskId direct) {
    const StreamRoute* r = route_usual(stream, values.size(), direct);
    if (r != nullptr) [[likely]] {
      return *r;
    }
    return route_slow(stream, values, direct);
  }
  const StreamRoute& route(std::string_view stream, const Values& values, TaskId direct) {
    return route(stream, std::span<const Value>(values.data(), values.size()), direct);
  }
  // route() for an emit of `n` values in the common case only (the default
  // stream, routed once, no direct task, as many values as fields): sets
  // targets(). nullptr otherwise, with nothing checked: take route() then.
  const StreamRoute* route_usual(std::string_view stream, std::size_t n, TaskId direct) {
    RouteState* s = default_route_;
    if (s != nullptr && stream == kDefaultStream && s->fixed && !direct.valid() &&
        n == s->num_fields) [[likely]] {
      targets_view_ = s->fixed_targets;
      return s->route;
    }
    return nullptr;
  }
  // The route of every usual emit (route_usual) when it goes to one task,
  // set in `task`; nullptr otherwise. Valid until the next pin().
  const StreamRoute* single_usual_route(TaskId* task) const {
    const RouteState* s = default_route_;
    if (s == nullptr || !s->fixed || s->fixed_targets.size() != 1) return nullptr;
    *task = s->fixed_targets[0];
    return s->route;
  }
  // The tasks of the last route(); valid until the next route() or pin().
  std::span<const TaskId> targets() const { return targets_view_; }

  // A random non-zero id (tree roots, edges).
  std::uint64_t next_id() {
    std::uint64_t z = (rng_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return z == 0 ? 1 : z;
  }

  // A new tuple-tree root id: unique in the topology (the executor's index in
  // the high bits, a counter below), sequential per spout executor so that
  // the tables keyed by it are walked in order (cache friendly). The counter
  // starts at a random point (the seed differs per process): a spout executor
  // that restarts (its worker killed, or rebalanced) must not reuse the roots
  // of its previous run, whose trees may still be pending at an acker in
  // another worker. With the same roots, those trees and the new ones would be
  // one entry: the new trees never completed (failed at the message timeout),
  // or completed on the old tree's acks without being processed. Two runs of
  // an executor collide only if the new one reaches the old one's last roots
  // within a message timeout: about rate x timeout / 2^40 (5e-6 at 200k/s).
  std::uint64_t next_root() { return root_prefix_ | (++root_counter_ & ((1ULL << 40) - 1)); }

  // Kept, not looked up: asked on every ack, and the plan is four loads away.
  bool acking() const { return acking_; }
  TaskId acker_for(std::uint64_t root) const {
    return plan_.acker_tasks[root % plan_.acker_tasks.size()];
  }

  // Starts a tuple for `dest` in place in `transfer` (the executor's, named
  // by the caller: reached through the executor the caller holds, not
  // through this Emitter, it is one load nearer the envelope), with
  // `values` moved in when `last` (the emit's last target) and copied
  // otherwise; fill its anchors, then the transfer's commit().
  [[gnu::always_inline]] static Tuple& begin_tuple(Transfer& transfer, TaskId dest,
                                                   const StreamInfo* source, TaskId source_task,
                                                   Values& values, bool last) {
    Envelope& e = transfer.append(dest);
    if (last) {
      e.tuple.assign(source, source_task, std::move(values));
    } else {
      e.tuple.assign(source, source_task, values);
    }
    return e.tuple;
  }
  // begin_tuple with the values of a braced list (emit({...})), copied for
  // every target (`last` unused: the list stays the caller's).
  [[gnu::always_inline]] static Tuple& begin_tuple(Transfer& transfer, TaskId dest,
                                                   const StreamInfo* source, TaskId source_task,
                                                   std::span<const Value> values,
                                                   bool last = true) {
    Envelope& e = transfer.append(dest);
    e.tuple.assign(source, source_task, values);
    return e.tuple;
  }

  void send_control(TaskId dest, MessageKind kind, std::uint64_t root, std::uint64_t value,
                    TaskId task = TaskId()) {
    transfer_.send_control(dest, kind, root, value, task);
  }

  // Local-or-shuffle on subscription `counter_index` picks from `tasks` only
  // (borrowed; a fused head's member). nullptr: the usual pool.
  void pin(int counter_index, const std::vector<TaskId>* tasks) {
    if (pinned_.size() < counters_.size()) pinned_.resize(counters_.size(), nullptr);
    pinned_[static_cast<std::size_t>(counter_index)] = tasks;
    resolve_fixed_targets();
  }

  Transfer& transfer() { return transfer_; }
  ExecutorStats& stats() { return stats_; }
  const ComponentPlan& component() const { return component_; }
  const TopologyPlan& plan() const { return plan_; }

 private:
  // Per stream of the component (index: position in its streams).
  struct RouteState {
    const StreamRoute* route = nullptr;
    std::size_t num_fields = 0;  // route->info.fields.size(), one load nearer
    // Every subscription sends to the same tasks whatever the values and the
    // round-robin counters (one task, global, all): routed once, here.
    bool fixed = false;
    std::vector<TaskId> fixed_targets;
  };

  RouteState& find_route(std::string_view stream);
  const StreamRoute& route_slow(std::string_view stream, std::span<const Value> values,
                                TaskId direct);
  void route_direct(const StreamRoute& r, TaskId direct);
  // The pool a round-robin subscription picks from.
  const std::vector<TaskId>& round_robin_pool(const Subscription& sub) const;
  void resolve_fixed_targets();

  const TopologyPlan& plan_;
  const ComponentPlan& component_;
  Transfer& transfer_;
  ExecutorStats& stats_;
  std::vector<RouteState> routes_;
  bool acking_;  // !plan_.acker_tasks.empty()
  RouteState* default_route_ = nullptr;
  std::uint64_t rng_;
  std::uint64_t root_prefix_;
  std::uint64_t root_counter_ = 0;
  std::vector<std::uint32_t> counters_;
  std::vector<const std::vector<TaskId>*> pinned_;  // index: counter index; empty: none
  std::vector<TaskId> targets_;
  std::span<const TaskId> targets_view_;
};

}  // namespace rstorm::worker
