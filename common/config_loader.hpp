// Loading rstorm's layered configuration with yaml-cpp: the compiled-in
// conf/defaults.yaml < an rstorm.yaml given by path < `-c key=value` command
// line overrides < a topology's own config.
//
// Each entry's origin is "<file>:<line>" (or "command line"), so a getter's
// ConfigError names where a bad value came from.
//
// Key rules (checked against defaults.yaml at each layer):
//  - a key with a default must hold a value of the default's type (an integer
//    is accepted where the default is a number; any type where it is null);
//  - an unknown key in a daemon namespace (storm., nimbus., supervisor.,
//    worker.) is an error: it is almost always a typo of a real key;
//  - any other unknown key (topology.* keys of the user, my.app.setting) is
//    accepted, as Apache Storm accepts arbitrary topology config.
//
// Free functions, thread-safe (no shared state).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.hpp"
#include "rstorm/config.hpp"

namespace rstorm {

// The text of conf/defaults.yaml, embedded when the library was built, so a
// binary needs no file at run time.
std::string_view embedded_defaults_yaml();

// Parses the built-in defaults. Aborts if they do not parse: that is a build bug.
const Config& default_config();

// Parses a flat YAML map of config keys. `source_name` (a path) is used in
// origins and errors. An empty document is an empty Config.
Result<Config> parse_yaml_config(std::string_view yaml_text, std::string_view source_name);

// Reads and parses one YAML file; a missing or unreadable file names the path.
Result<Config> read_yaml_config_file(const std::filesystem::path& path);

// Checks every key of `layer` against `defaults` (see the rules above).
Status check_against_defaults(const Config& defaults, const Config& layer);

struct ConfigLoadOptions {
  // An rstorm.yaml to layer over the defaults. Default: none.
  std::optional<std::filesystem::path> config_file;
  // `-c key=value` arguments, applied in order. Default: none.
  std::vector<std::string> overrides;
};

// defaults < config_file < overrides, each layer checked.
Result<Config> load_config(const ConfigLoadOptions& options);

// A topology's config over a daemon's: the topology's keys win. The topology
// layer is checked against the defaults too.
Result<Config> with_topology_config(const Config& base, const Config& topology);

}  // namespace rstorm
