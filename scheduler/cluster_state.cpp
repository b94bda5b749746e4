#include "scheduler/cluster_state.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>
#include <unordered_map>

namespace rstorm::scheduler {
namespace {

// std::isdigit without its call: '0' to '9' whatever the locale.
bool is_digit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

}  // namespace

bool natural_less(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = is_digit(a[i]);
    const bool db = is_digit(b[j]);
    if (da && db) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && is_digit(a[ie])) ++ie;
      while (je < b.size() && is_digit(b[je])) ++je;
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
  // std::to_chars with a precision writes what printf's %.0f / %.1f would,
  // without parsing a format (a saturated cluster's warnings call this
  // for every executor that overcommits).
  char buf[400];  // the longest %.1f of a double is 311 characters
  const bool whole = std::abs(value - std::round(value)) < 1e-9;
  const auto [end, error] = std::to_chars(buf, buf + sizeof buf, whole ? std::round(value) : value,
                                          std::chars_format::fixed, whole ? 0 : 1);
  return std::string(buf, error == std::errc() ? end : buf);
}

Result<ClusterState> ClusterState::Create(const Cluster& cluster) {
  ClusterState state;
  std::vector<const NodeSpec*> specs;
  specs.reserve(cluster.nodes.size());
  for (const NodeSpec& spec : cluster.nodes) specs.push_back(&spec);
  const auto natural = [](const NodeSpec* a, const NodeSpec* b) {
    return natural_less(a->id.value(), b->id.value());
  };
  // Clusters usually list their nodes in that order already: one pass tells.
  if (!std::is_sorted(specs.begin(), specs.end(), natural)) {
    std::sort(specs.begin(), specs.end(), natural);
  }
  state.nodes_.reserve(specs.size());
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
    node.free_ports = spec->ports;
    std::sort(node.free_ports.begin(), node.free_ports.end());
    if (std::adjacent_find(node.free_ports.begin(), node.free_ports.end()) !=
        node.free_ports.end()) {
      return Error{"node '" + spec->id.value() + "' lists a port twice"};
    }
    state.nodes_.push_back(std::move(node));
    state.max_memory_mb_ = std::max(state.max_memory_mb_, spec->memory_mb);
    state.max_cpu_ = std::max(state.max_cpu_, spec->cpu);
  }
  // The racks, each name once, numbered in natural order.
  std::unordered_map<std::string_view, std::uint32_t> rack_of;
  std::vector<std::string_view> racks;
  for (const NodeSpec* spec : specs) {
    if (rack_of.emplace(spec->rack.value(), 0).second) racks.push_back(spec->rack.value());
  }
  std::sort(racks.begin(), racks.end(), natural_less);
  for (std::uint32_t r = 0; r < racks.size(); ++r) {
    rack_of[racks[r]] = r;
    state.racks_.push_back(Rack{RackId(std::string(racks[r])), {}});
  }
  state.by_id_.reserve(state.nodes_.size());
  for (std::uint32_t n = 0; n < state.nodes_.size(); ++n) {
    state.nodes_[n].rack = rack_of[state.nodes_[n].spec->rack.value()];
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
