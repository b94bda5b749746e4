#include "rstorm/topology_builder.hpp"

#include <algorithm>
#include <set>

#include "topology_validation.hpp"
#include "window_settings.hpp"

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

WindowedBoltDeclarer TopologyBuilder::set_bolt(std::string id, WindowedBoltFactory factory,
                                               int parallelism) {
  auto* c = add(std::move(id), ComponentKind::kBolt, parallelism);
  c->windowed = true;
  if (factory) {
    c->bolt = [f = std::move(factory)]() { return adapt_windowed_bolt(f()); };
  }
  return WindowedBoltDeclarer(c);
}

namespace {

// Makes one instance to ask it for its streams. Problems go to `problems`;
// false when there are no streams to read.
template <typename Factory>
bool declare_from(const Factory& factory, const std::string& id, OutputFieldsDeclarer& declarer,
                  std::vector<std::string>& problems) {
  auto threw = [&](const std::string& where, const std::string& what) {
    problems.push_back("component '" + id + "': " + where + " threw" + what);
    return false;
  };
  decltype(factory()) instance;
  try {
    instance = factory ? factory() : nullptr;
  } catch (const std::exception& e) {
    return threw("its factory", std::string(": ") + e.what());
  } catch (...) {
    return threw("its factory", " a non-standard exception");
  }
  if (!instance) {
    problems.push_back("component '" + id + "': its factory returned no instance");
    return false;
  }
  try {
    instance->declare_output_fields(declarer);
  } catch (const std::exception& e) {
    return threw("declare_output_fields", std::string(": ") + e.what());
  } catch (...) {
    return threw("declare_output_fields", " a non-standard exception");
  }
  return true;
}

void declare_streams(detail::PendingComponent& c, std::vector<std::string>& problems) {
  const std::string& id = c.spec.id;
  OutputFieldsDeclarer declarer;
  const bool declared = c.spec.kind == ComponentKind::kSpout
                            ? declare_from(c.spout, id, declarer, problems)
                            : declare_from(c.bolt, id, declarer, problems);
  if (!declared) return;
  std::set<std::string> seen;
  for (const auto& s : declarer.streams()) {
    if (!seen.insert(s.id).second) {
      problems.push_back("component '" + id + "' declares stream '" + s.id + "' twice");
      continue;
    }
    c.spec.streams.push_back(s);
  }
}

// Checks a windowed bolt's settings and declares its late tuple stream with
// the fields of its input streams (which must agree).
void declare_window(TopologySpec& spec, const std::string& id, std::vector<std::string>& problems) {
  ComponentSpec* c = nullptr;
  for (auto& comp : spec.components) {
    if (comp.id == id) c = &comp;
  }
  if (c == nullptr) return;
  auto settings = read_window_settings(c->config, id, problems);
  if (!settings || settings->late_stream.empty()) return;
  if (c->find_stream(settings->late_stream) != nullptr) {
    problems.push_back("windowed bolt '" + id + "' declares its late tuple stream '" +
                       settings->late_stream +
                       "' itself; the builder declares it with the input's fields");
    return;
  }
  const Fields* fields = nullptr;
  std::string first_input;
  for (const auto& in : c->inputs) {
    const ComponentSpec* from = spec.find(in.component);
    const StreamSpec* stream = from == nullptr ? nullptr : from->find_stream(in.stream);
    if (stream == nullptr) continue;  // validate_topology names it
    if (fields == nullptr) {
      fields = &stream->fields;
      first_input = in.component + ":" + in.stream;
    } else if (!(*fields == stream->fields)) {
      problems.push_back("windowed bolt '" + id + "': its late tuple stream '" +
                         settings->late_stream + "' carries its inputs' fields, but " +
                         first_input + " and " + in.component + ":" + in.stream +
                         " have different fields");
      return;
    }
  }
  if (fields == nullptr) return;
  c->streams.push_back(StreamSpec{settings->late_stream, *fields, false});
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
    // As Storm: a component runs on at most as many executors as it has
    // tasks (an executor runs one or more tasks, never none).
    if (c.spec.num_tasks >= 1 && c.spec.parallelism > c.spec.num_tasks) {
      c.spec.parallelism = c.spec.num_tasks;
    }
    if (c.spec.kind == ComponentKind::kSpout) {
      spouts.emplace(id, c.spout);
    } else {
      bolts.emplace(id, c.bolt);
    }
    spec.components.push_back(std::move(c.spec));
  }
  std::sort(spec.components.begin(), spec.components.end(),
            [](const ComponentSpec& a, const ComponentSpec& b) { return a.id < b.id; });
  for (const auto& pending : components_) {
    if (pending->windowed) declare_window(spec, pending->spec.id, problems);
  }
  validate_topology(spec, problems);
  if (!problems.empty()) return api::Status::errors(std::move(problems));
  return Topology(std::move(spec), std::move(spouts), std::move(bolts));
}

}  // namespace rstorm
