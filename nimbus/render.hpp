// Renders nimbus's answers for the `rstorm` read commands, as text for people
// and as JSON (--json) for programs. Stateless functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "rstorm_thrift/rstorm_types.h"

namespace rstorm::nimbus {

// A time in ms since the epoch as "2026-11-24 20:31:05 UTC".
std::string time_text(std::int64_t ms);

// `rstorm list`: one line per topology.
std::string render_list_text(const thrift::ClusterSummary& cluster);
std::string render_list_json(const thrift::ClusterSummary& cluster);
// `rstorm cluster`: nimbuses, then supervisors with rack, capacity and use.
std::string render_cluster_text(const thrift::ClusterSummary& cluster);
std::string render_cluster_json(const thrift::ClusterSummary& cluster);
// `rstorm describe`: status, placement by rack/node/worker, resources used
// against requested, network cost, last errors.
std::string render_describe_text(const thrift::TopologyInfo& info,
                                 const thrift::TopologyPlacement& placement);
std::string render_describe_json(const thrift::TopologyInfo& info,
                                 const thrift::TopologyPlacement& placement);

}  // namespace rstorm::nimbus
