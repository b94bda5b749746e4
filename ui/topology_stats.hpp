// What rstorm-ui knows of a running topology's figures: samples of its
// workers' /metrics summed per executor, kept over time so that a window
// (the last 10 minutes, 3 hours, a day) is the difference of two samples.
//
// Thread contract: StatsHistory is thread-safe; samples are values.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status.hpp"
#include "rstorm_thrift/rstorm_types.h"

namespace rstorm::ui {

using Clock = std::chrono::steady_clock;

// One executor's counters (what the worker counted since it started) and gauges.
struct ExecutorCounters {
  double emitted = 0;
  double transferred = 0;
  double acked = 0;
  double failed = 0;
  double executed = 0;
  double errors = 0;
  double throttled_seconds = 0;  // spouts: time throttled by backpressure
  double wait_seconds = 0;       // time waiting for space in a full queue
  // Gauges: not differenced.
  double queue_depth = 0;
  double queue_capacity = 0;
  bool fused = false;
};

// Per component, summed over its workers' histograms.
struct LatencySums {
  double execute_sum = 0;  // seconds, over sampled executes
  double execute_count = 0;
  double complete_sum = 0;
  double complete_count = 0;
};

struct UserMetricValue {
  std::string name;
  std::string type;  // "counter", "gauge", "histogram"
  std::string component;
  int task = 0;
  double value = 0;  // counter or gauge
  double sum = 0;    // histogram
  double count = 0;  // histogram
};

struct TopologySample {
  Clock::time_point time{};
  // (component, first task) -> counters.
  std::map<std::pair<std::string, int>, ExecutorCounters> executors;
  std::map<std::string, LatencySums> latency;
  // (worker "host:port", peer "host:port") -> envelopes sent.
  std::map<std::pair<std::string, std::string>, double> peer_sent;
  std::vector<UserMetricValue> user;
  // Workers whose /metrics could not be read, with why.
  std::vector<std::string> unreachable;
};

// Reads one worker's /metrics text: (host, metrics port) -> body.
using ScrapeFunction = std::function<Result<std::string>(const std::string& host, int port)>;

// Scrapes every worker of `info` (its executors' slots; /metrics at slot port
// + `metrics_port_offset`) and sums what they report.
TopologySample sample_topology(const thrift::TopologyInfo& info, int metrics_port_offset,
                               const ScrapeFunction& scrape);

// Adds the figures of one worker's /metrics text into `out`.
void add_worker_metrics(const std::string& text, const std::string& worker, TopologySample& out);

// The counters of `now` minus those of `then` (gauges from `now`); an executor
// whose counters went down (its worker restarted) counts from zero.
TopologySample difference(const TopologySample& now, const TopologySample& then);

// One component's counters summed over its executors in a sample.
struct ComponentTotals {
  std::string id;
  bool spout = false;
  int executors = 0;  // of the component's executors, those the sample has counters of
  ExecutorCounters counts;
};

// The counters of `component`'s executors in `sample`, summed (gauges left
// at zero); how many executors that was.
int sum_component(const TopologySample& sample, const std::string& component,
                  ExecutorCounters* sum);

// Per component of `structure`, in its order, the counters of `sample` summed
// over the component's executors. System components ("__acker") left out.
std::vector<ComponentTotals> component_totals(const thrift::TopologyStructure& structure,
                                              const TopologySample& sample);

// `rstorm describe`'s counts: a line per component of `totals` ("split (bolt,
// 2 executors): executed 10, emitted 150, acked 10, failed 0"), then a line
// per worker of `sample.unreachable`. Empty when there is nothing to say.
std::string render_counts_text(const std::vector<ComponentTotals>& totals,
                               const TopologySample& sample);

// A window's figures: counts within the window and how long it really is.
struct WindowStats {
  TopologySample counts;  // differences (or all-time values)
  TopologySample latest;  // the newest sample (gauges, user metrics)
  double seconds = 0;     // the time the counts cover
};

class StatsHistory {
 public:
  // Keeps samples for `retention` (a day), thinned beyond 10 minutes to one per
  // `coarse_step` (5 minutes).
  explicit StatsHistory(std::chrono::seconds retention = std::chrono::hours(24),
                        std::chrono::seconds coarse_step = std::chrono::minutes(5));

  void record(const std::string& topology_id, TopologySample sample);
  bool has(const std::string& topology_id) const;
  // Drops the history of every topology not in `live`.
  void retain(const std::set<std::string>& live);

  // The figures for the last `window_secs` (0: all time) of a topology that
  // has run `uptime_secs`. When the topology is younger than the window, or
  // there is no older sample than the newest, the counts are since it
  // started; when the history is shorter than the window, they cover the
  // history. nullopt before the first sample.
  std::optional<WindowStats> window(const std::string& topology_id, std::int64_t window_secs,
                                    std::int64_t uptime_secs) const;

 private:
  const std::chrono::seconds retention_;
  const std::chrono::seconds coarse_step_;
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<TopologySample>> samples_;  // oldest first
};

}  // namespace rstorm::ui
