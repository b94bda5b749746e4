// `rstorm local --ui`: rstorm-ui's pages and REST API over a topology running
// in this process. The backend answers as nimbus would for a one-node,
// one-worker cluster ("local"): the structure from the topology library, the
// executors and errors from the runtime, the figures from this process's own
// /metrics; activate and deactivate act on the runtime, kill ends the run.
//
// Thread contract: thread-safe (the UI's threads call it while the runtime runs).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "rstorm/config.hpp"
#include "rstorm/topology.hpp"
#include "ui/ui_api.hpp"

namespace rstorm::worker {
class TopologyRuntime;
}

namespace rstorm::cli {

class LocalUiBackend final : public ui::UiBackend {
 public:
  // `metrics_port`: where this process serves /metrics. `stop` is set by kill.
  LocalUiBackend(worker::TopologyRuntime& runtime, const Topology& topology, std::string name,
                 const Config& config, int metrics_port, std::atomic<bool>* stop);

  Result<thrift::ClusterSummary> cluster_info() override;
  Result<thrift::TopologyInfo> topology_info(const std::string& id) override;
  Result<thrift::TopologyPlacement> placement(const std::string& id) override;
  Status activate(const std::string& name) override;
  Status deactivate(const std::string& name) override;
  Status kill(const std::string& name, std::optional<int> wait_secs) override;
  Status rebalance(const std::string& name, const thrift::RebalanceOptions& options) override;
  Result<std::string> scrape(const std::string& host, int port) override;

 private:
  Status check(const std::string& id) const;
  Status set_active(const std::string& name, bool active);
  thrift::TopologySummary summary() const;

  worker::TopologyRuntime& runtime_;
  const thrift::TopologyStructure structure_;
  const std::string name_;
  const std::map<std::string, thrift::ConfigEntry> config_;
  const int metrics_port_;
  std::atomic<bool>* const stop_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  mutable std::mutex mutex_;
  thrift::TopologyStatus::type status_ = thrift::TopologyStatus::ACTIVE;  // guarded by mutex_
};

}  // namespace rstorm::cli
