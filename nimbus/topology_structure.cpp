#include "nimbus/topology_structure.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "common/thrift/codec.hpp"
#include "scheduler/api_request.hpp"

namespace rstorm::nimbus {
namespace {

thrift::GroupingType::type grouping_to_thrift(GroupingType type) {
  switch (type) {
    case GroupingType::kShuffle:
      return thrift::GroupingType::SHUFFLE;
    case GroupingType::kFields:
      return thrift::GroupingType::FIELDS;
    case GroupingType::kAll:
      return thrift::GroupingType::ALL;
    case GroupingType::kGlobal:
      return thrift::GroupingType::GLOBAL;
    case GroupingType::kDirect:
      return thrift::GroupingType::DIRECT;
    case GroupingType::kLocalOrShuffle:
      return thrift::GroupingType::LOCAL_OR_SHUFFLE;
    case GroupingType::kNone:
      return thrift::GroupingType::NONE;
  }
  return thrift::GroupingType::SHUFFLE;
}

thrift::ComponentDef component_to_thrift(const ComponentSpec& c) {
  thrift::ComponentDef def;
  def.id = c.id;
  def.kind =
      c.kind == ComponentKind::kSpout ? thrift::ComponentKind::SPOUT : thrift::ComponentKind::BOLT;
  for (const StreamSpec& s : c.streams) {
    thrift::StreamDef stream;
    stream.name = s.id;
    stream.fields = s.fields.names();
    stream.direct = s.direct;
    def.streams.push_back(std::move(stream));
  }
  for (const InputSpec& in : c.inputs) {
    thrift::InputDef input;
    input.component = in.component;
    input.stream = in.stream;
    input.grouping.type = grouping_to_thrift(in.grouping.type);
    if (in.grouping.type == GroupingType::kFields) {
      input.grouping.__set_fields(in.grouping.fields.names());
    }
    def.inputs.push_back(std::move(input));
  }
  def.parallelism = c.parallelism;
  def.num_tasks = c.num_tasks;
  def.resources.onheap_mb = c.resources.onheap_mb;
  def.resources.offheap_mb = c.resources.offheap_mb;
  def.resources.cpu_pcore_percent = c.resources.cpu_points;
  def.resources.generic = c.resources.generic;
  def.config = config_to_thrift(c.config);
  return def;
}

void check_inputs(const thrift::ComponentDef& c,
                  const std::map<std::string, const thrift::ComponentDef*>& by_id,
                  std::vector<std::string>& problems) {
  for (const thrift::InputDef& in : c.inputs) {
    auto source = by_id.find(in.component);
    if (source == by_id.end()) {
      problems.push_back("component '" + c.id + "' reads from unknown component '" + in.component +
                         "'");
      continue;
    }
    const thrift::StreamDef* stream = nullptr;
    for (const auto& s : source->second->streams) {
      if (s.name == in.stream) stream = &s;
    }
    if (stream == nullptr) {
      problems.push_back("component '" + c.id + "' reads stream '" + in.stream + "' of '" +
                         in.component + "', which declares no such stream");
      continue;
    }
    if (in.grouping.type != thrift::GroupingType::FIELDS) continue;
    for (const std::string& field : in.grouping.fields) {
      bool declared = false;
      for (const auto& f : stream->fields) declared = declared || f == field;
      if (!declared) {
        problems.push_back("component '" + c.id + "' groups stream '" + in.stream + "' of '" +
                           in.component + "' by field '" + field + "', which it does not declare");
      }
    }
  }
}

constexpr int kMaxTasksPerComponent = 100000;

void check_resources(const thrift::ComponentDef& c, std::vector<std::string>& problems) {
  if (c.parallelism < 1) {
    problems.push_back("component '" + c.id + "' has parallelism " + std::to_string(c.parallelism) +
                       " (must be at least 1)");
  }
  if (c.num_tasks < 0) {
    problems.push_back("component '" + c.id + "' has " + std::to_string(c.num_tasks) + " tasks");
  }
  // Every executor and task becomes a scheduler entry: a count no cluster
  // could run would only exhaust nimbus's memory.
  if (c.parallelism > kMaxTasksPerComponent || c.num_tasks > kMaxTasksPerComponent) {
    problems.push_back("component '" + c.id + "' has parallelism " +
                       std::to_string(c.parallelism) + " and " + std::to_string(c.num_tasks) +
                       " tasks; at most " + std::to_string(kMaxTasksPerComponent) + " of each");
  }
  const auto& r = c.resources;
  if (r.onheap_mb < 0 || r.offheap_mb < 0 || r.cpu_pcore_percent < 0) {
    problems.push_back("component '" + c.id + "' asks for negative resources");
  }
  for (const auto& [name, amount] : r.generic) {
    if (amount < 0) problems.push_back("component '" + c.id + "' asks " + name + " < 0");
  }
}

}  // namespace

thrift::TopologyStructure structure_to_thrift(const std::string& name, const TopologySpec& spec) {
  thrift::TopologyStructure out;
  out.name = name;
  for (const ComponentSpec& c : spec.components) out.components.push_back(component_to_thrift(c));
  return out;
}

std::string topology_name_problem(const std::string& name) {
  if (name.empty()) return "a topology name cannot be empty";
  if (name.size() > kMaxTopologyNameLength) {
    return "topology name '" + name.substr(0, 40) + "...' is invalid: it has " +
           std::to_string(name.size()) + " characters, at most " +
           std::to_string(kMaxTopologyNameLength) + " are allowed";
  }
  const bool allowed = std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
  if (!allowed) return "topology name '" + name + "' is invalid: use letters, digits, '-', '_' and '.'";
  return {};
}

Status validate_structure(const thrift::TopologyStructure& structure) {
  std::vector<std::string> problems;
  std::map<std::string, const thrift::ComponentDef*> by_id;
  bool has_spout = false;
  for (const auto& c : structure.components) {
    if (c.id.empty()) problems.push_back("a component has an empty id");
    if (!by_id.emplace(c.id, &c).second)
      problems.push_back("duplicate component id '" + c.id + "'");
    has_spout = has_spout || c.kind == thrift::ComponentKind::SPOUT;
  }
  if (structure.components.empty())
    problems.push_back("the topology has no components");
  else if (!has_spout)
    problems.push_back("the topology has no spout");
  for (const auto& c : structure.components) {
    check_inputs(c, by_id, problems);
    check_resources(c, problems);
  }
  if (problems.empty()) return Status::ok();
  std::string message = "topology '" + structure.name + "': " + problems.front();
  for (std::size_t i = 1; i < problems.size(); ++i) message += "; " + problems[i];
  return Status(ErrorCode::kInvalidArgument, message);
}

Result<scheduler::TopologyRequest> request_from_structure(
    const std::string& topology_id, const thrift::TopologyStructure& structure,
    const Config& config) {
  scheduler::TopologyRequest request;
  request.id = scheduler::TopologyId(topology_id);
  for (const auto& c : structure.components) {
    scheduler::ComponentSpec spec;
    spec.name = c.id;
    spec.is_spout = c.kind == thrift::ComponentKind::SPOUT;
    spec.parallelism = c.parallelism;
    spec.tasks = c.num_tasks;
    spec.onheap_mb = c.resources.onheap_mb;
    spec.offheap_mb = c.resources.offheap_mb;
    spec.cpu = c.resources.cpu_pcore_percent;
    spec.generic =
        scheduler::GenericResources(c.resources.generic.begin(), c.resources.generic.end());
    auto own = config_from_thrift(c.config);
    if (!own) return own.status();
    try {
      spec.ticks = scheduler::gets_ticks(*own, config);
    } catch (const ConfigError& e) {
      return Status(ErrorCode::kInvalidArgument, "component '" + c.id + "': " + e.what());
    }
    scheduler::add_component(request, spec);
    for (const auto& in : c.inputs) {
      const thrift::GroupingType::type g = in.grouping.type;
      request.edges.push_back(scheduler::Edge{
          in.component, c.id, g == thrift::GroupingType::LOCAL_OR_SHUFFLE,
          g == thrift::GroupingType::GLOBAL || g == thrift::GroupingType::DIRECT});
    }
  }
  auto applied = scheduler::apply_topology_config(std::move(request), config);
  if (!applied) return Status(ErrorCode::kInvalidArgument, applied.error().message);
  return std::move(applied).value();
}

Status apply_resource_overrides(
    thrift::TopologyStructure& structure,
    const std::map<std::string, std::map<std::string, double>>& overrides) {
  thrift::TopologyStructure changed = structure;
  for (const auto& [component, resources] : overrides) {
    auto c = changed.components.begin();
    while (c != changed.components.end() && c->id != component) ++c;
    if (c == changed.components.end()) {
      return Status(ErrorCode::kInvalidArgument,
                    "topology '" + structure.name + "' has no component '" + component + "'");
    }
    for (const auto& [name, amount] : resources) {
      if (!std::isfinite(amount) || amount < 0) {
        return Status(ErrorCode::kInvalidArgument,
                      "component '" + component + "': " + name + " " + std::to_string(amount) +
                          " (an amount per executor must be 0 or more)");
      }
      if (name == "onheap.memory.mb" || name == "topology.component.resources.onheap.memory.mb") {
        c->resources.onheap_mb = amount;
      } else if (name == "offheap.memory.mb" ||
                 name == "topology.component.resources.offheap.memory.mb") {
        c->resources.offheap_mb = amount;
      } else if (name == "cpu.pcore.percent" || name == "topology.component.cpu.pcore.percent") {
        c->resources.cpu_pcore_percent = amount;
      } else if (name.empty()) {
        return Status(ErrorCode::kInvalidArgument,
                      "component '" + component + "': a resource has an empty name");
      } else {
        c->resources.generic[name] = amount;
      }
    }
  }
  structure = std::move(changed);
  return Status::ok();
}

int executor_count(const thrift::TopologyStructure& structure) {
  int n = 0;
  for (const auto& c : structure.components) n += c.parallelism;
  return n;
}

int task_count(const thrift::TopologyStructure& structure) {
  int n = 0;
  for (const auto& c : structure.components) n += c.num_tasks > 0 ? c.num_tasks : c.parallelism;
  return n;
}

}  // namespace rstorm::nimbus
