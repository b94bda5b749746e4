// Loading rstorm's layered configuration with yaml-cpp: the compiled-in
// conf/defaults.yaml < an rstorm.yaml given by path < `-c key=value` command
// line overrides < a topology's own config.
//
// Each entry's origin is "<file>:<line>" (or "command line"), so a getter's
// ConfigError names where a bad value came from.
//
// Every layer is checked with the config schema's validator
// (rstorm/config_schema.hpp): a known key must have its type and range, a near
// miss of a known key is a typo, an unknown storm., nimbus., supervisor. or
// worker. key is rejected; any other key (a user's topology.my.setting) is
// accepted, as Apache Storm accepts arbitrary topology config.
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

// The schema's verdict on every key of `layer` as a Status: kInvalidArgument
// with every problem, joined by "; ".
Status check_config(const Config& layer);

// `-c key=value` arguments as one checked layer with origin "command line",
// later arguments winning. `rstorm local` and every command that loads a
// config (load_config) read their overrides with this, so both accept and
// reject the same arguments.
Result<Config> parse_overrides(const std::vector<std::string>& args);

// The rstorm.yaml to use when none is named (`--config`), as Storm looks for
// storm.yaml; the first that exists wins:
//  1. $RSTORM_CONF_DIR/rstorm.yaml. When RSTORM_CONF_DIR is set the file must
//     be there: its absence is an error that names it.
//  2. ~/.rstorm/rstorm.yaml
//  3. the installed one: etc/rstorm/rstorm.yaml of the prefix the running
//     binary is installed in (found from the binary's own path, so an install
//     can be moved);
//  4. /etc/rstorm/rstorm.yaml (the Debian package's).
// nullopt when there is none (the built-in defaults alone apply).
Result<std::optional<std::filesystem::path>> find_config_file();

struct ConfigLoadOptions {
  // An rstorm.yaml to layer over the defaults. Default: none, then
  // find_config_file() unless `search` is false.
  std::optional<std::filesystem::path> config_file;
  // `-c key=value` arguments, applied in order. Default: none.
  std::vector<std::string> overrides;
  // Look for an rstorm.yaml with find_config_file() when config_file is unset.
  bool search = true;
};

// defaults < config_file (or the one find_config_file() finds) < overrides,
// each layer checked.
Result<Config> load_config(const ConfigLoadOptions& options);

// A topology's config over a daemon's: the topology's keys win. The topology
// layer is checked too.
Result<Config> with_topology_config(const Config& base, const Config& topology);

}  // namespace rstorm
