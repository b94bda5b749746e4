#include "rstorm/worker/emitter.hpp"

#include <algorithm>

#include "rstorm/worker/field_hash.hpp"

namespace rstorm::worker {

Emitter::Emitter(const TopologyPlan& plan, const ComponentPlan& component, Transfer& transfer,
                 ExecutorStats& stats, std::uint64_t seed, int producer_index)
    : plan_(plan),
      component_(component),
      transfer_(transfer),
      stats_(stats),
      rng_(seed),
      root_prefix_(static_cast<std::uint64_t>(producer_index + 1) << 40),
      counters_(static_cast<std::size_t>(plan.num_counters)) {
  // Producers start their round robins at different tasks.
  for (std::size_t i = 0; i < counters_.size(); ++i) {
    counters_[i] = static_cast<std::uint32_t>(producer_index);
  }
  acking_ = !plan.acker_tasks.empty();
  targets_.reserve(64);
  root_counter_ = next_id();  // a random start (see next_root)
  routes_.resize(component.streams.size());
  for (std::size_t i = 0; i < routes_.size(); ++i) {
    routes_[i].route = component.streams[i].get();
    routes_[i].num_fields = routes_[i].route->info.fields.size();
    if (routes_[i].route->info.stream == kDefaultStream) default_route_ = &routes_[i];
  }
  resolve_fixed_targets();
}

const std::vector<TaskId>& Emitter::round_robin_pool(const Subscription& sub) const {
  const std::size_t c = static_cast<std::size_t>(sub.counter_index);
  if (c < pinned_.size() && pinned_[c] != nullptr) return *pinned_[c];
  if (sub.type == GroupingType::kLocalOrShuffle && !sub.local_tasks.empty()) return sub.local_tasks;
  return sub.tasks;
}

void Emitter::resolve_fixed_targets() {
  for (RouteState& s : routes_) {
    s.fixed = !s.route->direct;
    s.fixed_targets.clear();
    for (const auto& sub : s.route->subscriptions) {
      switch (sub.type) {
        case GroupingType::kShuffle:
        case GroupingType::kNone:
        case GroupingType::kLocalOrShuffle: {
          const auto& pool = round_robin_pool(sub);
          if (pool.size() == 1) {
            s.fixed_targets.push_back(pool.front());
          } else {
            s.fixed = false;
          }
          break;
        }
        case GroupingType::kFields:
          if (sub.tasks.size() == 1) {
            s.fixed_targets.push_back(sub.tasks.front());
          } else {
            s.fixed = false;
          }
          break;
        case GroupingType::kAll:
          s.fixed_targets.insert(s.fixed_targets.end(), sub.tasks.begin(), sub.tasks.end());
          break;
        case GroupingType::kGlobal:
          s.fixed_targets.push_back(sub.tasks.front());
          break;
        case GroupingType::kDirect:
          break;
      }
    }
  }
}

Emitter::RouteState& Emitter::find_route(std::string_view stream) {
  if (default_route_ != nullptr && stream == kDefaultStream) return *default_route_;
  for (RouteState& s : routes_) {
    if (s.route->info.stream == stream) return s;
  }
  std::string declared;
  for (const auto& s : component_.streams) {
    declared += (declared.empty() ? "" : ", ") + s->info.stream;
  }
  throw EmitError("component '" + component_.id + "' emitted to stream '" + std::string(stream) +
                  "', which it does not declare (streams: " +
                  (declared.empty() ? "none" : declared) + ")");
}

void Emitter::route_direct(const StreamRoute& r, TaskId direct) {
  if (!r.direct) {
    throw EmitError("component '" + component_.id + "' used emit_direct on stream '" +
                    r.info.stream + "', which is not declared direct");
  }
  for (const auto& sub : r.subscriptions) {
    if (std::binary_search(sub.tasks.begin(), sub.tasks.end(), direct)) {
      targets_.push_back(direct);
    }
  }
  if (targets_.empty() && !r.subscriptions.empty()) {
    throw EmitError("component '" + component_.id + "' used emit_direct to task " +
                    std::to_string(direct.value) + ", which does not subscribe to stream '" +
                    r.info.stream + "'");
  }
}

const StreamRoute& Emitter::route_slow(std::string_view stream, std::span<const Value> values,
                                       TaskId direct) {
  RouteState& state = find_route(stream);
  const StreamRoute& r = *state.route;
  if (values.size() != r.info.fields.size()) {
    throw EmitError("component '" + component_.id + "' emitted " + std::to_string(values.size()) +
                    " values on stream '" + r.info.stream + "', which declares " +
                    std::to_string(r.info.fields.size()) + " fields (" +
                    r.info.fields.to_string() + ")");
  }
  if (state.fixed) {
    if (direct.valid()) {
      throw EmitError("component '" + component_.id + "' used emit_direct on stream '" +
                      r.info.stream + "', which is not declared direct");
    }
    targets_view_ = state.fixed_targets;
    return r;
  }
  targets_.clear();
  if (direct.valid()) {
    route_direct(r, direct);
    targets_view_ = targets_;
    return r;
  }
  if (r.direct) {
    throw EmitError("component '" + component_.id + "' emitted to direct stream '" +
                    r.info.stream + "' without a task: use emit_direct");
  }
  for (const auto& sub : r.subscriptions) {
    const auto& tasks = sub.tasks;
    switch (sub.type) {
      case GroupingType::kShuffle:
      case GroupingType::kNone:
      case GroupingType::kLocalOrShuffle: {
        const auto& pool = round_robin_pool(sub);
        // Round robin without a division per tuple (a div was a fifth of
        // routing): the counter is brought into range once, then wraps.
        const auto n = static_cast<std::uint32_t>(pool.size());
        std::uint32_t& c = counters_[static_cast<std::size_t>(sub.counter_index)];
        if (c >= n) [[unlikely]]
          c %= n;
        targets_.push_back(pool[c]);
        if (++c == n) c = 0;
        break;
      }
      case GroupingType::kFields:
        targets_.push_back(tasks[fields_hash(values, sub.field_indices) % tasks.size()]);
        break;
      case GroupingType::kAll:
        targets_.insert(targets_.end(), tasks.begin(), tasks.end());
        break;
      case GroupingType::kGlobal:
        targets_.push_back(tasks.front());
        break;
      case GroupingType::kDirect:
        break;  // validation keeps direct groupings on direct streams
    }
  }
  targets_view_ = targets_;
  return r;
}

}  // namespace rstorm::worker
