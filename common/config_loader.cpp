#include "common/config_loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

namespace rstorm {
namespace {

constexpr std::array<std::string_view, 4> kDaemonNamespaces = {"storm.", "nimbus.", "supervisor.",
                                                               "worker."};

std::string at(std::string_view source, const YAML::Mark& mark) {
  return std::string(source) + ":" + std::to_string(mark.line + 1);
}

// Converts one YAML node to a ConfigValue; plain scalars are classified like
// `-c` values, quoted scalars stay strings.
Result<ConfigValue> to_value(const YAML::Node& node, std::string_view key,
                             std::string_view source) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return ConfigValue(nullptr);
    case YAML::NodeType::Scalar:
      if (node.Tag() == "!") return ConfigValue(node.Scalar());
      try {
        return parse_config_override("x=" + node.Scalar()).second;
      } catch (const ConfigError&) {
        return Status(ErrorCode::kInvalidArgument,
                      "config key '" + std::string(key) + "' (" + at(source, node.Mark()) +
                          ") has integer " + node.Scalar() + " that does not fit in 64 bits");
      }
    case YAML::NodeType::Sequence: {
      ConfigValue::List items;
      for (const auto& item : node) {
        auto v = to_value(item, key, source);
        if (!v) return v.status();
        items.push_back(std::move(*v));
      }
      return ConfigValue(std::move(items));
    }
    case YAML::NodeType::Map:
      break;
  }
  return Status(ErrorCode::kInvalidArgument,
                "config key '" + std::string(key) + "' (" + at(source, node.Mark()) +
                    ") is a map; config values are scalars or lists");
}

bool in_daemon_namespace(std::string_view key) {
  return std::any_of(kDaemonNamespaces.begin(), kDaemonNamespaces.end(),
                     [&](std::string_view ns) { return key.starts_with(ns); });
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string closest_key(const Config& defaults, std::string_view key) {
  std::string best;
  std::size_t best_distance = 4;  // suggest only near misses
  for (const auto& [known, entry] : defaults.entries()) {
    std::size_t d = edit_distance(key, known);
    if (d < best_distance) {
      best_distance = d;
      best = known;
    }
  }
  return best;
}

// True when `v` may stand where `def` is the default.
bool same_type(const ConfigValue& def, const ConfigValue& v) {
  if (def.is_null()) return true;
  if (def.is_double()) return v.is_double() || v.is_int();
  if (def.type_name() != v.type_name()) return false;
  if (!def.is_list() || def.as_list().empty()) return true;
  const ConfigValue& element = def.as_list().front();
  return std::all_of(v.as_list().begin(), v.as_list().end(),
                     [&](const ConfigValue& item) { return same_type(element, item); });
}

std::string with_article(std::string_view type) {
  if (type == "null") return "null";
  if (type == "integer") return "an integer";
  return "a " + std::string(type);
}

std::string describe_type(const ConfigValue& v) {
  std::string out = with_article(v.type_name());
  if (v.is_list() && !v.as_list().empty()) out += " of " + std::string(v.as_list()[0].type_name());
  return out;
}

}  // namespace

const Config& default_config() {
  static const Config defaults = [] {
    auto parsed = parse_yaml_config(embedded_defaults_yaml(), "defaults.yaml");
    if (!parsed) {
      std::cerr << "rstorm: built-in defaults.yaml is broken: " << parsed.status().to_string()
                << "\n";
      std::abort();
    }
    return std::move(*parsed);
  }();
  return defaults;
}

Result<Config> parse_yaml_config(std::string_view yaml_text, std::string_view source_name) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return Status(ErrorCode::kInvalidArgument, std::string(source_name) + ":" +
                                                   std::to_string(e.mark.line + 1) +
                                                   ": invalid YAML: " + e.msg);
  }
  Config config;
  if (root.IsNull() || !root.IsDefined()) return config;
  if (!root.IsMap()) {
    return Status(ErrorCode::kInvalidArgument,
                  at(source_name, root.Mark()) +
                      ": expected a map of config keys (key: value), found a " +
                      (root.IsSequence() ? "list" : "scalar"));
  }
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (!it->first.IsScalar()) {
      return Status(ErrorCode::kInvalidArgument,
                    at(source_name, it->first.Mark()) + ": a config key must be a plain string");
    }
    const std::string key = it->first.Scalar();
    auto value = to_value(it->second, key, source_name);
    if (!value) return value.status();
    config.set(key, std::move(*value), at(source_name, it->first.Mark()));
  }
  return config;
}

Result<Config> read_yaml_config_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status(ErrorCode::kNotFound, "cannot read config file " + path.string() + ": " +
                                            (std::filesystem::exists(path)
                                                 ? "permission denied or not a regular file"
                                                 : "no such file"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_yaml_config(text.str(), path.string());
}

Status check_against_defaults(const Config& defaults, const Config& layer) {
  for (const auto& [key, entry] : layer.entries()) {
    const Config::Entry* def = defaults.find(key);
    if (def == nullptr) {
      if (!in_daemon_namespace(key)) continue;
      std::string msg = "unknown config key '" + key + "' (from " + entry.origin + ")";
      std::string suggestion = closest_key(defaults, key);
      if (!suggestion.empty()) msg += "; did you mean '" + suggestion + "'?";
      msg += " Keys under storm., nimbus., supervisor. and worker. must be ones in defaults.yaml";
      return Status(ErrorCode::kInvalidArgument, msg);
    }
    if (!same_type(def->value, entry.value)) {
      return Status(ErrorCode::kInvalidArgument,
                    "config key '" + key + "' (from " + entry.origin + ") is " +
                        with_article(entry.value.type_name()) +
                        (entry.value.is_null() ? "" : " (" + entry.value.to_string() + ")") +
                        ", expected " + describe_type(def->value) + " like its default " +
                        def->value.to_string());
    }
  }
  return Status::ok();
}

Result<Config> load_config(const ConfigLoadOptions& options) {
  const Config& defaults = default_config();
  Config config = defaults;
  if (options.config_file) {
    auto file = read_yaml_config_file(*options.config_file);
    if (!file) return file.status();
    if (Status s = check_against_defaults(defaults, *file); !s) return s;
    config.merge(*file);
  }
  Config command_line;
  for (const auto& arg : options.overrides) {
    try {
      auto [key, value] = parse_config_override(arg);
      command_line.set(std::move(key), std::move(value), "command line");
    } catch (const ConfigError& e) {
      return Status(ErrorCode::kInvalidArgument, e.what());
    }
  }
  if (Status s = check_against_defaults(defaults, command_line); !s) return s;
  config.merge(command_line);
  return config;
}

Result<Config> with_topology_config(const Config& base, const Config& topology) {
  if (Status s = check_against_defaults(default_config(), topology); !s) return s;
  Config merged = base;
  merged.merge(topology);
  return merged;
}

}  // namespace rstorm
