// LocalCluster: runs topologies inside this process, with no external service:
// submit a built topology under a name with a Config, read its live counters
// per component, kill it. Used by tests and by `rstorm local`.
//
// Thread-safe: every method may be called from any thread. Each topology runs
// on its own executor threads; the destructor kills whatever still runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "rstorm/config.hpp"
#include "rstorm/status.hpp"
#include "rstorm/topology.hpp"

namespace spdlog {
class logger;
}

namespace rstorm {

namespace worker {
class TopologyRuntime;
}

// Counters of one component, summed over its executors, since submit.
struct ComponentStats {
  std::string id;
  bool is_spout = false;
  bool is_system = false;  // __acker
  int executors = 0;
  int tasks = 0;
  std::uint64_t emitted = 0;      // emit calls
  std::uint64_t transferred = 0;  // tuples delivered to tasks
  std::uint64_t acked = 0;        // spouts: trees completed; bolts: inputs acked
  std::uint64_t failed = 0;       // spouts: trees failed or timed out; bolts: inputs failed
  std::uint64_t executed = 0;     // bolts: inputs executed
  std::uint64_t errors = 0;       // exceptions caught and report_error calls
  std::uint64_t backpressure_waits = 0;
  double execute_latency_ms = 0;   // bolts: mean over sampled executes
  double complete_latency_ms = 0;  // spouts: mean emit-to-ack time
  // Tuples per second since submit: emitted for spouts, executed for bolts.
  double throughput = 0;
  // topology.fuse.executors: the component whose executors' threads run this
  // one's (its tuples arrive by function call); empty when not fused.
  std::string fused_into;
};

struct TopologyStats {
  std::string name;
  double uptime_secs = 0;
  std::uint64_t in_flight = 0;  // reliable tuples not yet acked or failed
  std::vector<ComponentStats> components;

  // nullptr for an unknown id.
  const ComponentStats* component(std::string_view id) const {
    for (const auto& c : components) {
      if (c.id == id) return &c;
    }
    return nullptr;
  }
};

struct LocalClusterOptions {
  // Where errors from user code are logged; default: stderr.
  std::shared_ptr<spdlog::logger> logger;
  // Seeds the edge-id generators; 0: a random seed.
  std::uint64_t seed = 0;
};

class LocalCluster {
 public:
  explicit LocalCluster(LocalClusterOptions options = {});
  ~LocalCluster();
  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;

  // Starts `topology` under `name`. Fails if the name is taken, a config value
  // is wrong, or a factory throws or returns nothing.
  api::Status submit(const std::string& name, const Config& config, const Topology& topology);
  // Deactivates the spouts, waits up to `wait` for in-flight tuples to finish,
  // then stops every executor.
  api::Status kill(std::string_view name, std::chrono::milliseconds wait = {});
  api::Status activate(std::string_view name);
  api::Status deactivate(std::string_view name);

  api::Result<TopologyStats> stats(std::string_view name) const;
  std::vector<std::string> topologies() const;

 private:
  std::shared_ptr<spdlog::logger> logger_;
  std::uint64_t seed_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<worker::TopologyRuntime>, std::less<>> running_;
};

}  // namespace rstorm
