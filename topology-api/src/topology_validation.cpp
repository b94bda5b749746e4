#include "topology_validation.hpp"

#include <cmath>
#include <set>
#include <sstream>
#include <string_view>

#include "rstorm/config_schema.hpp"

namespace rstorm {
namespace {

std::string number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string stream_list(const ComponentSpec& c) {
  if (c.streams.empty()) return "none";
  std::string out;
  for (const auto& s : c.streams) {
    if (!out.empty()) out += ", ";
    out += s.id;
  }
  return out;
}

void check_id(const ComponentSpec& c, std::vector<std::string>& problems) {
  if (c.id.empty()) {
    problems.push_back("a component has an empty id");
  } else if (c.id.rfind("__", 0) == 0) {
    problems.push_back("component id '" + c.id +
                       "' is reserved: ids starting with '__' belong to the system");
  }
}

void check_counts(const ComponentSpec& c, std::vector<std::string>& problems) {
  if (c.parallelism < 1) {
    problems.push_back("component '" + c.id + "' has parallelism " +
                       std::to_string(c.parallelism) + "; it must be at least 1");
  }
  if (c.num_tasks < 1 && c.num_tasks != c.parallelism) {  // not only the parallelism's echo
    problems.push_back("component '" + c.id + "' has " + std::to_string(c.num_tasks) +
                       " tasks; it must have at least 1");
  }
}

void check_resources(const ComponentSpec& c, std::vector<std::string>& problems) {
  auto check = [&](double v, const std::string& what) {
    if (v < 0 || std::isnan(v)) {
      problems.push_back("component '" + c.id + "' asks " + number(v) + " " + what +
                         "; resources cannot be negative");
    }
  };
  check(c.resources.onheap_mb, "MB of on-heap memory");
  check(c.resources.offheap_mb, "MB of off-heap memory");
  check(c.resources.cpu_points, "CPU points");
  for (const auto& [name, amount] : c.resources.generic) check(amount, "of resource '" + name + "'");
}

void check_input(const TopologySpec& spec, const ComponentSpec& c, const InputSpec& in,
                 std::vector<std::string>& problems) {
  const std::string who = "component '" + c.id + "'";
  const ComponentSpec* source = spec.find(in.component);
  if (source == nullptr) {
    problems.push_back(who + " subscribes to unknown component '" + in.component + "'");
    return;
  }
  const StreamSpec* stream = source->find_stream(in.stream);
  if (stream == nullptr) {
    problems.push_back(who + " subscribes to stream '" + in.stream + "' of component '" +
                       in.component + "', which declares no such stream (streams: " +
                       stream_list(*source) + ")");
    return;
  }
  const std::string what = "stream '" + in.stream + "' of component '" + in.component + "'";
  const GroupingType type = in.grouping.type;
  if (type == GroupingType::kDirect && !stream->direct) {
    problems.push_back(who + " uses direct grouping on " + what +
                       ", which is not declared direct");
  } else if (type != GroupingType::kDirect && stream->direct) {
    problems.push_back(who + " uses " + std::string(grouping_name(type)) + " grouping on " +
                       what + ", which is declared direct and takes only direct grouping");
  }
  if (type != GroupingType::kFields) return;
  if (in.grouping.fields.empty()) {
    problems.push_back(who + " groups " + what + " by an empty field list");
  }
  for (const auto& field : in.grouping.fields) {
    if (!stream->fields.contains(field)) {
      problems.push_back(who + " groups " + what + " by field '" + field +
                         "', which the stream does not declare (fields: " +
                         stream->fields.to_string() + ")");
    }
  }
}

// Stream ids and field names: what Storm refuses too. Ids starting with
// "__" are the system's (its tick stream is "__tick"), and a field name
// given twice could not be read by name.
void check_streams(const ComponentSpec& c, std::vector<std::string>& problems) {
  const std::string who = "component '" + c.id + "'";
  for (const StreamSpec& stream : c.streams) {
    if (stream.id.empty()) {
      problems.push_back(who + " declares a stream with an empty id");
    } else if (stream.id.rfind("__", 0) == 0) {
      problems.push_back(who + " declares stream '" + stream.id +
                         "': stream ids starting with '__' belong to the system");
    }
    std::set<std::string_view> names;
    for (const std::string& field : stream.fields) {
      if (field.empty()) {
        problems.push_back(who + " declares an empty field name in stream '" + stream.id + "'");
      } else if (!names.insert(field).second) {
        problems.push_back(who + " declares field '" + field + "' twice in stream '" +
                           stream.id + "' (fields: " + stream.fields.to_string() + ")");
      }
    }
  }
}

// The same stream subscribed twice would deliver each tuple once per
// subscription (Storm keeps the last grouping given for it).
void check_duplicate_inputs(const ComponentSpec& c, std::vector<std::string>& problems) {
  std::set<std::pair<std::string_view, std::string_view>> seen;
  for (const InputSpec& in : c.inputs) {
    if (!seen.emplace(in.component, in.stream).second) {
      problems.push_back("component '" + c.id + "' subscribes to stream '" + in.stream +
                         "' of component '" + in.component +
                         "' twice: each tuple would arrive once per subscription");
    }
  }
}

// The component's own config, against the schema, as nimbus checks it. Its
// resources are check_resources' (in its words).
void check_config(const ComponentSpec& c, std::vector<std::string>& problems) {
  Config config = c.config;
  for (std::string_view key : {keys::kTopologyComponentOnheapMb, keys::kTopologyComponentOffheapMb,
                               keys::kTopologyComponentCpuPcorePercent}) {
    config.erase(key);
  }
  if (api::Status s = validate_config(config); !s.is_ok()) {
    problems.push_back("component '" + c.id + "': " + s.message());
  }
}

}  // namespace

void validate_topology(const TopologySpec& spec, std::vector<std::string>& problems) {
  bool has_spout = false;
  for (const auto& c : spec.components) {
    has_spout = has_spout || c.kind == ComponentKind::kSpout;
    check_id(c, problems);
    check_counts(c, problems);
    check_resources(c, problems);
    check_streams(c, problems);
    check_duplicate_inputs(c, problems);
    check_config(c, problems);
    for (const auto& in : c.inputs) check_input(spec, c, in, problems);
  }
  if (!has_spout) problems.push_back("the topology has no spout");
}

}  // namespace rstorm
