// The R-Storm paper's topologies (Peng et al., Middleware 2015) as data: for
// each shape (linear, diamond, star, page-load, processing) and variant
// (network-bound, CPU-bound), the components with parallelism, tasks, CPU
// points per executor and inputs, exactly as in examples/paper/*.yaml (which
// come from the authors' code). Memory is Storm's default 128 MB on-heap per
// executor. Pure data and arithmetic: thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rstorm::examples::paper {

enum class Variant { kNetwork, kCpu };

struct ComponentShape {
  std::string name;
  bool spout = false;
  int parallelism = 1;
  int tasks = 0;  // 0: one task per executor
  double cpu = 10;  // points per executor, 100 = one core
  std::vector<std::string> inputs;  // shuffle subscriptions
};

struct Shape {
  std::string name;  // "linear", ...
  Variant variant = Variant::kNetwork;
  std::vector<ComponentShape> components;  // spouts first, then bolts in graph order
};

// "linear", "diamond", "star", "page-load", "processing".
const std::vector<std::string>& shape_names();
// "network" or "cpu"; nullopt for anything else.
std::optional<Variant> parse_variant(const std::string& name);
const char* variant_name(Variant variant);
// nullopt for an unknown shape name.
std::optional<Shape> find_shape(const std::string& name, Variant variant);

// Tuples per second arriving at each component (emitted by each spout) when
// every spout executor emits `spout_rate` tuples/s and every bolt emits one
// tuple per input: a component subscribed to k streams receives their sum.
std::map<std::string, double> component_input_rates(const Shape& shape, double spout_rate);

// Components no other component subscribes to: where throughput is counted.
std::vector<std::string> sink_components(const Shape& shape);

}  // namespace rstorm::examples::paper
