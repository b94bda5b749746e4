#include "rstorm/topology_builder.hpp"

#include <algorithm>
#include <set>

#include "topology_validation.hpp"

namespace rstorm {

TopologyBuilder::TopologyBuilder() = default;
TopologyBuilder::~TopologyBuilder() = default;

detail::PendingComponent* TopologyBuilder::add(std::string id, ComponentKind kind,
                                               int parallelism) {
  auto c = std::make_unique<detail::PendingComponent>();
  c->spec.id = std::move(id);
  c->spec.kind = kind;
  c->spec.parallelism = parallelism;
  c->spec.num_tasks = parallelism;
  components_.push_back(std::move(c));
  return components_.back().get();
}

SpoutDeclarer TopologyBuilder::set_spout(std::string id, SpoutFactory factory, int parallelism) {
  auto* c = add(std::move(id), ComponentKind::kSpout, parallelism);
  c->spout = std::move(factory);
  return SpoutDeclarer(c);
}

BoltDeclarer TopologyBuilder::set_bolt(std::string id, BoltFactory factory, int parallelism) {
  auto* c = add(std::move(id), ComponentKind::kBolt, parallelism);
  c->bolt = std::move(factory);
  return BoltDeclarer(c);
}

BoltDeclarer TopologyBuilder::set_bolt(std::string id, BasicBoltFactory factory,
                                       int parallelism) {
  auto* c = add(std::move(id), ComponentKind::kBolt, parallelism);
  if (factory) {
    c->bolt = [f = std::move(factory)]() { return adapt_basic_bolt(f()); };
  }
  return BoltDeclarer(c);
}

namespace {

// Makes one instance to ask it for its streams. Problems go to `problems`.
void declare_streams(detail::PendingComponent& c, std::vector<std::string>& problems) {
  const std::string& id = c.spec.id;
  OutputFieldsDeclarer declarer;
  try {
    if (c.spec.kind == ComponentKind::kSpout) {
      auto instance = c.spout ? c.spout() : nullptr;
      if (!instance) {
        problems.push_back("component '" + id + "': its factory returned no instance");
        return;
      }
      instance->declare_output_fields(declarer);
    } else {
      auto instance = c.bolt ? c.bolt() : nullptr;
      if (!instance) {
        problems.push_back("component '" + id + "': its factory returned no instance");
        return;
      }
      instance->declare_output_fields(declarer);
    }
  } catch (const std::exception& e) {
    problems.push_back("component '" + id + "': declaring its outputs threw: " + e.what());
    return;
  }
  std::set<std::string> seen;
  for (const auto& s : declarer.streams()) {
    if (!seen.insert(s.id).second) {
      problems.push_back("component '" + id + "' declares stream '" + s.id + "' twice");
      continue;
    }
    c.spec.streams.push_back(s);
  }
}

}  // namespace

api::Result<Topology> TopologyBuilder::build() const {
  std::vector<std::string> problems;
  TopologySpec spec;
  std::map<std::string, SpoutFactory, std::less<>> spouts;
  std::map<std::string, BoltFactory, std::less<>> bolts;
  std::set<std::string> ids;
  for (const auto& pending : components_) {
    detail::PendingComponent c = *pending;
    const std::string& id = c.spec.id;
    if (!ids.insert(id).second) {
      problems.push_back("component '" + id + "' is declared twice");
      continue;
    }
    declare_streams(c, problems);
    if (c.spec.kind == ComponentKind::kSpout) {
      spouts.emplace(id, c.spout);
    } else {
      bolts.emplace(id, c.bolt);
    }
    spec.components.push_back(std::move(c.spec));
  }
  std::sort(spec.components.begin(), spec.components.end(),
            [](const ComponentSpec& a, const ComponentSpec& b) { return a.id < b.id; });
  validate_topology(spec, problems);
  if (!problems.empty()) return api::Status::errors(std::move(problems));
  return Topology(std::move(spec), std::move(spouts), std::move(bolts));
}

}  // namespace rstorm
