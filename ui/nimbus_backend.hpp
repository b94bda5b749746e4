// NimbusBackend: the UI's facts from the leading nimbus (NimbusClient, which
// finds and follows the leader) and its workers' /metrics over HTTP(S). A lost
// connection is made again on the next request, so the UI outlives a nimbus
// failover or restart. acting_for() gives a backend per signed-in user whose
// connection makes its calls for that user (nimbus's actAs).
//
// Thread contract: thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "nimbus/nimbus_client.hpp"
#include "ui/ui_api.hpp"

namespace rstorm::ui {

class NimbusBackend final : public UiBackend {
 public:
  // `metrics_client`: how to reach the workers' /metrics (scrape_client_from_config()).
  explicit NimbusBackend(nimbus::NimbusClient::Options options,
                         metrics::HttpClientOptions metrics_client = {});

  Result<thrift::ClusterSummary> cluster_info() override;
  Result<thrift::TopologyInfo> topology_info(const std::string& id) override;
  Result<thrift::TopologyPlacement> placement(const std::string& id) override;
  Status activate(const std::string& name) override;
  Status deactivate(const std::string& name) override;
  Status kill(const std::string& name, std::optional<int> wait_secs) override;
  Status rebalance(const std::string& name, const thrift::RebalanceOptions& options) override;
  Result<std::string> scrape(const std::string& host, int port) override;
  // A backend with its own connection that makes its calls for `principal`
  // (NimbusClient::Options::act_as); kept for the next request of that user.
  std::shared_ptr<UiBackend> acting_for(const std::string& principal) override;

 private:
  // Runs `call` with a connected client; drops the client when nimbus is unreachable.
  template <typename F>
  auto with_client(F&& call) -> decltype(call(std::declval<nimbus::NimbusClient&>()));

  const nimbus::NimbusClient::Options options_;
  const metrics::HttpClientOptions metrics_client_;
  std::mutex mutex_;
  std::shared_ptr<nimbus::NimbusClient> client_;  // guarded by mutex_
  // By principal; at most kMaxActing, then started afresh.
  static constexpr std::size_t kMaxActing = 256;
  std::map<std::string, std::shared_ptr<NimbusBackend>> acting_;  // guarded by mutex_
};

}  // namespace rstorm::ui
