// Client-side steps of `rstorm submit`, as a library so they can be tested:
// load a topology library with the API's loader, build and validate the
// topology locally (errors name the component, stream or field), convert it to
// its Thrift structure, upload the library in chunks with its SHA-256 and
// submit. Free functions; thread-safe as NimbusClient is.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "nimbus/nimbus_client.hpp"
#include "rstorm/config.hpp"
#include "rstorm_thrift/rstorm_types.h"

namespace rstorm::nimbus {

// What a submission sends, before any network call.
struct PreparedTopology {
  std::string name;
  thrift::TopologyStructure structure;
  std::map<std::string, thrift::ConfigEntry> config;
  std::string library_bytes;
  // worker.*, supervisor.*, storm.messaging.* and storm.metrics.* keys given
  // on the command line (-c), which a topology does not carry: each machine's
  // rstorm.yaml sets them for its supervisor and workers.
  std::vector<std::string> daemon_keys_ignored;
};

// The part of a loaded config that belongs to the topology: every key outside
// the daemon namespaces (storm., nimbus., supervisor., worker.).
Config topology_config_of(const Config& config);

// Loads and builds the library. kInvalidArgument naming the file (missing, not
// a library, no RSTORM_TOPOLOGY, another API version) or the component,
// stream or field at fault. `name` empty: the library's RSTORM_TOPOLOGY name.
Result<PreparedTopology> prepare_topology(const std::string& library_path, const std::string& name,
                                          const Config& config);

// Uploads the library and submits; returns the topology id.
Result<std::string> submit_prepared(NimbusClient& client, const PreparedTopology& topology,
                                    std::size_t chunk_bytes);

// Polls until the topology is ACTIVE (or INACTIVE) with an assignment and,
// where supervisors report workers, every assigned worker has heartbeated.
// kTimeout with the last status; kInvalidArgument when it is UNSCHEDULABLE
// past the deadline (with its reason).
Status wait_until_running(NimbusClient& client, const std::string& topology_id,
                          std::chrono::milliseconds timeout);

// Polls until no topology has this id or name. kTimeout otherwise.
Status wait_until_gone(NimbusClient& client, const std::string& name,
                       std::chrono::milliseconds timeout);

}  // namespace rstorm::nimbus
