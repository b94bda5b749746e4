#include "common/config_loader.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "rstorm/config_schema.hpp"

namespace rstorm {
namespace {

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

Status check_config(const Config& layer) {
  api::Status verdict = validate_config(layer);
  if (verdict) return Status::ok();
  return Status(ErrorCode::kInvalidArgument, verdict.message());
}

Result<Config> parse_overrides(const std::vector<std::string>& args) {
  Config command_line;
  for (const auto& arg : args) {
    try {
      auto [key, value] = parse_config_override(arg);
      command_line.set(std::move(key), std::move(value), "command line");
    } catch (const ConfigError& e) {
      return Status(ErrorCode::kInvalidArgument, e.what());
    }
  }
  if (Status s = check_config(command_line); !s) return s;
  return command_line;
}

Result<std::optional<std::filesystem::path>> find_config_file() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (const char* dir = std::getenv("RSTORM_CONF_DIR"); dir != nullptr && *dir != '\0') {
    const fs::path file = fs::path(dir) / "rstorm.yaml";
    if (!fs::is_regular_file(file, ec)) {
      return Status(ErrorCode::kNotFound, "RSTORM_CONF_DIR is " + std::string(dir) + " but there is no " +
                                              file.string() + " (unset RSTORM_CONF_DIR, or create the file)");
    }
    return std::optional<fs::path>(file);
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    const fs::path file = fs::path(home) / ".rstorm" / "rstorm.yaml";
    if (fs::is_regular_file(file, ec)) return std::optional<fs::path>(file);
  }
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path file = (exe.parent_path() / RSTORM_BIN_TO_CONF / "rstorm.yaml").lexically_normal();
    if (fs::is_regular_file(file, ec)) return std::optional<fs::path>(file);
  }
  // The Debian package's /usr/bin binaries: their prefix's etc is /etc.
  const fs::path system_file = "/etc/rstorm/rstorm.yaml";
  if (fs::is_regular_file(system_file, ec)) return std::optional<fs::path>(system_file);
  return std::optional<fs::path>();
}

Result<Config> load_config(const ConfigLoadOptions& options) {
  Config config = default_config();
  std::optional<std::filesystem::path> config_file = options.config_file;
  if (!config_file && options.search) {
    auto found = find_config_file();
    if (!found) return found.status();
    config_file = *found;
  }
  if (config_file) {
    auto file = read_yaml_config_file(*config_file);
    if (!file) return file.status();
    if (Status s = check_config(*file); !s) return s;
    config.merge(*file);
  }
  auto command_line = parse_overrides(options.overrides);
  if (!command_line) return command_line.status();
  config.merge(*command_line);
  return config;
}

Result<Config> with_topology_config(const Config& base, const Config& topology) {
  if (Status s = check_config(topology); !s) return s;
  Config merged = base;
  merged.merge(topology);
  return merged;
}

}  // namespace rstorm
