#include "supervisor/nimbus_client_link.hpp"

#include <algorithm>

#include "common/thrift/codec.hpp"

namespace rstorm::supervisor {

NimbusClientLink::NimbusClientLink(nimbus::NimbusClient::Options options,
                                   CoordinationStore& store, ClusterPaths paths)
    : options_(std::move(options)), store_(store), paths_(std::move(paths)) {}

std::vector<nimbus::NimbusAddress> NimbusClientLink::candidates() const {
  std::vector<nimbus::NimbusAddress> out;
  auto add = [&](nimbus::NimbusAddress a) {
    auto same = [&](const auto& b) { return b.host == a.host && b.port == a.port; };
    if (std::none_of(out.begin(), out.end(), same)) out.push_back(std::move(a));
  };
  auto nodes = store_.children(paths_.nimbus_leader());
  if (nodes) {
    // Sequential names sort in election order: the leader is the first.
    for (const auto& name : *nodes) {
      auto node = store_.get(join_path(paths_.nimbus_leader(), name));
      if (!node) continue;
      auto summary = decode_thrift<thrift::NimbusSummary>(node->data, "NimbusSummary");
      if (summary) add({summary->host, summary->port});
    }
  }
  for (const auto& seed : options_.seeds) add(seed);
  return out;
}

std::vector<std::string> NimbusClientLink::nimbus_seeds(bool tls) const {
  std::vector<std::string> out;
  auto add = [&](const std::string& host, int port) {
    if (port <= 0) return;
    std::string seed = host + ":" + std::to_string(port);
    if (std::find(out.begin(), out.end(), seed) == out.end()) out.push_back(std::move(seed));
  };
  if (auto nodes = store_.children(paths_.nimbus_leader())) {
    for (const auto& name : *nodes) {
      auto node = store_.get(join_path(paths_.nimbus_leader(), name));
      if (!node) continue;
      auto summary = decode_thrift<thrift::NimbusSummary>(node->data, "NimbusSummary");
      if (summary) add(summary->host, tls ? summary->tls_port : summary->port);
    }
  }
  // The configured seeds are of the kind this supervisor speaks.
  if (tls == options_.tls.has_value()) {
    for (const auto& seed : options_.seeds) add(seed.host, seed.port);
  }
  return out;
}

template <typename F>
auto NimbusClientLink::with_client(F&& call)
    -> decltype(call(std::declval<nimbus::NimbusClient&>())) {
  std::lock_guard lock(mutex_);
  if (!client_) {
    auto options = options_;
    options.seeds = candidates();
    auto connected = nimbus::NimbusClient::connect(options);
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
