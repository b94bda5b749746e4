#include "common/thrift/codec.hpp"

#include "common/config_loader.hpp"

namespace rstorm {

std::map<std::string, thrift::ConfigEntry> config_to_thrift(const Config& config) {
  std::map<std::string, thrift::ConfigEntry> out;
  for (const auto& [key, entry] : config.entries()) {
    thrift::ConfigEntry e;
    e.value_yaml = entry.value.to_string();
    e.origin = entry.origin;
    out.emplace(key, std::move(e));
  }
  return out;
}

std::int64_t config_int_or(const std::map<std::string, thrift::ConfigEntry>& entries,
                           std::string_view key, std::int64_t fallback) {
  auto it = entries.find(std::string(key));
  if (it == entries.end()) return fallback;
  auto config = config_from_thrift({{it->first, it->second}});
  if (!config) return fallback;
  try {
    const Config::Entry* e = config->find(key);
    if (e == nullptr || e->value.is_null()) return fallback;
    return config->get_int(key);
  } catch (const ConfigError&) {
    return fallback;
  }
}

Result<Config> config_from_thrift(const std::map<std::string, thrift::ConfigEntry>& entries) {
  Config config;
  for (const auto& [key, entry] : entries) {
    try {
      auto [ignored, value] = parse_config_override("x=" + entry.value_yaml);
      config.set(key, std::move(value), entry.origin);
    } catch (const ConfigError& e) {
      return Status(ErrorCode::kInvalidArgument,
                    "config key '" + key + "' (from " + entry.origin + ") has an unreadable value " +
                        entry.value_yaml + ": " + e.what());
    }
  }
  // Where nimbus first reads what a client submits, and where a worker reads
  // its spec: the same schema as `rstorm submit` and `rstorm local`.
  if (Status s = check_config(config); !s) return s;
  return config;
}

}  // namespace rstorm
