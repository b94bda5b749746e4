#include "window_settings.hpp"

namespace rstorm {
namespace {

// The integer at `key`; nullopt when absent or null. A value of another type
// is a problem naming the component and the key.
std::optional<std::int64_t> int_at(const Config& config, std::string_view key,
                                   const std::string& component,
                                   std::vector<std::string>& problems) {
  const Config::Entry* e = config.find(key);
  if (e == nullptr || e->value.is_null()) return std::nullopt;
  if (!e->value.is_int()) {
    problems.push_back("windowed bolt '" + component + "': " + std::string(key) +
                       " must be an integer (set by " + e->origin + ")");
    return std::nullopt;
  }
  return e->value.as_int();
}

std::string string_at(const Config& config, std::string_view key, const std::string& component,
                      std::vector<std::string>& problems) {
  const Config::Entry* e = config.find(key);
  if (e == nullptr || e->value.is_null()) return "";
  if (!e->value.is_string()) {
    problems.push_back("windowed bolt '" + component + "': " + std::string(key) +
                       " must be a string (set by " + e->origin + ")");
    return "";
  }
  return e->value.as_string();
}

// Exactly one of a count and a duration key; nullopt when neither is set.
std::optional<WindowSize> size_at(const Config& config, std::string_view count_key,
                                  std::string_view duration_key, const char* what,
                                  const std::string& component,
                                  std::vector<std::string>& problems) {
  const auto count = int_at(config, count_key, component, problems);
  const auto duration = int_at(config, duration_key, component, problems);
  if (count && duration) {
    problems.push_back("windowed bolt '" + component + "': its " + what +
                       " is given both as a count (" + std::string(count_key) +
                       ") and as a duration (" + std::string(duration_key) + "); give one");
    return std::nullopt;
  }
  if (!count && !duration) return std::nullopt;
  const WindowSize size = count ? Count(*count) : Duration(*duration);
  if (size.value <= 0) {
    problems.push_back("windowed bolt '" + component + "': its " + what + " must be above 0, got " +
                       std::to_string(size.value) + (count ? " tuples" : " ms"));
    return std::nullopt;
  }
  return size;
}

}  // namespace

bool has_window(const Config& config) {
  for (auto key : {keys::kWindowLengthCount, keys::kWindowLengthDurationMs}) {
    const Config::Entry* e = config.find(key);
    if (e != nullptr && !e->value.is_null()) return true;
  }
  return false;
}

std::optional<WindowSettings> read_window_settings(const Config& config,
                                                   const std::string& component,
                                                   std::vector<std::string>& problems) {
  const std::size_t before = problems.size();
  WindowSettings s;
  const auto length = size_at(config, keys::kWindowLengthCount, keys::kWindowLengthDurationMs,
                              "window length", component, problems);
  const auto slide =
      size_at(config, keys::kWindowSlidingIntervalCount, keys::kWindowSlidingIntervalDurationMs,
              "sliding interval", component, problems);
  if (!length && problems.size() == before) {
    problems.push_back("windowed bolt '" + component + "' has no window length: set " +
                       std::string(keys::kWindowLengthCount) + " or " +
                       std::string(keys::kWindowLengthDurationMs) + " (with_window)");
  }
  if (length) s.length = *length;
  s.slide = slide ? *slide : s.length;
  s.timestamp_field = string_at(config, keys::kTupleTimestampFieldName, component, problems);
  s.late_stream = string_at(config, keys::kLateTupleStream, component, problems);
  auto at_least = [&](std::string_view key, std::int64_t& out, std::int64_t min) {
    if (auto v = int_at(config, key, component, problems)) {
      if (*v < min) {
        problems.push_back("windowed bolt '" + component + "': " + std::string(key) +
                           " must be at least " + std::to_string(min) + ", got " +
                           std::to_string(*v));
      } else {
        out = *v;
      }
    }
  };
  at_least(keys::kTupleTimestampMaxLagMs, s.lag_ms, 0);
  at_least(keys::kWatermarkEventIntervalMs, s.watermark_interval_ms, 1);
  at_least(keys::kWatermarkIdleTimeoutMs, s.idle_timeout_ms, 0);
  at_least(keys::kWindowMaxTuplesInMemory, s.max_in_memory, 1);
  if (!s.late_stream.empty() && !s.event_time()) {
    problems.push_back("windowed bolt '" + component + "': a late tuple stream ('" + s.late_stream +
                       "') needs event time: set a timestamp field (" +
                       std::string(keys::kTupleTimestampFieldName) + ")");
  }
  if (s.late_stream == "default") {
    problems.push_back("windowed bolt '" + component +
                       "': the late tuple stream cannot be the default stream");
  }
  if (problems.size() != before) return std::nullopt;
  return s;
}

void check_windows_against(const TopologySpec& spec, const Config& topology_config,
                           std::vector<std::string>& problems) {
  int spout_tasks = 0;
  for (const auto& c : spec.components) {
    if (c.kind == ComponentKind::kSpout) spout_tasks += c.num_tasks;
  }
  for (const auto& c : spec.components) {
    if (c.kind != ComponentKind::kBolt || !has_window(c.config)) continue;
    Config merged = topology_config;
    merged.merge(c.config);
    auto s = read_window_settings(merged, c.id, problems);
    if (!s) continue;
    std::int64_t timeout_secs = 30;
    std::int64_t max_pending = 0;
    try {
      timeout_secs = merged.get_int(keys::kTopologyMessageTimeoutSecs, 30);
      if (const Config::Entry* e = merged.find(keys::kTopologyMaxSpoutPending);
          e != nullptr && !e->value.is_null()) {
        max_pending = merged.get_int(keys::kTopologyMaxSpoutPending);
      }
    } catch (const ConfigError& e) {
      problems.push_back(e.what());
      continue;
    }
    if (s->length.unit == WindowSize::Unit::kDuration) {
      const std::int64_t span =
          s->length.value + (s->slide.unit == WindowSize::Unit::kDuration ? s->slide.value : 0) +
          (s->event_time() ? s->lag_ms + s->watermark_interval_ms : 0);
      if (span >= timeout_secs * 1000) {
        problems.push_back(
            "windowed bolt '" + c.id + "': its window (length " + std::to_string(s->length.value) +
            " ms" +
            (s->slide.unit == WindowSize::Unit::kDuration
                 ? " + slide " + std::to_string(s->slide.value) + " ms"
                 : std::string()) +
            (s->event_time() ? " + lag " + std::to_string(s->lag_ms) + " ms + watermark interval " +
                                   std::to_string(s->watermark_interval_ms) + " ms"
                             : std::string()) +
            ") does not fit in " + std::string(keys::kTopologyMessageTimeoutSecs) + " (" +
            std::to_string(timeout_secs) +
            " s): its tuples would time out and be replayed before it is processed; raise the "
            "timeout or shorten the window");
      }
    }
    if (s->length.unit == WindowSize::Unit::kCount && max_pending > 0 && spout_tasks > 0) {
      const std::int64_t span =
          s->length.value + (s->slide.unit == WindowSize::Unit::kCount ? s->slide.value : 0);
      const std::int64_t room = max_pending * spout_tasks;
      // Tuples spread over the bolt's tasks (shuffle, fields, ...) fill
      // every task's window at once only with room for all of them; with
      // global or all grouping each tuple is in one window per task anyway.
      bool spread = false;
      for (const auto& in : c.inputs) {
        spread = spread || (in.grouping.type != GroupingType::kGlobal &&
                            in.grouping.type != GroupingType::kAll);
      }
      const std::int64_t windows = spread ? std::max(1, c.num_tasks) : 1;
      if (span * windows > room) {
        problems.push_back(
            "windowed bolt '" + c.id + "': its window holds up to " + std::to_string(span) +
            " tuples unacked" +
            (windows > 1 ? " in each of its " + std::to_string(windows) + " tasks (" +
                               std::to_string(span * windows) + " in all)"
                         : std::string()) +
            ", more than " + std::string(keys::kTopologyMaxSpoutPending) + " (" +
            std::to_string(max_pending) + ") x " + std::to_string(spout_tasks) +
            " spout tasks lets in flight: it would never fill; raise " +
            std::string(keys::kTopologyMaxSpoutPending) + " or shorten the window");
      }
    }
  }
}

}  // namespace rstorm
