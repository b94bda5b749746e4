// Metrics of the calling process, read from /proc at scrape time:
// rstorm_process_cpu_seconds_total (user + system) and
// rstorm_process_resident_memory_bytes, with the given labels.
#pragma once

#include "common/metrics/metrics.hpp"

namespace rstorm::metrics {

// Adds the collector to `registry`; it is removed when the handle goes away.
CollectorHandle add_process_metrics(Registry& registry, Labels labels = {});

// The values the collector reports (0 when /proc cannot be read).
double process_cpu_seconds();
double process_resident_bytes();

}  // namespace rstorm::metrics
