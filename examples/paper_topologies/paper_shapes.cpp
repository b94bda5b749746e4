#include "paper_shapes.hpp"

#include <set>

namespace rstorm::examples::paper {
namespace {

ComponentShape spout(std::string name, int parallelism, double cpu) {
  return {std::move(name), true, parallelism, 0, cpu, {}};
}
ComponentShape bolt(std::string name, int parallelism, double cpu, std::vector<std::string> inputs,
                    int tasks = 0) {
  return {std::move(name), false, parallelism, tasks, cpu, std::move(inputs)};
}

std::vector<ComponentShape> linear(Variant v) {
  if (v == Variant::kNetwork) {
    return {spout("spout", 8, 40), bolt("b1", 4, 20, {"spout"}), bolt("b2", 4, 20, {"b1"}),
            bolt("b3", 4, 20, {"b2"})};
  }
  return {spout("spout", 4, 50), bolt("b1", 6, 20, {"spout"}), bolt("b2", 6, 20, {"b1"}),
          bolt("b3", 6, 20, {"b2"})};
}

std::vector<ComponentShape> diamond(Variant v) {
  if (v == Variant::kNetwork) {
    return {spout("spout", 4, 50),        bolt("b1", 4, 15, {"spout"}),
            bolt("b2", 4, 15, {"spout"}), bolt("b3", 4, 15, {"spout"}),
            bolt("b4", 4, 15, {"spout"}), bolt("sink", 4, 15, {"b1", "b2", "b3", "b4"}, 6)};
  }
  return {spout("spout", 2, 50),        bolt("b1", 4, 20, {"spout"}),
          bolt("b2", 4, 20, {"spout"}), bolt("b3", 4, 20, {"spout"}),
          bolt("b4", 4, 30, {"spout"}), bolt("sink", 6, 30, {"b1", "b2", "b3", "b4"})};
}

std::vector<ComponentShape> star(Variant v) {
  if (v == Variant::kNetwork) {
    return {spout("spout1", 3, 50), spout("spout2", 3, 50),
            bolt("center", 6, 15, {"spout1", "spout2"}), bolt("sink1", 3, 15, {"center"}),
            bolt("sink2", 3, 15, {"center"})};
  }
  return {spout("spout1", 2, 50), spout("spout2", 2, 50),
          bolt("center", 6, 20, {"spout1", "spout2"}), bolt("sink1", 6, 20, {"center"}),
          bolt("sink2", 6, 20, {"center"})};
}

// PageLoad and Processing are the same in both variants (authors' code).
std::vector<ComponentShape> page_load() {
  return {spout("spout", 3, 40),           bolt("transform", 3, 40, {"spout"}),
          bolt("filter", 3, 40, {"transform"}), bolt("join", 3, 15, {"filter"}),
          bolt("filter2", 3, 20, {"join"}),     bolt("aggregate", 3, 20, {"filter2"}),
          bolt("sink", 3, 15, {"aggregate"})};
}

std::vector<ComponentShape> processing() {
  return {spout("spout", 2, 30),          bolt("transform", 4, 30, {"spout"}),
          bolt("filter", 4, 30, {"transform"}), bolt("join1", 4, 10, {"filter"}),
          bolt("output1", 4, 10, {"join1"}),    bolt("join2", 4, 15, {"transform"}),
          bolt("normalize", 4, 10, {"join2"}),  bolt("output2", 4, 10, {"normalize"})};
}

}  // namespace

const std::vector<std::string>& shape_names() {
  static const std::vector<std::string> kNames = {"linear", "diamond", "star", "page-load",
                                                  "processing"};
  return kNames;
}

std::optional<Variant> parse_variant(const std::string& name) {
  if (name == "network") return Variant::kNetwork;
  if (name == "cpu") return Variant::kCpu;
  return std::nullopt;
}

const char* variant_name(Variant variant) {
  return variant == Variant::kNetwork ? "network" : "cpu";
}

std::optional<Shape> find_shape(const std::string& name, Variant variant) {
  Shape s{name, variant, {}};
  if (name == "linear") {
    s.components = linear(variant);
  } else if (name == "diamond") {
    s.components = diamond(variant);
  } else if (name == "star") {
    s.components = star(variant);
  } else if (name == "page-load") {
    s.components = page_load();
  } else if (name == "processing") {
    s.components = processing();
  } else {
    return std::nullopt;
  }
  return s;
}

std::map<std::string, double> component_input_rates(const Shape& shape, double spout_rate) {
  // Components are listed so that every input comes before its consumers.
  std::map<std::string, double> out_rate, in_rate;
  for (const auto& c : shape.components) {
    if (c.spout) {
      out_rate[c.name] = spout_rate * c.parallelism;
      in_rate[c.name] = out_rate[c.name];
      continue;
    }
    double sum = 0;
    for (const auto& input : c.inputs) sum += out_rate[input];
    in_rate[c.name] = sum;
    out_rate[c.name] = sum;
  }
  return in_rate;
}

std::vector<std::string> sink_components(const Shape& shape) {
  std::set<std::string> consumed;
  for (const auto& c : shape.components) consumed.insert(c.inputs.begin(), c.inputs.end());
  std::vector<std::string> sinks;
  for (const auto& c : shape.components) {
    if (!consumed.contains(c.name)) sinks.push_back(c.name);
  }
  return sinks;
}

}  // namespace rstorm::examples::paper
