// rstorm: the command line. Sub-commands register themselves (command.hpp).
#include <algorithm>
#include <charconv>
#include <iostream>

#include <thrift/TOutput.h>

#include "command.hpp"
#include "rstorm/config_schema.hpp"
#include "rstorm/topology_library.hpp"

namespace rstorm::cli {
namespace {
std::vector<std::pair<std::string, CommandSetup>>& registry() {
  static std::vector<std::pair<std::string, CommandSetup>> commands;
  return commands;
}
}  // namespace

CommandRegistration::CommandRegistration(std::string name, CommandSetup setup) {
  registry().emplace_back(std::move(name), std::move(setup));
}

CLI::Validator at_least(long long min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        long long value = 0;
        const char* end = text.data() + text.size();
        auto [at, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc() || at != end || value < min) {
          return "must be a whole number of at least " + std::to_string(min) + ", not '" + text +
                 "'";
        }
        return {};
      },
      "INT>=" + std::to_string(min));
}

std::string version_text() {
  return std::string("rstorm ") + RSTORM_VERSION + " (commit " + RSTORM_COMMIT + ", topology API " +
         std::to_string(kApiVersion) + ")";
}

const std::vector<std::pair<std::string, CommandSetup>>& registered_commands() {
  auto& commands = registry();
  std::sort(commands.begin(), commands.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return commands;
}

}  // namespace rstorm::cli

int main(int argc, char** argv) {
  CLI::App app{"rstorm: a resource-aware distributed stream processing engine"};
  app.require_subcommand(1);
  app.set_version_flag("--version", rstorm::cli::version_text());
  // Thrift prints its own lines ("Thrift: ... TSocket::open() connect()...")
  // to stderr; the commands say what failed in their own words.
  apache::thrift::GlobalOutput.setOutputFunction([](const char*) {});
  int exit_code = rstorm::cli::kExitOk;
  for (const auto& [name, setup] : rstorm::cli::registered_commands()) setup(app, exit_code);
  // An unknown verb: name it and the nearest one, not CLI11's "arguments
  // were not expected".
  if (argc > 1 && argv[1][0] != '-') {
    const std::string_view verb = argv[1];
    std::string_view nearest;
    std::size_t best = 3;
    bool known = false;
    for (const auto& [name, setup] : rstorm::cli::registered_commands()) {
      known = known || name == verb;
      const std::size_t d = rstorm::edit_distance(verb, name);
      if (d < best) {
        best = d;
        nearest = name;
      }
    }
    if (!known) {
      std::cerr << "rstorm: unknown command '" << verb << "'";
      if (!nearest.empty()) std::cerr << "; did you mean '" << nearest << "'?";
      std::cerr << " (rstorm --help lists the commands)\n";
      return rstorm::cli::kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : rstorm::cli::kExitUsage;
  }
  return exit_code;
}
