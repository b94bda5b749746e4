#include "rstorm/topology.hpp"

#include <algorithm>
#include <cmath>

namespace rstorm {

std::string_view grouping_name(GroupingType type) {
  switch (type) {
    case GroupingType::kShuffle: return "shuffle";
    case GroupingType::kFields: return "fields";
    case GroupingType::kAll: return "all";
    case GroupingType::kGlobal: return "global";
    case GroupingType::kDirect: return "direct";
    case GroupingType::kLocalOrShuffle: return "local-or-shuffle";
    case GroupingType::kNone: return "none";
  }
  return "unknown";
}

const StreamSpec* ComponentSpec::find_stream(std::string_view stream) const {
  for (const auto& s : streams) {
    if (s.id == stream) return &s;
  }
  return nullptr;
}

const ComponentSpec* TopologySpec::find(std::string_view id) const {
  auto it = std::lower_bound(components.begin(), components.end(), id,
                             [](const ComponentSpec& c, std::string_view v) { return c.id < v; });
  if (it != components.end() && it->id == id) return &*it;
  // Not sorted (built by hand): fall back to a scan.
  for (const auto& c : components) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

Topology::Topology(TopologySpec spec, std::map<std::string, SpoutFactory, std::less<>> spouts,
                   std::map<std::string, BoltFactory, std::less<>> bolts)
    : spec_(std::move(spec)),
      factories_(std::make_shared<Factories>(Factories{std::move(spouts), std::move(bolts)})) {}

api::Status Topology::resolve_resources(const Config& config) {
  std::vector<std::string> problems;
  for (ComponentSpec& c : spec_.components) {
    // The component's own entry, else the topology's, else as declared.
    auto resolve = [&](std::string_view key, double& amount) {
      const Config* from = nullptr;
      if (const auto* e = c.config.find(key); e != nullptr && !e->value.is_null()) {
        from = &c.config;
      } else if (const auto* t = config.find(key); t != nullptr && !t->value.is_null()) {
        from = &config;
      }
      if (from == nullptr) return;
      try {
        const double v = from->get_double(key);
        if (!std::isfinite(v) || v < 0) {
          problems.push_back("component '" + c.id + "': " + std::string(key) + " (" +
                             from->find(key)->origin + ") is " + std::to_string(v) +
                             ": expected a number >= 0");
          return;
        }
        amount = v;
      } catch (const ConfigError& e) {
        problems.push_back("component '" + c.id + "': " + e.what());
      }
    };
    resolve(keys::kTopologyComponentOnheapMb, c.resources.onheap_mb);
    resolve(keys::kTopologyComponentOffheapMb, c.resources.offheap_mb);
    resolve(keys::kTopologyComponentCpuPcorePercent, c.resources.cpu_points);
  }
  if (!problems.empty()) return api::Status::errors(std::move(problems));
  return api::Status::ok();
}

std::unique_ptr<Spout> Topology::create_spout(std::string_view id) const {
  auto it = factories_->spouts.find(id);
  if (it == factories_->spouts.end() || !it->second) return nullptr;
  return it->second();
}

std::unique_ptr<Bolt> Topology::create_bolt(std::string_view id) const {
  auto it = factories_->bolts.find(id);
  if (it == factories_->bolts.end() || !it->second) return nullptr;
  return it->second();
}

}  // namespace rstorm
