#include "scheduler/yaml_loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace rstorm::scheduler {
namespace {

// A count expands a few bytes into nodes, slots or tasks; past these bounds
// it is a typo (`nodes: 400000000`) that would exhaust memory, not a cluster.
constexpr std::size_t kMaxNodes = 100000;   // in a cluster
constexpr std::size_t kMaxSlots = 1000000;  // worker slots in a cluster
constexpr long kMaxTasks = 1000000;         // in a topology (task ids are ints)

// Thrown inside this file only; parse_* turn it into an Error.
struct LoadError {
  std::string message;
};

class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& field,
                         const std::string& problem) const {
    const YAML::Mark mark = at.Mark();
    std::string where = origin_;
    if (mark.line >= 0) where += ":" + std::to_string(mark.line + 1);
    throw LoadError{where + ": field '" + field + "': " + problem};
  }

  // REQUIRES: parent is a map.
  void only(const YAML::Node& map, const std::string& field,
            std::initializer_list<const char*> known) const {
    if (!map.IsMap()) fail(map, field, "expected a map");
    for (const auto& entry : map) {
      const std::string key = entry.first.Scalar();
      bool ok = false;
      for (const char* k : known) ok = ok || key == k;
      if (!ok) {
        std::string list;
        for (const char* k : known) list += std::string(list.empty() ? "" : ", ") + k;
        fail(entry.first, join(field, key), "unknown field (known: " + list + ")");
      }
    }
  }

  double number(const YAML::Node& node, const std::string& field, double min) const {
    double value = 0;
    if (!node.IsScalar() || !YAML::convert<double>::decode(node, value)) {
      fail(node, field, "expected a number, got " + describe(node));
    }
    if (value < min)
      fail(node, field, "must be at least " + std::to_string(static_cast<long>(min)));
    return value;
  }

  int integer(const YAML::Node& node, const std::string& field, int min) const {
    int value = 0;
    if (!node.IsScalar() || !YAML::convert<int>::decode(node, value)) {
      fail(node, field, "expected an integer, got " + describe(node));
    }
    if (value < min) fail(node, field, "must be at least " + std::to_string(min));
    return value;
  }

  std::string text(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar() || node.Scalar().empty()) {
      fail(node, field, "expected a non-empty string, got " + describe(node));
    }
    return node.Scalar();
  }

  // A required child of `map`; a missing one is reported at the map's line.
  YAML::Node need(const YAML::Node& map, const std::string& parent, const char* key) const {
    YAML::Node child = map[key];
    if (!child) fail(map, join(parent, key), "missing");
    return child;
  }

  GenericResources resources(const YAML::Node& node, const std::string& field) const {
    if (!node.IsMap()) fail(node, field, "expected a map of resource name to amount");
    GenericResources out;
    for (const auto& entry : node) {
      const std::string name = entry.first.Scalar();
      out[name] = number(entry.second, join(field, name), 0);
    }
    return out;
  }

  static std::string join(const std::string& parent, const std::string& key) {
    return parent.empty() ? key : parent + "." + key;
  }

 private:
  static std::string describe(const YAML::Node& node) {
    if (node.IsScalar()) return "'" + node.Scalar() + "'";
    if (node.IsSequence()) return "a list";
    if (node.IsMap()) return "a map";
    return "nothing";
  }

  std::string origin_;
};

std::string index_field(const std::string& parent, std::size_t i) {
  return parent + "[" + std::to_string(i) + "]";
}

std::vector<int> slots(const Reader& r, const YAML::Node& node, const std::string& field) {
  std::vector<int> ports;
  if (node.IsSequence()) {
    std::set<int> seen;
    for (std::size_t i = 0; i < node.size(); ++i) {
      const int port = r.integer(node[i], index_field(field, i), 1);
      if (!seen.insert(port).second) r.fail(node[i], index_field(field, i), "port listed twice");
      ports.push_back(port);
    }
  } else {
    const int count = r.integer(node, field, 0);
    if (count > 65536 - kFirstSlotPort) {
      r.fail(node, field,
             "ports from " + std::to_string(kFirstSlotPort) + " end at 65535: at most " +
                 std::to_string(65536 - kFirstSlotPort) + " slots");
    }
    for (int i = 0; i < count; ++i) ports.push_back(kFirstSlotPort + i);
  }
  return ports;
}

// Fills `node` from `map`'s capacity fields (memory_mb, cpu, slots, resources).
void capacities(const Reader& r, const YAML::Node& map, const std::string& field, NodeSpec& node) {
  if (map["memory_mb"]) node.memory_mb = r.number(map["memory_mb"], field + ".memory_mb", 0);
  if (map["cpu"]) node.cpu = r.number(map["cpu"], field + ".cpu", 0);
  if (map["slots"]) node.ports = slots(r, map["slots"], field + ".slots");
  if (map["resources"]) node.generic = r.resources(map["resources"], field + ".resources");
}

// Fails at `at` unless a cluster of `nodes` nodes and `slots` slots is within bounds.
void check_size(const Reader& r, const YAML::Node& at, const std::string& field, std::size_t nodes,
                std::size_t slots) {
  if (nodes > kMaxNodes || slots > kMaxSlots) {
    r.fail(at, field,
           "a cluster has at most " + std::to_string(kMaxNodes) + " nodes and " +
               std::to_string(kMaxSlots) + " worker slots");
  }
}

Cluster read_cluster(const Reader& r, const YAML::Node& root) {
  r.only(root, "", {"defaults", "racks"});
  NodeSpec defaults;
  defaults.ports = {kFirstSlotPort, kFirstSlotPort + 1, kFirstSlotPort + 2, kFirstSlotPort + 3};
  if (YAML::Node d = root["defaults"]) {
    r.only(d, "defaults", {"memory_mb", "cpu", "slots", "resources"});
    capacities(r, d, "defaults", defaults);
  }
  const YAML::Node racks = r.need(root, "", "racks");
  if (!racks.IsSequence()) r.fail(racks, "racks", "expected a list of racks");
  if (racks.size() == 0) r.fail(racks, "racks", "is empty: a cluster needs at least one rack");
  Cluster cluster;
  std::size_t slots = 0;
  std::set<std::string> ids;
  for (std::size_t i = 0; i < racks.size(); ++i) {
    const std::string rf = index_field("racks", i);
    const YAML::Node rack = racks[i];
    r.only(rack, rf, {"name", "nodes"});
    const RackId rack_id(r.text(r.need(rack, rf, "name"), rf + ".name"));
    const YAML::Node nodes = r.need(rack, rf, "nodes");
    if (nodes.IsScalar()) {  // a count: generated nodes with the defaults
      const int count = r.integer(nodes, rf + ".nodes", 1);
      slots += static_cast<std::size_t>(count) * defaults.ports.size();
      check_size(r, nodes, rf + ".nodes", cluster.nodes.size() + count, slots);
      for (int k = 1; k <= count; ++k) {
        NodeSpec node = defaults;
        node.id = NodeId(rack_id.value() + "-n" + std::to_string(k));
        node.rack = rack_id;
        if (!ids.insert(node.id.value()).second) {
          r.fail(nodes, rf + ".nodes", "node '" + node.id.value() + "' is listed twice");
        }
        cluster.nodes.push_back(std::move(node));
      }
      continue;
    }
    if (!nodes.IsSequence()) r.fail(nodes, rf + ".nodes", "expected a list of nodes or a count");
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      const std::string nf = index_field(rf + ".nodes", k);
      const YAML::Node n = nodes[k];
      r.only(n, nf, {"id", "host", "memory_mb", "cpu", "slots", "resources"});
      NodeSpec node = defaults;
      node.id = NodeId(r.text(r.need(n, nf, "id"), nf + ".id"));
      if (!ids.insert(node.id.value()).second) {
        r.fail(n["id"], nf + ".id", "node '" + node.id.value() + "' is listed twice");
      }
      if (n["host"]) node.host = r.text(n["host"], nf + ".host");
      node.rack = rack_id;
      capacities(r, n, nf, node);
      slots += node.ports.size();
      check_size(r, n, nf, cluster.nodes.size() + 1, slots);
      cluster.nodes.push_back(std::move(node));
    }
  }
  return cluster;
}

void read_config(const Reader& r, const YAML::Node& config, TopologyRequest& request) {
  if (!config.IsMap()) r.fail(config, "config", "expected a map");
  for (const auto& entry : config) {
    const std::string key = entry.first.Scalar();
    const std::string f = "config." + key;
    const YAML::Node v = entry.second;
    if (key == "topology.workers") {
      request.workers = r.integer(v, f, 1);
    } else if (key == "topology.worker.max.heap.size.mb") {
      request.worker_max_heap_mb = r.number(v, f, 1);
    } else if (key == "topology.priority") {
      request.priority = r.integer(v, f, 0);
    } else if (key == "topology.acker.executors") {
      if (v.IsNull()) {
        request.acker_executors.reset();
      } else {
        request.acker_executors = r.integer(v, f, 0);
      }
    } else if (key == "topology.acker.resources.onheap.memory.mb") {
      request.acker_onheap_mb = r.number(v, f, 0);
    } else if (key == "topology.acker.cpu.pcore.percent") {
      request.acker_cpu = r.number(v, f, 0);
    } else if (key == "topology.scheduler.strategy") {
      const auto strategy = parse_strategy(r.text(v, f));
      if (!strategy) {
        r.fail(v, f, "unknown strategy '" + v.Scalar() + "' (resource-aware, round-robin)");
      }
      request.strategy = *strategy;
    } else if (key == "topology.scheduler.improve.max.evaluations") {
      request.improve_max_evaluations = static_cast<std::uint64_t>(r.integer(v, f, 0));
    } else if (key == "topology.scheduler.exact.max.executors") {
      request.exact_max_executors = r.integer(v, f, 0);
    } else if (key.rfind("topology.", 0) != 0) {
      r.fail(entry.first, f, "unknown config key (topology config keys start with 'topology.')");
    }
  }
}

ComponentSpec read_component(const Reader& r, const YAML::Node& c, const std::string& cf) {
  r.only(c, cf,
         {"name", "type", "parallelism", "tasks", "onheap_mb", "offheap_mb", "cpu", "resources",
          "inputs"});
  ComponentSpec spec;
  spec.name = r.text(r.need(c, cf, "name"), cf + ".name");
  if (c["type"]) {
    const std::string type = r.text(c["type"], cf + ".type");
    if (type != "spout" && type != "bolt") {
      r.fail(c["type"], cf + ".type", "expected 'spout' or 'bolt', got '" + type + "'");
    }
    spec.is_spout = type == "spout";
  }
  if (c["parallelism"]) spec.parallelism = r.integer(c["parallelism"], cf + ".parallelism", 1);
  if (c["tasks"]) spec.tasks = r.integer(c["tasks"], cf + ".tasks", 1);
  if (spec.tasks > 0 && spec.tasks < spec.parallelism) {
    r.fail(c["tasks"], cf + ".tasks",
           "fewer tasks than parallelism (" + std::to_string(spec.parallelism) + ")");
  }
  if (c["onheap_mb"]) spec.onheap_mb = r.number(c["onheap_mb"], cf + ".onheap_mb", 0);
  if (c["offheap_mb"]) spec.offheap_mb = r.number(c["offheap_mb"], cf + ".offheap_mb", 0);
  if (c["cpu"]) spec.cpu = r.number(c["cpu"], cf + ".cpu", 0);
  if (c["resources"]) spec.generic = r.resources(c["resources"], cf + ".resources");
  return spec;
}

TopologyRequest read_topology(const Reader& r, const YAML::Node& root) {
  r.only(root, "", {"name", "config", "components"});
  TopologyRequest request;
  request.id = TopologyId(r.text(r.need(root, "", "name"), "name"));
  if (root["config"]) read_config(r, root["config"], request);
  const YAML::Node components = r.need(root, "", "components");
  if (!components.IsSequence()) r.fail(components, "components", "expected a list of components");
  if (components.size() == 0) {
    r.fail(components, "components", "is empty: a topology needs at least one component");
  }
  std::set<std::string> names;
  long tasks = 0;
  for (std::size_t i = 0; i < components.size(); ++i) {
    const std::string cf = index_field("components", i);
    ComponentSpec spec = read_component(r, components[i], cf);
    if (!names.insert(spec.name).second) {
      r.fail(components[i]["name"], cf + ".name", "component '" + spec.name + "' declared twice");
    }
    tasks += std::max(spec.tasks, spec.parallelism);
    if (tasks > kMaxTasks) {
      r.fail(components[i], cf, "a topology has at most " + std::to_string(kMaxTasks) + " tasks");
    }
    add_component(request, spec);
  }
  for (std::size_t i = 0; i < components.size(); ++i) {
    const std::string cf = index_field("components", i);
    const YAML::Node inputs = components[i]["inputs"];
    if (!inputs) continue;
    if (!inputs.IsSequence()) r.fail(inputs, cf + ".inputs", "expected a list of component names");
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const std::string from = r.text(inputs[k], index_field(cf + ".inputs", k));
      if (!names.count(from)) {
        r.fail(inputs[k], index_field(cf + ".inputs", k), "no component '" + from + "'");
      }
      request.edges.push_back(Edge{from, request.components[i].name});
    }
  }
  bool spout = false;
  for (const ComponentSpec& c : request.components) spout = spout || c.is_spout;
  if (!spout) r.fail(components, "components", "no component has type 'spout'");
  return request;
}

template <typename T, typename Read>
Result<T> parse(const std::string& text, const std::string& origin, Read read) {
  const Reader reader(origin);
  try {
    const YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return Error{origin + ":1: expected a map at the top level"};
    return read(reader, root);
  } catch (const LoadError& e) {
    return Error{e.message};
  } catch (const YAML::Exception& e) {
    return Error{origin + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg};
  }
}

Result<std::string> slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{path + ": cannot read the file"};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

Result<Cluster> parse_cluster(const std::string& text, const std::string& origin) {
  return parse<Cluster>(text, origin, read_cluster);
}

Result<Cluster> load_cluster_file(const std::string& path) {
  Result<std::string> text = slurp(path);
  if (!text) return text.error();
  return parse_cluster(text.value(), path);
}

Result<TopologyRequest> parse_topology(const std::string& text, const std::string& origin) {
  return parse<TopologyRequest>(text, origin, read_topology);
}

Result<TopologyRequest> load_topology_file(const std::string& path) {
  Result<std::string> text = slurp(path);
  if (!text) return text.error();
  return parse_topology(text.value(), path);
}

}  // namespace rstorm::scheduler
