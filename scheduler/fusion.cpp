#include "scheduler/fusion.hpp"

#include <algorithm>
#include <set>

namespace rstorm::scheduler {
namespace {

constexpr std::uint32_t kNoUnit = UINT32_MAX;

void add_resources(ExecutorRequest& into, const ExecutorRequest& e) {
  into.onheap_mb += e.onheap_mb;
  into.offheap_mb += e.offheap_mb;
  into.cpu += e.cpu;
  for (const auto& [name, amount] : e.generic) into.generic[name] += amount;
}

ExecutorId original_id(ExecutorId id, const FusedRequest& fused, std::size_t executors) {
  const std::size_t units = fused.merged.executors.size();
  if (id.value() < units) return ExecutorId(fused.head[id.value()]);
  // Past the request's executors: an explicit acker, numbered after them.
  return ExecutorId(static_cast<std::uint32_t>(id.value() - units + executors));
}

}  // namespace

std::map<std::string, std::string> fused_components(const TopologyRequest& request) {
  std::map<std::string, std::string> into;
  if (!request.fuse_executors) return into;
  std::map<std::string, int> executors;
  ComponentLookup count(executors);
  for (const ExecutorRequest& e : request.executors) ++count[e.component];
  std::map<std::string, std::vector<const Edge*>> inputs;
  for (const Edge& edge : request.edges) inputs[edge.to].push_back(&edge);
  for (const ComponentSpec& b : request.components) {
    if (b.is_spout || b.ticks || b.name == kAckerComponent) continue;
    auto in = inputs.find(b.name);
    if (in == inputs.end() || in->second.size() != 1) continue;
    const Edge& edge = *in->second.front();
    if (!edge.local_or_shuffle || edge.from == b.name || edge.from == kAckerComponent) continue;
    if (executors[edge.from] == 0 || executors[edge.from] != executors[b.name]) continue;
    // A producer fed unevenly (global, direct) would hand its member only
    // its own share: executor i of B then gets what executor i of A got,
    // where local-or-shuffle spreads A's output over every local task of B.
    if (auto up = inputs.find(edge.from);
        up != inputs.end() && std::any_of(up->second.begin(), up->second.end(),
                                          [](const Edge* e) { return e->uneven; })) {
      continue;
    }
    into[b.name] = edge.from;
  }
  // A ring of components each fused into the next has no head; none of it is
  // fused (no spout reaches it anyway).
  for (auto it = into.begin(); it != into.end();) {
    std::string c = it->first;
    std::size_t steps = 0;
    for (auto up = into.find(c); up != into.end() && steps <= into.size(); up = into.find(c)) {
      c = up->second;
      ++steps;
    }
    it = steps > into.size() ? into.erase(it) : std::next(it);
  }
  return into;
}

std::optional<FusedRequest> fuse(const TopologyRequest& request) {
  const std::map<std::string, std::string> into = fused_components(request);
  if (into.empty()) return std::nullopt;
  auto root = [&](std::string c) {
    for (auto up = into.find(c); up != into.end(); up = into.find(c)) c = up->second;
    return c;
  };
  // The unit's component name: its head, then the fused components in the
  // request's order.
  std::map<std::string, std::string> unit_name;
  for (const ComponentSpec& c : request.components) {
    if (!into.count(c.name)) unit_name.emplace(c.name, c.name);
  }
  for (const ComponentSpec& c : request.components) {
    if (into.count(c.name)) unit_name[root(c.name)] += "+" + c.name;
  }

  FusedRequest f;
  TopologyRequest& m = f.merged;
  m = request;
  m.executors.clear();
  m.edges.clear();
  m.current.clear();
  m.components.clear();
  m.fuse_executors = false;
  // Executor i of a component is the i-th of its executors in the request.
  std::map<std::string, std::vector<std::uint32_t>> of;
  for (std::uint32_t i = 0; i < request.executors.size(); ++i) {
    of[request.executors[i].component].push_back(i);
  }
  f.unit_of.assign(request.executors.size(), kNoUnit);
  for (std::uint32_t i = 0; i < request.executors.size(); ++i) {
    const ExecutorRequest& e = request.executors[i];
    if (into.count(e.component)) continue;
    f.unit_of[i] = static_cast<std::uint32_t>(m.executors.size());
    f.head.push_back(i);
    m.executors.push_back(e);
    if (auto name = unit_name.find(e.component); name != unit_name.end()) {
      m.executors.back().component = name->second;
    }
  }
  for (const auto& [component, producer] : into) {
    const auto& heads = of[root(component)];
    const auto& executors = of[component];
    for (std::size_t k = 0; k < executors.size() && k < heads.size(); ++k) {
      const std::uint32_t u = f.unit_of[heads[k]];
      f.unit_of[executors[k]] = u;
      add_resources(m.executors[u], request.executors[executors[k]]);
    }
  }
  f.members.assign(m.executors.size(), {});
  for (std::uint32_t i = 0; i < request.executors.size(); ++i) {
    f.members[f.unit_of[i]].push_back(i);
  }
  for (const ComponentSpec& c : request.components) {  // a head's figures: its unit's sums
    if (into.count(c.name)) continue;
    ComponentSpec spec = c;
    spec.name = unit_name.at(c.name);
    if (const auto& heads = of[c.name]; !heads.empty()) {
      const ExecutorRequest& unit = m.executors[f.unit_of[heads.front()]];
      spec.onheap_mb = unit.onheap_mb;
      spec.offheap_mb = unit.offheap_mb;
      spec.cpu = unit.cpu;
      spec.generic = unit.generic;
    }
    m.components.push_back(std::move(spec));
  }
  auto named = [&](const std::string& c) {
    auto it = unit_name.find(root(c));
    return it == unit_name.end() ? c : it->second;
  };
  for (const Edge& edge : request.edges) {
    if (auto up = into.find(edge.to); up != into.end() && up->second == edge.from) continue;
    m.edges.push_back(Edge{named(edge.from), named(edge.to), edge.local_or_shuffle, edge.uneven});
  }
  if (!request.current.empty()) {
    m.current.resize(m.executors.size());
    for (std::size_t u = 0; u < f.members.size(); ++u) {
      const auto& first = request.current[f.members[u].front()];
      const bool together =
          std::all_of(f.members[u].begin(), f.members[u].end(),
                      [&](std::uint32_t i) { return request.current[i] == first; });
      if (together) m.current[u] = first;  // else the unit is placed anew
    }
    // The ackers' (topology.acker.executors), after the executors, as they were.
    for (std::size_t i = request.executors.size(); i < request.current.size(); ++i) {
      m.current.push_back(request.current[i]);
    }
  }
  return f;
}

TopologyPlacement unfuse(TopologyPlacement placement, const FusedRequest& fused,
                         const TopologyRequest& request) {
  if (!placement.scheduled) return placement;
  const std::size_t executors = request.executors.size();
  std::vector<WorkerSlot> slots(executors);
  for (std::size_t i = 0; i < executors; ++i) {
    slots[i] = placement.executor_slots[fused.unit_of[i]];
  }
  int moved = 0;
  for (std::size_t u = 0; u < fused.members.size(); ++u) {
    const bool stayed = u < fused.merged.current.size() && fused.merged.current[u] &&
                        *fused.merged.current[u] == placement.executor_slots[u];
    if (!stayed) moved += static_cast<int>(fused.members[u].size());
  }
  placement.executor_slots = std::move(slots);
  placement.moved_executors = moved;
  for (WorkerAssignment& w : placement.workers) {
    std::vector<ExecutorId> expanded;
    for (ExecutorId unit : w.executors) {
      for (std::uint32_t i : fused.members[unit.value()]) expanded.push_back(ExecutorId(i));
    }
    std::sort(expanded.begin(), expanded.end());
    w.executors = std::move(expanded);
  }
  for (PlacementDecision& d : placement.decisions) {
    d.executor = original_id(d.executor, fused, executors);
  }
  for (CpuOvercommit& o : placement.cpu_overcommits) {
    o.executor = original_id(o.executor, fused, executors);
  }
  return placement;
}

}  // namespace rstorm::scheduler
