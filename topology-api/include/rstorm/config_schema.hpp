// The config schema: every key rstorm reads, declared once with its type,
// range, whether null ("not set": the reader's built-in behaviour applies) is
// allowed, and one line on what it does. conf/defaults.yaml gives the default
// values; a test holds the two to the same set of keys.
//
// validate_config() is the one validator behind `rstorm local`, `rstorm
// submit`, nimbus (the config a client submits) and the daemons' config
// loading, so that they accept and reject exactly the same things:
//  - a known key must hold a value of its type and in its range;
//  - an unknown key within two edits of a known one is a typo and rejected
//    with "did you mean", topology.* keys included;
//  - any other unknown key under storm., nimbus., supervisor. or worker. is
//    rejected (rstorm reads none);
//  - any other key (a user's topology.my.setting or my.app.setting) is
//    accepted, as Apache Storm accepts arbitrary topology config.
// Each message names the key, its value, where it came from (the entry's
// origin: "command line", "rstorm.yaml:12") and what is expected.
//
// Free functions over a constant table: thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rstorm/config.hpp"
#include "rstorm/status.hpp"

namespace rstorm {

enum class ConfigType { kBool, kInt, kNumber, kString, kStringList, kIntList };

struct ConfigKeySpec {
  std::string_view name{};
  ConfigType type = ConfigType::kString;
  // Inclusive bounds of the value (of each element, for a list of integers).
  // Default: unbounded.
  std::optional<double> min{};
  std::optional<double> max{};
  // Whether null is allowed; it means "not set". Default: no.
  bool nullable = false;
  // For a string: the values allowed. Default: empty, any string.
  std::vector<std::string_view> one_of{};
  std::string_view description{};
};

// Every key rstorm reads, sorted by name.
const std::vector<ConfigKeySpec>& config_schema();

// The key's spec, or nullptr when rstorm does not read it.
const ConfigKeySpec* find_config_key(std::string_view key);

// What `spec` accepts, as error messages say it: "an integer >= 1 or null",
// "a list of integers between 1 and 65535", "one of "resource-aware", "round-robin"".
std::string describe_expected(const ConfigKeySpec& spec);

// Optimal string alignment distance between two names (a transposition
// counts as one edit): how "did you mean" finds a near miss.
std::size_t edit_distance(std::string_view a, std::string_view b);

// True for a key under storm., nimbus., supervisor. or worker.: the daemons'
// namespaces, where only known keys are allowed.
bool is_daemon_key(std::string_view key);

// Checks every entry of `config` against the schema (rules above); one
// message per problem, e.g. `topology.max.spout.pending: -5 (command line) is
// out of range: expected an integer >= 1 or null`.
api::Status validate_config(const Config& config);

}  // namespace rstorm
