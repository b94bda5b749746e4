// NimbusClientLink: NimbusLink over nimbus's Thrift client
// (nimbus/nimbus_client.hpp): finds the leader from nimbus.seeds +
// nimbus.thrift.port, and reconnects on the next call after a failure (a
// nimbus restart or a leader change). Thread-safe (calls serialized).
#pragma once

#include <memory>
#include <mutex>

#include "nimbus/nimbus_client.hpp"
#include "supervisor/nimbus_link.hpp"

namespace rstorm::supervisor {

class NimbusClientLink final : public NimbusLink {
 public:
  explicit NimbusClientLink(nimbus::NimbusClient::Options options);

  Result<std::string> download_blob(const std::string& blob_key) override;
  Result<thrift::TopologyInfo> topology_info(const std::string& topology_id) override;
  Status supervisor_heartbeat(const thrift::SupervisorHeartbeat& heartbeat) override;

 private:
  // Runs `call` on a connected client; drops the client when the call fails
  // with kUnavailable so that the next call reconnects.
  template <typename F>
  auto with_client(F&& call) -> decltype(call(std::declval<nimbus::NimbusClient&>()));

  const nimbus::NimbusClient::Options options_;
  std::mutex mutex_;
  std::unique_ptr<nimbus::NimbusClient> client_;  // guarded by mutex_
};

}  // namespace rstorm::supervisor
