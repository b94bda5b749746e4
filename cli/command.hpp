// The `rstorm` command line: each sub-command lives in its own <name>_command.cpp
// and registers itself with one RSTORM_CLI_COMMAND(...) at namespace scope. The
// files are compiled straight into the executable, so every registration runs.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace rstorm::cli {

// Exit codes scripts can rely on.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // the request failed (e.g. topology unschedulable)
inline constexpr int kExitUsage = 2;        // bad arguments or bad input files
inline constexpr int kExitUnavailable = 3;  // a service (nimbus, ZooKeeper) could not be reached

// Adds a sub-command to `app`. The callback it installs sets `exit_code`.
using CommandSetup = std::function<void(CLI::App& app, int& exit_code)>;

struct CommandRegistration {
  CommandRegistration(std::string name, CommandSetup setup);
};

// An option's check that it is a whole number of at least `min`, in words
// ("must be a whole number of at least 1, not '0'"), where CLI11's
// PositiveNumber printed its range up to DBL_MAX and refused 0 as outside
// "0.000000 to 1.797...e308".
CLI::Validator at_least(long long min);

// "rstorm 0.1.0 (commit 1a2b3c4, topology API 1)": `rstorm version`, `--version`.
std::string version_text();

// Every registered command, sorted by name.
const std::vector<std::pair<std::string, CommandSetup>>& registered_commands();

}  // namespace rstorm::cli

#define RSTORM_CLI_CONCAT_INNER(a, b) a##b
#define RSTORM_CLI_CONCAT(a, b) RSTORM_CLI_CONCAT_INNER(a, b)
#define RSTORM_CLI_COMMAND(name, setup)                                          \
  static const ::rstorm::cli::CommandRegistration RSTORM_CLI_CONCAT(kCommand_, \
                                                                    __LINE__)(name, setup)
