#include "scheduler/placement_order.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "scheduler/ids.hpp"

namespace rstorm::scheduler {

std::vector<std::string> component_order(const TopologyRequest& request) {
  std::map<std::string, std::set<std::string>> neighbours;
  std::vector<std::string> names;
  std::set<std::string> spouts;
  for (const ComponentSpec& c : request.components) {
    names.push_back(c.name);
    neighbours[c.name];
    if (c.is_spout) spouts.insert(c.name);
  }
  for (const Edge& edge : request.edges) {
    if (!neighbours.count(edge.from) || !neighbours.count(edge.to)) continue;
    neighbours[edge.from].insert(edge.to);
    neighbours[edge.to].insert(edge.from);
  }
  std::sort(names.begin(), names.end(), natural_less);
  std::vector<std::string> order;
  std::set<std::string> seen;
  std::deque<std::string> queue;
  auto walk = [&] {
    while (!queue.empty()) {
      std::string c = queue.front();
      queue.pop_front();
      order.push_back(c);
      std::vector<std::string> next(neighbours[c].begin(), neighbours[c].end());
      std::sort(next.begin(), next.end(), natural_less);
      for (const std::string& n : next) {
        if (seen.insert(n).second) queue.push_back(n);
      }
    }
  };
  for (const std::string& name : names) {  // all spouts start the walk together
    if (spouts.count(name) && seen.insert(name).second) queue.push_back(name);
  }
  walk();
  for (const std::string& name : names) {
    if (seen.insert(name).second) {
      queue.push_back(name);
      walk();
    }
  }
  return order;
}

std::vector<std::uint32_t> executor_order(const TopologyRequest& request,
                                          const std::vector<ExecutorRequest>& executors) {
  std::vector<std::string> components = component_order(request);
  std::map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < components.size(); ++i) position[components[i]] = i;
  std::vector<std::vector<std::uint32_t>> queues(components.size() + 1);
  ComponentLookup lookup(position);
  for (std::uint32_t i = 0; i < executors.size(); ++i) {
    auto it = lookup.find(executors[i].component);
    queues[it == position.end() ? components.size() : it->second].push_back(i);
  }
  std::vector<std::uint32_t> order;
  order.reserve(executors.size());
  for (std::size_t pass = 0; order.size() < executors.size(); ++pass) {
    for (const auto& q : queues) {
      if (pass < q.size()) order.push_back(q[pass]);
    }
  }
  return order;
}

}  // namespace rstorm::scheduler
