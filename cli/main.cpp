// rstorm: the command line. Sub-commands register themselves (command.hpp).
#include <algorithm>
#include <iostream>

#include "command.hpp"

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
  int exit_code = rstorm::cli::kExitOk;
  for (const auto& [name, setup] : rstorm::cli::registered_commands()) setup(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : rstorm::cli::kExitUsage;
  }
  return exit_code;
}
