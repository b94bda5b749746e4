// NimbusClientLink: NimbusLink over nimbus's Thrift client
// (nimbus/nimbus_client.hpp). Where nimbus is: the candidates of the leader
// election (`<root>/nimbus/leader/n_*`, each holding a NimbusSummary), the
// current leader first, then nimbus.seeds x nimbus.thrift.port. After a failed
// call (a nimbus restart, a leader change) the next call looks again and
// reconnects. Thread-safe (calls serialized).
#pragma once

#include <memory>
#include <mutex>

#include "common/cluster_paths.hpp"
#include "common/coordination_store.hpp"
#include "nimbus/nimbus_client.hpp"
#include "supervisor/nimbus_link.hpp"

namespace rstorm::supervisor {

class NimbusClientLink final : public NimbusLink {
 public:
  // REQUIRES: `store` outlives this.
  NimbusClientLink(nimbus::NimbusClient::Options options, CoordinationStore& store,
                   ClusterPaths paths);

  // Election candidates (leader first), then the seeds.
  std::vector<nimbus::NimbusAddress> candidates() const;

  Result<std::string> download_blob(const std::string& blob_key) override;
  Result<thrift::TopologyInfo> topology_info(const std::string& topology_id) override;
  Status supervisor_heartbeat(const thrift::SupervisorHeartbeat& heartbeat) override;
  std::vector<std::string> nimbus_seeds(bool tls) const override;

 private:
  // Runs `call` on a connected client; drops the client when the call fails
  // with kUnavailable so that the next call reconnects.
  template <typename F>
  auto with_client(F&& call) -> decltype(call(std::declval<nimbus::NimbusClient&>()));

  const nimbus::NimbusClient::Options options_;
  CoordinationStore& store_;
  const ClusterPaths paths_;
  std::mutex mutex_;
  std::unique_ptr<nimbus::NimbusClient> client_;  // guarded by mutex_
};

}  // namespace rstorm::supervisor
