#include "rstorm/topology_library.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include "window_settings.hpp"

namespace rstorm {

LoadedTopology::LoadedTopology(std::string path, std::string name, std::shared_ptr<void> handle,
                               void (*build)(const Config*, api::Result<Topology>*))
    : path_(std::move(path)), name_(std::move(name)), handle_(std::move(handle)), build_(build) {}

api::Result<Topology> LoadedTopology::build(const Config& config) const {
  api::Result<Topology> out = api::Status::error("topology library '" + path_ + "' built nothing");
  build_(&config, &out);
  if (!out.ok()) return out;
  std::vector<std::string> problems;
  check_windows_against(out->spec(), config, problems);
  if (!problems.empty()) return api::Status::errors(std::move(problems));
  if (api::Status s = out->resolve_resources(config); !s.is_ok()) return s;
  out->keep_alive(handle_);
  return out;
}

api::Result<LoadedTopology> load_topology_library(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return api::Status::error("topology library '" + path + "' does not exist");
  }
  if (!S_ISREG(st.st_mode)) {
    return api::Status::error("topology library '" + path + "' is not a regular file");
  }
  // A path without a slash would be searched for on the library path.
  std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  void* raw = ::dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (raw == nullptr) {
    const char* why = ::dlerror();
    return api::Status::error("cannot load topology library '" + path + "': " +
                         (why ? why : "unknown dlopen error"));
  }
  std::shared_ptr<void> handle(raw, [](void* h) { ::dlclose(h); });
  // dlsym looks through the library's dependencies too; ask only this library.
  auto version_fn = reinterpret_cast<int (*)()>(::dlsym(raw, "rstorm_topology_api_version"));
  auto name_fn = reinterpret_cast<const char* (*)()>(::dlsym(raw, "rstorm_topology_name"));
  auto build_fn = reinterpret_cast<void (*)(const Config*, api::Result<Topology>*)>(
      ::dlsym(raw, "rstorm_topology_build"));
  if (version_fn == nullptr || name_fn == nullptr || build_fn == nullptr) {
    return api::Status::error("topology library '" + path +
                         "' exports no topology: it has no RSTORM_TOPOLOGY(...) block");
  }
  const int version = version_fn();
  if (version != kApiVersion) {
    return api::Status::error("topology library '" + path + "' was built against rstorm API version " +
                         std::to_string(version) + ", but this rstorm has API version " +
                         std::to_string(kApiVersion) + "; rebuild the topology");
  }
  return LoadedTopology(path, name_fn(), std::move(handle), build_fn);
}

}  // namespace rstorm
