// run_local: what `rstorm local` does, as a library function so that it can be
// tested: load a topology library, build it with the config, run it in a
// LocalCluster, print a live line per component every report interval and a
// final summary, and stop after the duration or when `interrupted` turns true.
// Runs on the caller's thread (which sleeps between reports).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "rstorm/config.hpp"
#include "rstorm/local_cluster.hpp"
#include "rstorm/metrics.hpp"
#include "rstorm/status.hpp"

namespace rstorm::worker {

class TopologyRuntime;

struct LocalRunOptions {
  std::string library_path;
  Config config;
  std::string name;                                   // default: the library's topology name
  std::chrono::milliseconds duration{0};              // 0: until interrupted
  std::chrono::milliseconds report_interval{5000};    // between live lines
  std::chrono::milliseconds kill_wait{1000};          // for in-flight tuples at the end
  const std::atomic<bool>* interrupted = nullptr;     // e.g. set by a SIGINT handler
  // Ends the run once no spout emitted and no bolt executed anything for this
  // long (0: off), as a test harness waits for a bounded input to drain.
  std::chrono::milliseconds until_idle{0};
  // Ends the run once every spout finished its input (SpoutOutputCollector::
  // finish) and every tree is complete. False: runs on until interrupted or
  // the duration, e.g. to keep /metrics up for a scraper.
  bool end_when_spouts_finish = true;
  // Set when the run ended because a component could not run (its open or
  // prepare threw), as opposed to an input that was bad from the start.
  bool* component_failed = nullptr;
  // Serve /metrics (runtime_metrics.hpp) while running: -1 (default) no, 0 any free port.
  int metrics_port = -1;
  std::string metrics_host = "127.0.0.1";
  // Called once /metrics listens, with its host:port (e.g. to start Prometheus).
  std::function<void(const std::string& target)> on_metrics_ready;
  // Called once the topology runs (after on_metrics_ready), e.g. to serve a UI
  // over it. What it returns is kept while the topology runs and released
  // before the runtime stops, so that it may use `runtime` and `topology`.
  std::function<std::shared_ptr<void>(TopologyRuntime& runtime, const Topology& topology,
                                      const std::string& name)>
      on_running;
};

// Fails (nothing run) when the library cannot be loaded or has no topology, the
// topology does not build, or the runtime refuses the config. `final` receives
// the counters at the end of the run.
api::Status run_local(const LocalRunOptions& options, std::ostream& out,
                      TopologyStats* final = nullptr);

// The user metrics (rstorm/metrics.hpp) per component and name, summed over
// its tasks (histograms: count, sum, mean); "" when there are none.
std::string render_user_metrics(const UserMetrics& metrics);

// One line per component: counters and the rate over `interval_secs` since `previous`.
std::string render_stats(const TopologyStats& now, const TopologyStats* previous,
                         double interval_secs);

}  // namespace rstorm::worker
