#include "scheduler/render.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "scheduler/cluster_state.hpp"

namespace rstorm::scheduler {
namespace {

std::string resources_text(const GenericResources& used, const GenericResources& capacity) {
  std::string out;
  for (const auto& [name, cap] : capacity) {
    auto it = used.find(name);
    out += ", " + name + " " + format_amount(it == used.end() ? 0 : it->second) + "/" +
           format_amount(cap);
  }
  return out;
}

std::string node_text(const NodeUsage& n) {
  return n.node.value() + " (" + n.host + "): memory " + format_amount(n.memory_used_mb) + "/" +
         format_amount(n.memory_capacity_mb) + " MB, cpu " + format_amount(n.cpu_used) + "/" +
         format_amount(n.cpu_capacity) + resources_text(n.generic_used, n.generic_capacity) +
         ", slots " + std::to_string(n.slots_used) + "/" + std::to_string(n.slots_total);
}

std::string network_text(const NetworkCost& c) {
  return std::to_string(c.pairs()) + " communicating pairs: " + std::to_string(c.same_worker) +
         " same worker, " + std::to_string(c.same_node) + " same node, " +
         std::to_string(c.same_rack) + " same rack, " + std::to_string(c.cross_rack) +
         " cross rack (weighted cost " + std::to_string(c.weighted()) + ")";
}

std::string fixed(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", value);
  return buf;
}

void decisions_text(std::ostringstream& out, const TopologyPlacement& p, const TopologyRequest& r) {
  if (!p.quality.is_greedy) {
    out << "  the placement above came from: " << p.quality.start
        << "; R-Storm's greedy alone decided (cost " << p.quality.greedy_cost << "):\n";
  }
  out << "  decisions, in placement order (distance = sqrt(memory^2 + cpu^2 + network^2), the "
         "smallest of all nodes that can take the executor):\n";
  for (const PlacementDecision& d : p.decisions) {
    const std::uint32_t e = d.executor.value();
    const std::string label =
        e < r.executors.size() ? executor_label(r.executors[e]) : std::string(kAckerComponent);
    out << "    " << label << " -> " << d.slot.node.value() << ":" << d.slot.port
        << (d.new_worker ? " (new worker)" : "") << ": distance "
        << fixed(std::sqrt(d.memory * d.memory + d.cpu * d.cpu + d.network * d.network))
        << " = memory " << fixed(d.memory) << ", cpu " << fixed(d.cpu) << ", network "
        << fixed(d.network) << "\n";
  }
}

void topology_text(std::ostringstream& out, const TopologyPlacement& p, const TopologyRequest& r,
                   const std::map<std::string, const NodeUsage*>& nodes, double max_heap) {
  out << "topology " << p.topology.value() << " (" << strategy_name(p.strategy) << "): ";
  if (!p.scheduled) {
    out << "NOT SCHEDULED: " << p.reason << "\n";
    return;
  }
  std::set<std::string> used_nodes;
  for (const WorkerAssignment& w : p.workers) used_nodes.insert(w.slot.node.value());
  out << "scheduled, " << r.executors.size() << " executors in " << p.workers.size()
      << " workers on " << used_nodes.size() << " nodes\n";
  std::string rack, node;
  for (const WorkerAssignment& w : p.workers) {
    if (w.rack.value() != rack) {
      rack = w.rack.value();
      out << "  rack " << rack << "\n";
      node.clear();
    }
    if (w.slot.node.value() != node) {
      node = w.slot.node.value();
      out << "    node " << node_text(*nodes.at(node)) << "\n";
    }
    out << "      worker " << w.slot.node.value() << ":" << w.slot.port << ": heap "
        << format_amount(w.heap_mb) << "/" << format_amount(max_heap) << " MB, off-heap "
        << format_amount(w.offheap_mb) << " MB, cpu " << format_amount(w.cpu) << ":";
    for (ExecutorId e : w.executors) out << " " << executor_label(r.executors[e.value()]);
    if (w.ackers > 0) out << " +" << w.ackers << (w.ackers == 1 ? " acker" : " ackers");
    out << "\n";
  }
  out << "  network: " << network_text(p.network) << "\n";
  if (p.strategy == Strategy::kResourceAware) {
    out << "  quality: " << quality_text(p.quality) << "\n";
  }
  if (p.moved_executors != static_cast<int>(r.executors.size())) {
    out << "  moved: " << p.moved_executors << " executors (the others stay where they run)\n";
  }
  for (const std::string& w : p.warnings) out << "  warning: " << w << "\n";
}

}  // namespace

// "greedy cost 74, final cost 58 (from: ..., 12 moves in 3110 evaluations), optimum 58"
std::string quality_text(const PlacementQuality& q) {
  std::ostringstream out;
  if (q.greedy_placed) {
    out << "greedy cost " << q.greedy_cost;
  } else {
    out << "greedy found no placement";
  }
  out << ", final cost " << q.final_cost << " (from: " << q.start;
  if (q.evaluations > 0) out << ", " << q.moves << " moves in " << q.evaluations << " evaluations";
  out << ")";
  if (q.lower_bound) out << (q.optimal ? ", optimum " : ", lower bound ") << *q.lower_bound;
  return out.str();
}

std::string executor_label(const ExecutorRequest& e) {
  std::string out = e.component + "[" + std::to_string(e.first_task);
  if (e.last_task != e.first_task) out += "-" + std::to_string(e.last_task);
  return out + "]";
}

std::string render_text(const ScheduleResult& result, const std::vector<TopologyRequest>& requests,
                        const RenderOptions& options) {
  std::map<std::string, const NodeUsage*> nodes;
  for (const NodeUsage& n : result.nodes) nodes[n.node.value()] = &n;
  std::ostringstream out;
  for (std::size_t i = 0; i < result.topologies.size(); ++i) {
    topology_text(out, result.topologies[i], requests[i], nodes, requests[i].worker_max_heap_mb);
    if (options.explain && result.topologies[i].scheduled) {
      decisions_text(out, result.topologies[i], requests[i]);
    }
  }
  // Each rack once, in the order its first node comes (nodes are in id
  // order, which need not follow the racks: supervisor-2 in r2 between
  // supervisor-1 and supervisor-3 of r1).
  std::vector<std::string> racks;
  for (const NodeUsage& n : result.nodes) {
    if (std::find(racks.begin(), racks.end(), n.rack.value()) == racks.end()) {
      racks.push_back(n.rack.value());
    }
  }
  out << "cluster: " << result.nodes.size() << " nodes in " << racks.size() << " racks\n";
  for (const std::string& rack : racks) {
    out << "  rack " << rack << "\n";
    for (const NodeUsage& n : result.nodes) {
      if (n.rack.value() == rack) out << "    " << node_text(n) << "\n";
    }
  }
  return out.str();
}

std::string render_json(const ScheduleResult& result,
                        const std::vector<TopologyRequest>& requests) {
  using nlohmann::json;
  json topologies = json::array();
  for (std::size_t i = 0; i < result.topologies.size(); ++i) {
    const TopologyPlacement& p = result.topologies[i];
    const TopologyRequest& r = requests[i];
    json t{{"id", p.topology.value()}, {"strategy", std::string(strategy_name(p.strategy))},
           {"scheduled", p.scheduled}, {"reason", p.reason},
           {"warnings", p.warnings},   {"moved_executors", p.moved_executors}};
    if (p.strategy == Strategy::kResourceAware && p.scheduled) {
      const PlacementQuality& q = p.quality;
      t["quality"] = {{"greedy_placed", q.greedy_placed},
                      {"greedy_cost", q.greedy_cost},
                      {"final_cost", q.final_cost},
                      {"start", q.start},
                      {"evaluations", q.evaluations},
                      {"moves", q.moves},
                      {"optimal", q.optimal}};
      t["quality"]["lower_bound"] = q.lower_bound ? json(*q.lower_bound) : json(nullptr);
    }
    t["network"] = {{"same_worker", p.network.same_worker}, {"same_node", p.network.same_node},
                    {"same_rack", p.network.same_rack},     {"cross_rack", p.network.cross_rack},
                    {"pairs", p.network.pairs()},           {"weighted", p.network.weighted()}};
    json workers = json::array();
    for (const WorkerAssignment& w : p.workers) {
      json executors = json::array();
      for (ExecutorId e : w.executors) executors.push_back(e.value());
      workers.push_back({{"node", w.slot.node.value()},
                         {"port", w.slot.port},
                         {"rack", w.rack.value()},
                         {"heap_mb", w.heap_mb},
                         {"offheap_mb", w.offheap_mb},
                         {"cpu", w.cpu},
                         {"ackers", w.ackers},
                         {"executors", executors}});
    }
    t["workers"] = workers;
    json executors = json::array();
    for (std::size_t e = 0; e < r.executors.size(); ++e) {
      json x{{"id", e},
             {"component", r.executors[e].component},
             {"tasks", {r.executors[e].first_task, r.executors[e].last_task}}};
      if (p.scheduled) {
        x["node"] = p.executor_slots[e].node.value();
        x["port"] = p.executor_slots[e].port;
      }
      executors.push_back(std::move(x));
    }
    t["executors"] = executors;
    json decisions = json::array();
    for (const PlacementDecision& d : p.decisions) {
      decisions.push_back({{"executor", d.executor.value()},
                           {"node", d.slot.node.value()},
                           {"port", d.slot.port},
                           {"memory", d.memory},
                           {"cpu", d.cpu},
                           {"network", d.network},
                           {"new_worker", d.new_worker}});
    }
    t["decisions"] = decisions;
    topologies.push_back(std::move(t));
  }
  json nodes = json::array();
  for (const NodeUsage& n : result.nodes) {
    nodes.push_back({{"id", n.node.value()},
                     {"host", n.host},
                     {"rack", n.rack.value()},
                     {"memory_used_mb", n.memory_used_mb},
                     {"memory_capacity_mb", n.memory_capacity_mb},
                     {"cpu_used", n.cpu_used},
                     {"cpu_capacity", n.cpu_capacity},
                     {"generic_used", n.generic_used},
                     {"generic_capacity", n.generic_capacity},
                     {"slots_used", n.slots_used},
                     {"slots_total", n.slots_total}});
  }
  return json{{"topologies", topologies}, {"nodes", nodes}}.dump(2) + "\n";
}

}  // namespace rstorm::scheduler
