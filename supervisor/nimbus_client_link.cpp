#include "supervisor/nimbus_client_link.hpp"

namespace rstorm::supervisor {

NimbusClientLink::NimbusClientLink(nimbus::NimbusClient::Options options)
    : options_(std::move(options)) {}

template <typename F>
auto NimbusClientLink::with_client(F&& call)
    -> decltype(call(std::declval<nimbus::NimbusClient&>())) {
  std::lock_guard lock(mutex_);
  if (!client_) {
    auto connected = nimbus::NimbusClient::connect(options_);
    if (!connected) return connected.status();
    client_ = std::move(connected).value();
  }
  auto result = call(*client_);
  if (!result.is_ok() && (result.code() == ErrorCode::kUnavailable)) client_.reset();
  return result;
}

Result<std::string> NimbusClientLink::download_blob(const std::string& blob_key) {
  return with_client([&](nimbus::NimbusClient& c) { return c.download_blob(blob_key); });
}

Result<thrift::TopologyInfo> NimbusClientLink::topology_info(const std::string& topology_id) {
  return with_client([&](nimbus::NimbusClient& c) { return c.topology_info(topology_id); });
}

Status NimbusClientLink::supervisor_heartbeat(const thrift::SupervisorHeartbeat& heartbeat) {
  return with_client([&](nimbus::NimbusClient& c) { return c.supervisor_heartbeat(heartbeat); });
}

}  // namespace rstorm::supervisor
