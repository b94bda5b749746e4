#include "scheduler/layout.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace rstorm::scheduler {
namespace {

constexpr double kEpsilon = 1e-9;

// Dense index of every generic resource name any executor asks.
std::map<std::string, std::uint32_t> generic_names(const std::vector<ExecutorRequest>& executors) {
  std::map<std::string, std::uint32_t> names;
  for (const ExecutorRequest& e : executors) {
    for (const auto& [name, amount] : e.generic) names.emplace(name, names.size());
  }
  return names;
}

void build_components(SearchProblem& p, const TopologyRequest& request,
                      const std::vector<ExecutorRequest>& executors) {
  std::map<std::string, std::uint32_t> index;
  for (const ExecutorRequest& e : executors) {
    auto [it, fresh] = index.emplace(e.component, index.size());
    p.component.push_back(it->second);
    if (fresh) p.component_size.push_back(0);
    ++p.component_size[it->second];
  }
  p.adjacent.assign(index.size(), {});
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> weight;
  std::set<std::pair<std::string, std::string>> seen;
  for (const Edge& edge : request.edges) {
    if (!seen.emplace(edge.from, edge.to).second) continue;
    auto from = index.find(edge.from), to = index.find(edge.to);
    if (from == index.end() || to == index.end() || edge.from == kAckerComponent) continue;
    // Both ends see the edge; an edge to itself is both directions at once.
    ++weight[{from->second, to->second}];
    ++weight[{to->second, from->second}];
  }
  for (const auto& [pair, w] : weight) p.adjacent[pair.first].emplace_back(pair.second, w);
}

}  // namespace

SearchProblem SearchProblem::Build(const ClusterState& base, const TopologyRequest& request,
                                   const std::vector<ExecutorRequest>& executors,
                                   const std::vector<std::pair<std::uint32_t, int>>& fixed_slots,
                                   const std::vector<std::uint32_t>& candidates) {
  SearchProblem p;
  const auto names = generic_names(executors);
  for (const ExecutorRequest& e : executors) {
    p.memory.push_back(e.memory_mb());
    p.onheap.push_back(e.onheap_mb);
    p.cpu.push_back(e.cpu);
    std::vector<double> g(names.size(), 0.0);
    for (const auto& [name, amount] : e.generic) g[names.at(name)] = amount;
    p.generic.push_back(std::move(g));
  }
  build_components(p, request, executors);
  std::map<std::uint32_t, std::uint32_t> rack_index;
  std::map<std::pair<std::uint32_t, int>, std::uint32_t> worker_at;
  for (std::uint32_t n : candidates) {
    const NodeState& node = base.node(n);
    const auto local = static_cast<std::uint32_t>(p.state_node.size());
    p.state_node.push_back(n);
    p.rack.push_back(rack_index.emplace(node.rack, rack_index.size()).first->second);
    p.free_memory.push_back(node.free_memory_mb);
    p.free_cpu.push_back(node.free_cpu);
    std::vector<double> g(names.size(), 0.0);
    for (const auto& [name, i] : names) {
      auto it = node.free_generic.find(name);
      g[i] = it == node.free_generic.end() ? 0.0 : it->second;
    }
    p.free_generic.push_back(std::move(g));
    p.first_worker.push_back(p.workers());
    p.worker_count.push_back(static_cast<std::uint32_t>(node.free_ports.size()));
    for (int port : node.free_ports) {
      worker_at[{n, port}] = p.workers();
      p.worker_node.push_back(local);
      p.worker_port.push_back(port);
    }
  }
  p.racks = static_cast<std::uint32_t>(rack_index.size());
  p.fixed.assign(executors.size(), 0);
  p.fixed_worker.assign(executors.size(), kUnassigned);
  for (std::uint32_t i = 0; i < fixed_slots.size() && i < executors.size(); ++i) {
    auto it = worker_at.find(fixed_slots[i]);
    if (fixed_slots[i].first == kNoNode || it == worker_at.end()) continue;
    p.fixed[i] = 1;
    p.fixed_worker[i] = it->second;
  }
  p.max_heap_mb = request.worker_max_heap_mb;
  if (!request.acker_executors) {
    p.acker_memory_mb = request.acker_onheap_mb;
    p.acker_cpu = request.acker_cpu;
  }
  return p;
}

Layout::Layout(const SearchProblem& problem)
    : p_(&problem),
      worker_of_(problem.executors(), kUnassigned),
      members_(problem.workers(), 0),
      heap_(problem.workers(), 0.0),
      memory_used_(problem.nodes(), 0.0),
      cpu_used_(problem.nodes(), 0.0),
      generic_used_(problem.nodes(),
                    std::vector<double>(problem.generic.empty() ? 0 : problem.generic[0].size())),
      in_worker_(problem.component_size.size() * problem.workers(), 0),
      in_node_(problem.component_size.size() * problem.nodes(), 0),
      in_rack_(problem.component_size.size() * problem.racks, 0),
      placed_(problem.component_size.size(), 0) {
  for (std::uint32_t e = 0; e < problem.executors(); ++e) {
    if (problem.fixed[e]) move(e, problem.fixed_worker[e]);
  }
}

void Layout::count(std::uint32_t e, std::uint32_t w, int sign) {
  const SearchProblem& p = *p_;
  const std::uint32_t n = p.worker_node[w];
  const std::uint32_t c = p.component[e];
  in_worker_[c * p.workers() + w] += sign;
  in_node_[c * p.nodes() + n] += sign;
  in_rack_[c * p.racks + p.rack[n]] += sign;
  placed_[c] += sign;
  // A worker's acker comes with its first member and goes with its last.
  if (sign > 0 && members_[w]++ == 0) {
    heap_[w] += p.acker_memory_mb;
    memory_used_[n] += p.acker_memory_mb;
    cpu_used_[n] += p.acker_cpu;
  }
  heap_[w] += sign * p.onheap[e];
  memory_used_[n] += sign * p.memory[e];
  cpu_used_[n] += sign * p.cpu[e];
  for (std::size_t g = 0; g < p.generic[e].size(); ++g)
    generic_used_[n][g] += sign * p.generic[e][g];
  if (sign < 0 && --members_[w] == 0) {
    heap_[w] = 0;
    memory_used_[n] -= p.acker_memory_mb;
    cpu_used_[n] -= p.acker_cpu;
  }
}

std::int64_t Layout::cost_at(std::uint32_t e, std::uint32_t w) const {
  const SearchProblem& p = *p_;
  const std::uint32_t n = p.worker_node[w];
  const std::uint32_t r = p.rack[n];
  std::int64_t total = 0;
  // distance = 3 - same rack - same node - same worker, summed per component.
  for (const auto& [d, weight] : p.adjacent[p.component[e]]) {
    const std::int64_t placed = placed_[d];
    const std::int64_t near = static_cast<std::int64_t>(in_rack_[d * p.racks + r]) +
                              in_node_[d * p.nodes() + n] + in_worker_[d * p.workers() + w];
    total += weight * (3 * placed - near);
  }
  return total;
}

std::int64_t Layout::move(std::uint32_t e, std::uint32_t w) {
  std::int64_t delta = 0;
  const std::uint32_t from = worker_of_[e];
  if (from != kUnassigned) {
    count(e, from, -1);
    worker_of_[e] = kUnassigned;
    delta -= cost_at(e, from);
  }
  if (w != kUnassigned) {
    delta += cost_at(e, w);
    count(e, w, +1);
    worker_of_[e] = w;
  }
  cost_ += delta;
  return delta;
}

bool Layout::node_fits(std::uint32_t n) const {
  const SearchProblem& p = *p_;
  if (memory_used_[n] > p.free_memory[n] + kEpsilon) return false;
  for (std::size_t g = 0; g < generic_used_[n].size(); ++g) {
    if (generic_used_[n][g] > p.free_generic[n][g] + kEpsilon) return false;
  }
  for (std::uint32_t w = p.first_worker[n]; w < p.first_worker[n] + p.worker_count[n]; ++w) {
    if (heap_[w] > p.max_heap_mb + kEpsilon) return false;
  }
  return true;
}

bool Layout::can_take(std::uint32_t e, std::uint32_t w, bool require_cpu) const {
  const SearchProblem& p = *p_;
  const std::uint32_t n = p.worker_node[w];
  const bool opens = members_[w] == 0;
  const double memory = p.memory[e] + (opens ? p.acker_memory_mb : 0);
  const double heap = heap_[w] + p.onheap[e] + (opens ? p.acker_memory_mb : 0);
  if (heap > p.max_heap_mb + kEpsilon) return false;
  if (memory_used_[n] + memory > p.free_memory[n] + kEpsilon) return false;
  for (std::size_t g = 0; g < p.generic[e].size(); ++g) {
    if (generic_used_[n][g] + p.generic[e][g] > p.free_generic[n][g] + kEpsilon) return false;
  }
  const double cpu = p.cpu[e] + (opens ? p.acker_cpu : 0);
  return !require_cpu || cpu_used_[n] + cpu <= p.free_cpu[n] + kEpsilon;
}

std::uint32_t Layout::empty_worker(std::uint32_t n) const {
  const SearchProblem& p = *p_;
  for (std::uint32_t w = p.first_worker[n]; w < p.first_worker[n] + p.worker_count[n]; ++w) {
    if (members_[w] == 0) return w;
  }
  return kUnassigned;
}

double Layout::cpu_overcommit(std::uint32_t n) const {
  return std::max(0.0, cpu_used_[n] - std::max(0.0, p_->free_cpu[n]));
}

double Layout::cpu_overcommit() const {
  double total = 0;
  for (std::uint32_t n = 0; n < p_->nodes(); ++n) total += cpu_overcommit(n);
  return total;
}

}  // namespace rstorm::scheduler
