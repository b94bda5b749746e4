// `rstorm new-topology NAME [--dir D]`: writes a standalone CMake project (a
// spout, two bolts, the topology, GoogleTest unit tests of the bolts and a
// `rstorm local` run as a ctest) that builds against the installed rstorm
// package: what Storm users get from storm-starter. The files are
// cli/starter/, embedded at build time, with __NAME__ and __VERSION__ filled in.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <string>

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

// Why `name` cannot be a C++ namespace and a CMake target of the project
// (see cli/starter/); empty when it can.
std::string project_name_problem(const std::string& name) {
  static const std::regex kName("[a-z][a-z0-9_]*");
  if (!std::regex_match(name, kName)) {
    return "use lower-case letters, digits and '_', starting with a letter";
  }
  // C++20's keywords and alternative tokens in lower case.
  static const std::set<std::string, std::less<>> kKeywords = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
      "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
      "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
      "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
      "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
      "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
      "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
      "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
      "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq"};
  if (kKeywords.contains(name)) return "it is a C++ keyword";
  if (name.find("__") != std::string::npos) return "C++ reserves names with '__'";
  // Namespaces the project's code already uses.
  if (name == "std") return "it is the standard library's namespace";
  if (name == "rstorm") return "it is rstorm's namespace";
  if (name == "testing") return "it is GoogleTest's namespace";
  // Targets CMake makes itself (Makefiles, Ninja, CTest, CPack).
  static const std::set<std::string, std::less<>> kTargets = {
      "all",  "clean",          "help",           "install",     "package",
      "test", "package_source", "rebuild_cache",  "edit_cache",  "list_install_components"};
  if (kTargets.contains(name)) return "CMake reserves the target name '" + name + "'";
  return {};
}

int write_starter(const std::string& name, std::filesystem::path dir) {
  namespace fs = std::filesystem;
  if (std::string problem = project_name_problem(name); !problem.empty()) {
    std::cerr << "rstorm new-topology: '" << name << "' cannot name a topology project: "
              << problem << " (it becomes a C++ namespace and a CMake target)\n";
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
