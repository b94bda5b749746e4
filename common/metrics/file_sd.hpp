// Prometheus file-based service discovery: a JSON file listing scrape targets
// with their labels, which Prometheus re-reads when it changes
// (file_sd_configs). Nimbus and supervisors write one file each.
//
// Thread contract: free functions; concurrent writers of one path must be
// serialised by the caller. A write is atomic (temp file + rename): Prometheus
// never sees half a file.
#pragma once

#include <string>
#include <vector>

#include "common/metrics/metrics.hpp"
#include "rstorm/status.hpp"

namespace rstorm::metrics {

struct SdTarget {
  std::string target;  // host:port
  Labels labels;       // e.g. job, topology, node, rack
};

// The file's JSON text: [{"targets": [...], "labels": {...}}, ...].
std::string render_file_sd(const std::vector<SdTarget>& targets);

// Writes the file, creating its directory. Fails naming the path.
api::Status write_file_sd(const std::string& path, const std::vector<SdTarget>& targets);

// Removes the file if it exists (a daemon stopping cleanly).
void remove_file_sd(const std::string& path);

}  // namespace rstorm::metrics
