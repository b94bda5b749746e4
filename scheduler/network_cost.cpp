#include "scheduler/network_cost.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "scheduler/fusion.hpp"

namespace rstorm::scheduler {
namespace {

// Σ over consumers b of (producers sharing b's location at one level).
std::uint64_t shared_pairs(const std::vector<std::uint32_t>& producers,
                           const std::vector<std::uint32_t>& consumers,
                           const std::vector<ExecutorLocation>& loc,
                           std::uint32_t ExecutorLocation::*level,
                           std::vector<std::uint64_t>& count) {
  for (std::uint32_t a : producers) ++count[loc[a].*level];
  std::uint64_t shared = 0;
  for (std::uint32_t b : consumers) shared += count[loc[b].*level];
  for (std::uint32_t a : producers) count[loc[a].*level] = 0;
  return shared;
}

}  // namespace

NetworkCost network_cost(const TopologyRequest& request,
                         const std::vector<ExecutorLocation>& locations) {
  std::map<std::string, std::vector<std::uint32_t>> by_component;
  ComponentLookup of(by_component);
  std::uint32_t max_index = 0;
  for (std::uint32_t i = 0; i < request.executors.size(); ++i) {
    of[request.executors[i].component].push_back(i);
    const ExecutorLocation& l = locations[i];
    max_index = std::max({max_index, l.worker, l.node, l.rack});
  }
  std::vector<std::uint64_t> count(static_cast<std::size_t>(max_index) + 1, 0);
  std::set<std::pair<std::string, std::string>> seen;
  // A fused bolt's input is a call on its producer's thread, not a message.
  const std::map<std::string, std::string> fused = fused_components(request);
  NetworkCost cost;
  for (const Edge& edge : request.edges) {
    if (!seen.emplace(edge.from, edge.to).second) continue;
    if (auto f = fused.find(edge.to); f != fused.end() && f->second == edge.from) continue;
    auto from = by_component.find(edge.from);
    auto to = by_component.find(edge.to);
    if (from == by_component.end() || to == by_component.end()) continue;
    const auto& producers = from->second;
    const auto& consumers = to->second;
    // An edge to itself: an executor does not send to itself over any link.
    const std::uint64_t self = edge.from == edge.to ? consumers.size() : 0;
    const std::uint64_t total =
        static_cast<std::uint64_t>(producers.size()) * consumers.size() - self;
    const std::uint64_t worker =
        shared_pairs(producers, consumers, locations, &ExecutorLocation::worker, count) - self;
    const std::uint64_t node =
        shared_pairs(producers, consumers, locations, &ExecutorLocation::node, count) - self;
    const std::uint64_t rack =
        shared_pairs(producers, consumers, locations, &ExecutorLocation::rack, count) - self;
    cost.same_worker += worker;
    cost.same_node += node - worker;
    cost.same_rack += rack - node;
    cost.cross_rack += total - rack;
  }
  return cost;
}

}  // namespace rstorm::scheduler
