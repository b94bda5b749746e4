// `rstorm version`: what --version prints, as a verb too.
#include <iostream>

#include "command.hpp"

RSTORM_CLI_COMMAND("version", [](CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("version", "Print the version, commit and topology API version");
  sub->callback([&exit_code] {
    std::cout << rstorm::cli::version_text() << "\n";
    exit_code = rstorm::cli::kExitOk;
  });
});
