// The settings of a windowed bolt, read from its config (Storm's keys), and
// the checks made on them when a topology is built (internal to the API
// library).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rstorm/config.hpp"
#include "rstorm/topology.hpp"
#include "rstorm/windowed_bolt.hpp"

namespace rstorm {

struct WindowSettings {
  WindowSize length;
  WindowSize slide;
  std::string timestamp_field;  // empty: processing time
  std::int64_t lag_ms = 0;
  std::int64_t watermark_interval_ms = 1000;
  std::int64_t idle_timeout_ms = 5000;  // 0: inputs never count as idle
  std::string late_stream;              // empty: late tuples are acked and dropped
  // Tuples kept in memory; older ones spill to the task's state store.
  std::int64_t max_in_memory = 1'000'000;

  bool event_time() const { return !timestamp_field.empty(); }
};

// True when `config` declares a window (a length key with a value).
bool has_window(const Config& config);

// Reads and checks the window keys of `config` (a windowed bolt's, merged
// over the topology's). One message per problem, each naming `component` and
// the key, appended to `problems`; nullopt when there was any.
std::optional<WindowSettings> read_window_settings(const Config& config,
                                                   const std::string& component,
                                                   std::vector<std::string>& problems);

// The checks that need the topology's config: a duration window longer than
// the message timeout, a count window larger than max spout pending allows.
void check_windows_against(const TopologySpec& spec, const Config& topology_config,
                           std::vector<std::string>& problems);

}  // namespace rstorm
