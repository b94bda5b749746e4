#include "scheduler/lower_bound.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <vector>

namespace rstorm::scheduler {
namespace {

// Executors alike for the bound: same component, same sizes.
struct Group {
  std::uint32_t component;
  double memory;
  double onheap;
  double cpu;
  std::uint32_t count;
};

// What one unit of a level holds at most: `memory` MB in all, of which at
// most `onheap` MB on-heap (its workers' heap), and `cpu` points.
struct Capacity {
  double memory;
  double onheap;
  double cpu;
};

// What each unit of a level (node or rack) has free, by dimension.
struct Units {
  std::vector<double> memory, onheap, cpu;
  // The largest of each dimension (not necessarily one unit's).
  Capacity largest() const {
    const auto most = [](const std::vector<double>& v) {
      return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
    };
    return {most(memory), most(onheap), most(cpu)};
  }
};

// The most pair weight executor group `self` can have with partners inside
// one unit of capacity `cap`, over `size` (memory or on-heap): a fractional
// knapsack, an upper bound of any real packing.
double most_inside(const std::vector<Group>& groups, std::size_t self,
                   const std::vector<std::vector<int>>& weight, double budget,
                   double Group::*size) {
  if (budget < 0) return 0;
  struct Item {
    double per_mb;  // pair weight per MB (infinite for executors of no size)
    double size;
    double count;
    double weight;
  };
  std::vector<Item> items;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const int w = weight[groups[self].component][groups[g].component];
    if (w == 0) continue;
    const double count = groups[g].count - (g == self ? 1.0 : 0.0);
    if (count <= 0) continue;
    const double s = groups[g].*size;
    items.push_back({s > 0 ? w / s : INFINITY, s, count, static_cast<double>(w)});
  }
  std::sort(items.begin(), items.end(),
            [](const Item& a, const Item& b) { return a.per_mb > b.per_mb; });
  double inside = 0;
  for (const Item& item : items) {
    if (item.size <= 0) {
      inside += item.count * item.weight;
      continue;
    }
    const double take = std::min(item.count, budget / item.size);
    inside += take * item.weight;
    budget -= take * item.size;
    if (budget <= 0) break;
  }
  return inside;
}

// The weight of a minimum cut of the complete graph `w` (symmetric; n >= 2):
// Stoer and Wagner's algorithm, O(n³).
double minimum_cut(std::vector<std::vector<double>> w) {
  std::vector<std::size_t> v(w.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = i;
  double best = INFINITY;
  while (v.size() > 1) {
    std::vector<double> a(v.size(), 0);
    std::vector<char> added(v.size(), 0);
    std::size_t prev = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::size_t sel = v.size();
      for (std::size_t j = 0; j < v.size(); ++j) {
        if (!added[j] && (sel == v.size() || a[j] > a[sel])) sel = j;
      }
      added[sel] = 1;
      if (i + 1 < v.size()) {
        for (std::size_t j = 0; j < v.size(); ++j) a[j] += w[v[sel]][v[j]];
        prev = sel;
        continue;
      }
      // The last added: its cut from the rest is a candidate; merge it into prev.
      best = std::min(best, a[sel]);
      for (std::size_t j = 0; j < v.size(); ++j) {
        w[v[prev]][v[j]] += w[v[sel]][v[j]];
        w[v[j]][v[prev]] = w[v[prev]][v[j]];
      }
      v.erase(v.begin() + static_cast<std::ptrdiff_t>(sel));
    }
  }
  return best;
}

// The fewest units (largest first) whose capacities add up to `total`;
// capacities.size() + 1 when even all of them do not.
std::size_t fewest_units(std::vector<double> capacities, double total) {
  std::sort(capacities.rbegin(), capacities.rend());
  double sum = 0;
  for (std::size_t k = 0; k < capacities.size(); ++k) {
    if (sum + 1e-9 >= total) return k;
    sum += capacities[k];
  }
  return sum + 1e-9 >= total ? capacities.size() : capacities.size() + 1;
}

// Executors (with pairs) above which the cut bound is not computed (O(n³)).
constexpr std::size_t kCutMaxExecutors = 200;

}  // namespace

std::optional<std::uint64_t> network_cost_lower_bound(const SearchProblem& p, bool within_cpu) {
  if (std::any_of(p.fixed.begin(), p.fixed.end(), [](char f) { return f != 0; })) {
    return std::nullopt;
  }
  // Pair weight between components, as Layout counts it.
  const std::size_t components = p.component_size.size();
  std::vector<std::vector<int>> weight(components);
  for (std::vector<int>& row : weight) row.assign(components, 0);
  for (std::size_t c = 0; c < components; ++c) {
    for (const auto& [d, w] : p.adjacent[c]) weight[c][d] = w;
  }
  std::map<std::tuple<std::uint32_t, double, double, double>, std::size_t> index;
  std::vector<Group> groups;
  for (std::uint32_t e = 0; e < p.executors(); ++e) {
    auto [it, fresh] = index.emplace(
        std::tuple(p.component[e], p.memory[e], p.onheap[e], p.cpu[e]), groups.size());
    if (fresh) groups.push_back({p.component[e], p.memory[e], p.onheap[e], p.cpu[e], 0});
    ++groups[it->second].count;
  }
  // What each node and each rack has free (heap: in its free slots).
  const double worker_heap = std::max(0.0, p.max_heap_mb - p.acker_memory_mb);
  Units nodes, racks;
  racks.memory.assign(p.racks, 0), racks.onheap.assign(p.racks, 0), racks.cpu.assign(p.racks, 0);
  for (std::uint32_t n = 0; n < p.nodes(); ++n) {
    const double heap = std::min(p.worker_count[n] * worker_heap, p.free_memory[n]);
    const double cpu = std::max(0.0, p.free_cpu[n]);
    nodes.memory.push_back(p.free_memory[n]);
    nodes.onheap.push_back(heap);
    nodes.cpu.push_back(cpu);
    racks.memory[p.rack[n]] += p.free_memory[n];
    racks.onheap[p.rack[n]] += heap;
    racks.cpu[p.rack[n]] += cpu;
  }
  const Capacity node = nodes.largest(), rack = racks.largest();
  // The most pair weight of group g inside one unit of capacity `cap`: the
  // least of what each of its dimensions lets in.
  const auto inside = [&](std::size_t g, const Capacity& cap) {
    const Group& x = groups[g];
    double most = std::min(most_inside(groups, g, weight, cap.memory - x.memory, &Group::memory),
                           most_inside(groups, g, weight, cap.onheap - x.onheap, &Group::onheap));
    if (within_cpu) {
      most = std::min(most, most_inside(groups, g, weight, cap.cpu - x.cpu, &Group::cpu));
    }
    return most;
  };
  // Per executor: pairs that must leave its unit, summed (halved at the end).
  double split[3] = {0, 0, 0};  // worker, node, rack
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const Group& x = groups[g];
    double pairs = 0;
    for (std::size_t h = 0; h < groups.size(); ++h) {
      const double count = groups[h].count - (h == g ? 1.0 : 0.0);
      pairs += count * weight[x.component][groups[h].component];
    }
    if (pairs == 0) continue;
    const double in_rack = inside(g, rack);
    const double in_node = std::min(in_rack, inside(g, node));
    // A worker is on one node: no more than the node, and its heap.
    const double in_worker = std::min(
        in_node, most_inside(groups, g, weight, worker_heap - x.onheap, &Group::onheap));
    split[0] += x.count * std::max(0.0, pairs - in_worker);
    split[1] += x.count * std::max(0.0, pairs - in_node);
    split[2] += x.count * std::max(0.0, pairs - in_rack);
  }
  double bound[3];
  for (int level = 0; level < 3; ++level) bound[level] = split[level] / 2;

  // When the executors with pairs need k >= 2 units of a level, every unit's
  // executors are cut from the others by at least the graph's minimum cut λ,
  // and each split pair is on two boundaries: at least k·λ/2 pairs split.
  std::vector<std::uint32_t> linked;
  linked.reserve(p.executors());
  double memory = 0, onheap = 0, cpu = 0;
  for (std::uint32_t e = 0; e < p.executors(); ++e) {
    const auto& adjacent = p.adjacent[p.component[e]];
    const bool pairs = std::any_of(adjacent.begin(), adjacent.end(), [&](const auto& a) {
      return a.first != p.component[e] || p.component_size[a.first] > 1;
    });
    if (!pairs) continue;
    linked.push_back(e);
    memory += p.memory[e], onheap += p.onheap[e], cpu += p.cpu[e];
  }
  if (linked.size() >= 2 && linked.size() <= kCutMaxExecutors) {
    const auto units = [&](const Units& u) {
      std::size_t k = std::max(fewest_units(u.memory, memory), fewest_units(u.onheap, onheap));
      if (within_cpu) k = std::max(k, fewest_units(u.cpu, cpu));
      return k;
    };
    const std::size_t need[3] = {
        worker_heap > 0 ? static_cast<std::size_t>(std::ceil(onheap / worker_heap - 1e-9)) : 1,
        units(nodes), units(racks)};
    if (need[0] >= 2 || need[1] >= 2 || need[2] >= 2) {
      std::vector<std::vector<double>> graph(linked.size(), std::vector<double>(linked.size(), 0));
      for (std::size_t i = 0; i < linked.size(); ++i) {
        for (std::size_t j = 0; j < linked.size(); ++j) {
          if (i != j) graph[i][j] = weight[p.component[linked[i]]][p.component[linked[j]]];
        }
      }
      const double lambda = minimum_cut(std::move(graph));
      for (int level = 0; level < 3; ++level) {
        if (need[level] >= 2) bound[level] = std::max(bound[level], need[level] * lambda / 2);
      }
    }
  }
  // A pair split across racks is split across nodes, and across workers.
  bound[1] = std::max(bound[1], bound[2]);
  bound[0] = std::max(bound[0], bound[1]);
  return static_cast<std::uint64_t>(std::ceil(bound[0] + bound[1] + bound[2] - 1e-6));
}

}  // namespace rstorm::scheduler
