#include "scheduler/cluster_state.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>

namespace rstorm::scheduler {

bool natural_less(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i]));
    const bool db = std::isdigit(static_cast<unsigned char>(b[j]));
    if (da && db) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      // Compare digit runs by value: strip leading zeros, then length, then digits.
      std::size_t is = i, js = j;
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      if (ie - is != je - js) return ie - is < je - js;
      const int c = a.substr(is, ie - is).compare(b.substr(js, je - js));
      if (c != 0) return c < 0;
      if (ie - i != je - j) return ie - i < je - j;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::string format_amount(double value) {
  char buf[64];
  if (std::abs(value - std::round(value)) < 1e-9) {
    std::snprintf(buf, sizeof buf, "%.0f", std::round(value));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f", value);
  }
  return buf;
}

Result<ClusterState> ClusterState::Create(const Cluster& cluster) {
  ClusterState state;
  std::vector<const NodeSpec*> specs;
  for (const NodeSpec& spec : cluster.nodes) specs.push_back(&spec);
  std::sort(specs.begin(), specs.end(), [](const NodeSpec* a, const NodeSpec* b) {
    return natural_less(a->id.value(), b->id.value());
  });
  std::vector<std::string> rack_names;
  for (const NodeSpec* spec : specs) {
    if (spec->id.value().empty()) return Error{"a node has an empty id"};
    if (!state.nodes_.empty() && state.nodes_.back().spec->id == spec->id) {
      return Error{"node '" + spec->id.value() + "' is listed twice"};
    }
    if (spec->memory_mb < 0 || spec->cpu < 0) {
      return Error{"node '" + spec->id.value() + "' has a negative capacity"};
    }
    NodeState node;
    node.spec = spec;
    node.free_memory_mb = spec->memory_mb;
    node.free_cpu = spec->cpu;
    node.free_generic = spec->generic;
    std::set<int> ports(spec->ports.begin(), spec->ports.end());
    if (ports.size() != spec->ports.size()) {
      return Error{"node '" + spec->id.value() + "' lists a port twice"};
    }
    node.free_ports.assign(ports.begin(), ports.end());
    state.nodes_.push_back(std::move(node));
    rack_names.push_back(spec->rack.value());
    state.max_memory_mb_ = std::max(state.max_memory_mb_, spec->memory_mb);
    state.max_cpu_ = std::max(state.max_cpu_, spec->cpu);
  }
  std::vector<std::string> racks = rack_names;
  std::sort(racks.begin(), racks.end(), natural_less);
  racks.erase(std::unique(racks.begin(), racks.end()), racks.end());
  for (const std::string& name : racks) state.racks_.push_back(Rack{RackId(name), {}});
  for (std::uint32_t n = 0; n < state.nodes_.size(); ++n) {
    auto it = std::lower_bound(racks.begin(), racks.end(), rack_names[n], natural_less);
    state.nodes_[n].rack = static_cast<std::uint32_t>(it - racks.begin());
    state.racks_[state.nodes_[n].rack].nodes.push_back(n);
    state.by_id_.emplace_back(state.nodes_[n].spec->id.value(), n);
  }
  std::sort(state.by_id_.begin(), state.by_id_.end());
  for (const SlotUsage& used : cluster.used) {
    const std::uint32_t n = state.find(used.slot.node);
    if (n == kNoNode) {
      return Error{"topology '" + used.topology.value() + "' uses unknown node '" +
                   used.slot.node.value() + "'"};
    }
    if (!state.has_port(n, used.slot.port)) {
      return Error{"topology '" + used.topology.value() + "' uses port " +
                   std::to_string(used.slot.port) + " of node '" + used.slot.node.value() +
                   "', which is not a free slot"};
    }
    state.take_port(n, used.slot.port);
    state.charge(n, used.memory_mb, used.cpu, used.generic);
  }
  return state;
}

std::uint32_t ClusterState::find(const NodeId& id) const {
  auto it =
      std::lower_bound(by_id_.begin(), by_id_.end(), id.value(),
                       [](const auto& entry, const std::string& v) { return entry.first < v; });
  if (it == by_id_.end() || it->first != id.value()) return kNoNode;
  return it->second;
}

bool ClusterState::has_port(std::uint32_t n, int port) const {
  const auto& ports = nodes_[n].free_ports;
  return std::binary_search(ports.begin(), ports.end(), port);
}

void ClusterState::take_port(std::uint32_t n, int port) {
  auto& ports = nodes_[n].free_ports;
  ports.erase(std::lower_bound(ports.begin(), ports.end(), port));
}

void ClusterState::release_port(std::uint32_t n, int port) {
  auto& ports = nodes_[n].free_ports;
  ports.insert(std::lower_bound(ports.begin(), ports.end(), port), port);
}

void ClusterState::charge(std::uint32_t n, double memory_mb, double cpu,
                          const GenericResources& generic, int sign) {
  NodeState& node = nodes_[n];
  node.free_memory_mb -= sign * memory_mb;
  node.free_cpu -= sign * cpu;
  for (const auto& [name, amount] : generic) node.free_generic[name] -= sign * amount;
}

std::vector<NodeUsage> ClusterState::usage() const {
  std::vector<NodeUsage> out;
  out.reserve(nodes_.size());
  for (const NodeState& node : nodes_) {
    const NodeSpec& spec = *node.spec;
    NodeUsage u;
    u.node = spec.id;
    u.host = spec.host.empty() ? spec.id.value() : spec.host;
    u.rack = spec.rack;
    u.memory_capacity_mb = spec.memory_mb;
    u.memory_used_mb = spec.memory_mb - node.free_memory_mb;
    u.cpu_capacity = spec.cpu;
    u.cpu_used = spec.cpu - node.free_cpu;
    u.generic_capacity = spec.generic;
    for (const auto& [name, free] : node.free_generic) {
      auto cap = spec.generic.find(name);
      u.generic_used[name] = (cap == spec.generic.end() ? 0.0 : cap->second) - free;
    }
    u.slots_total = static_cast<int>(spec.ports.size());
    u.slots_used = u.slots_total - static_cast<int>(node.free_ports.size());
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace rstorm::scheduler
