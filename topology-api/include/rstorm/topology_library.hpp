// Exporting a topology from a shared library, and loading one.
//
// In the library (built with rstorm_add_topology), exactly once:
//
//   RSTORM_TOPOLOGY(word_count) {        // `config` is the submitted Config
//     rstorm::TopologyBuilder b;
//     ...
//     return b.build();
//   }
//
// The macro exports C entry points: the API version the library was built
// against (checked before anything else is touched), the topology's name and a
// build function. load_topology_library() dlopens a library and checks them.
// Loading is thread-safe; a LoadedTopology is immutable.
#pragma once

#include <memory>
#include <string>

#include "rstorm/config.hpp"
#include "rstorm/status.hpp"
#include "rstorm/topology.hpp"
#include "rstorm/topology_builder.hpp"

// Bumped whenever a change to the public headers breaks binary compatibility.
#define RSTORM_API_VERSION 7

namespace rstorm {

inline constexpr int kApiVersion = RSTORM_API_VERSION;

// The build function of a loaded library. Keeps the library loaded.
class LoadedTopology {
 public:
  LoadedTopology(std::string path, std::string name, std::shared_ptr<void> handle,
                 void (*build)(const Config*, api::Result<Topology>*));

  const std::string& path() const { return path_; }
  // The name given to RSTORM_TOPOLOGY(...).
  const std::string& name() const { return name_; }
  // Runs the library's build function with `config`. An exception it throws
  // becomes an error naming the library.
  api::Result<Topology> build(const Config& config) const;

 private:
  std::string path_;
  std::string name_;
  std::shared_ptr<void> handle_;
  void (*build_)(const Config*, api::Result<Topology>*);
};

// Fails, naming the file, when it is missing or not a loadable library, when it
// has no RSTORM_TOPOLOGY, or when it was built against another API version.
api::Result<LoadedTopology> load_topology_library(const std::string& path);

}  // namespace rstorm

#define RSTORM_TOPOLOGY(name)                                                              \
  static ::rstorm::api::Result<::rstorm::Topology> rstorm_topology_body_##name(                 \
      [[maybe_unused]] const ::rstorm::Config& config);                                    \
  extern "C" __attribute__((visibility("default"))) int rstorm_topology_api_version() {   \
    return RSTORM_API_VERSION;                                                             \
  }                                                                                        \
  extern "C" __attribute__((visibility("default"))) const char* rstorm_topology_name() {  \
    return #name;                                                                          \
  }                                                                                        \
  extern "C" __attribute__((visibility("default"))) void rstorm_topology_build(           \
      const ::rstorm::Config* config, ::rstorm::api::Result<::rstorm::Topology>* out) {         \
    try {                                                                                  \
      *out = rstorm_topology_body_##name(*config);                                         \
    } catch (const std::exception& e) {                                                    \
      *out = ::rstorm::api::Status::error(std::string("topology '" #name "' threw while building: ") + \
                                     e.what());                                            \
    } catch (...) {                                                                        \
      *out = ::rstorm::api::Status::error("topology '" #name "' threw while building");        \
    }                                                                                      \
  }                                                                                        \
  static ::rstorm::api::Result<::rstorm::Topology> rstorm_topology_body_##name(                 \
      [[maybe_unused]] const ::rstorm::Config& config)
