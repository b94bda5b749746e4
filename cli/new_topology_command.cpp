// `rstorm new-topology NAME [--dir D]`: writes a standalone CMake project (a
// spout, two bolts, the topology, GoogleTest unit tests of the bolts and a
// `rstorm local` run as a ctest) that builds against the installed rstorm
// package: what Storm users get from storm-starter. The files are
// cli/starter/, embedded at build time, with __NAME__ and __VERSION__ filled in.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>

#include "command.hpp"

namespace rstorm::cli {
const std::vector<std::pair<std::string_view, std::string_view>>& starter_files();

namespace {

std::string replace_all(std::string text, std::string_view from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

int write_starter(const std::string& name, std::filesystem::path dir) {
  namespace fs = std::filesystem;
  static const std::regex kName("[a-z][a-z0-9_]*");
  if (!std::regex_match(name, kName)) {
    std::cerr << "rstorm new-topology: '" << name
              << "' cannot name a topology project: use lower-case letters, digits and '_', "
                 "starting with a letter (it becomes a C++ namespace and a CMake target)\n";
    return kExitUsage;
  }
  if (dir.empty()) dir = name;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    std::cerr << "rstorm new-topology: " << dir.string()
              << " exists and is not empty; choose another --dir\n";
    return kExitUsage;
  }
  // find_package(rstorm MAJOR.MINOR): what this rstorm is.
  const std::string version = std::string(RSTORM_VERSION).substr(0, std::string(RSTORM_VERSION).rfind('.'));
  for (const auto& [relative, text] : starter_files()) {
    const fs::path path = dir / replace_all(std::string(relative), "__NAME__", name);
    fs::create_directories(path.parent_path(), ec);
    if (ec) {
      std::cerr << "rstorm new-topology: cannot create " << path.parent_path().string() << ": "
                << ec.message() << "\n";
      return kExitFailure;
    }
    std::ofstream out(path, std::ios::trunc);
    out << replace_all(replace_all(std::string(text), "__NAME__", name), "__VERSION__", version);
    if (!out) {
      std::cerr << "rstorm new-topology: cannot write " << path.string() << "\n";
      return kExitFailure;
    }
  }
  std::cout << "wrote the topology project '" << name << "' to " << dir.string() << ":\n"
            << "  cd " << dir.string() << "\n"
            << "  cmake -S . -B build && cmake --build build\n"
            << "  ctest --test-dir build --output-on-failure\n"
            << "  rstorm local build/lib" << name << ".so -c " << name << ".numbers=100000\n";
  return kExitOk;
}

}  // namespace
}  // namespace rstorm::cli

RSTORM_CLI_COMMAND("new-topology", [](CLI::App& app, int& exit_code) {
  struct Args {
    std::string name;
    std::string dir;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand(
      "new-topology", "Write a starter topology project that builds against the installed rstorm");
  sub->add_option("name", args->name, "the project's name (a C++ identifier)")->required();
  sub->add_option("--dir", args->dir, "where to write it (default: ./NAME); must be new or empty");
  sub->callback([&exit_code, args] { exit_code = rstorm::cli::write_starter(args->name, args->dir); });
});
