#include "ui/nimbus_backend.hpp"

namespace rstorm::ui {

NimbusBackend::NimbusBackend(nimbus::NimbusClient::Options options,
                             metrics::HttpClientOptions metrics_client)
    : options_(std::move(options)), metrics_client_(std::move(metrics_client)) {}

template <typename F>
auto NimbusBackend::with_client(F&& call) -> decltype(call(std::declval<nimbus::NimbusClient&>())) {
  std::shared_ptr<nimbus::NimbusClient> client;
  {
    std::lock_guard lock(mutex_);
    if (!client_) {
      auto connected = nimbus::NimbusClient::connect(options_);
      if (!connected && options_.act_as && connected.code() == ErrorCode::kPermissionDenied) {
        // Nimbus refused to let rstorm-ui act for this user (actAs).
        return Status(ErrorCode::kPermissionDenied,
                      connected.status().message() +
                          " (rstorm-ui makes its calls for the user of your certificate: nimbus's "
                          "nimbus.impersonation.acl must let rstorm-ui's own user do so, e.g. "
                          "\"ui: users=*; hosts=<rstorm-ui's address>\")");
      }
      if (!connected) return connected.status();
      client_ = std::shared_ptr<nimbus::NimbusClient>(std::move(connected).value());
    }
    client = client_;
  }
  auto result = call(*client);
  if (!result.is_ok() && result.code() == ErrorCode::kUnavailable) {
    std::lock_guard lock(mutex_);
    if (client_ == client) client_.reset();
  }
  return result;
}

Result<thrift::ClusterSummary> NimbusBackend::cluster_info() {
  return with_client([](nimbus::NimbusClient& c) { return c.cluster_info(); });
}

Result<thrift::TopologyInfo> NimbusBackend::topology_info(const std::string& id) {
  return with_client([&](nimbus::NimbusClient& c) { return c.topology_info(id); });
}

Result<thrift::TopologyPlacement> NimbusBackend::placement(const std::string& id) {
  return with_client([&](nimbus::NimbusClient& c) { return c.placement(id); });
}

Status NimbusBackend::activate(const std::string& name) {
  return with_client([&](nimbus::NimbusClient& c) { return c.activate(name); });
}

Status NimbusBackend::deactivate(const std::string& name) {
  return with_client([&](nimbus::NimbusClient& c) { return c.deactivate(name); });
}

Status NimbusBackend::kill(const std::string& name, std::optional<int> wait_secs) {
  return with_client([&](nimbus::NimbusClient& c) { return c.kill_topology(name, wait_secs); });
}

Status NimbusBackend::rebalance(const std::string& name, const thrift::RebalanceOptions& options) {
  return with_client([&](nimbus::NimbusClient& c) { return c.rebalance(name, options); });
}

std::shared_ptr<UiBackend> NimbusBackend::acting_for(const std::string& principal) {
  std::lock_guard lock(mutex_);
  auto found = acting_.find(principal);
  if (found != acting_.end()) return found->second;
  if (acting_.size() >= kMaxActing) acting_.clear();  // callers keep theirs alive
  nimbus::NimbusClient::Options options = options_;
  options.act_as = principal;
  auto backend = std::make_shared<NimbusBackend>(std::move(options), metrics_client_);
  acting_.emplace(principal, backend);
  return backend;
}

Result<std::string> NimbusBackend::scrape(const std::string& host, int port) {
  return scrape_worker_metrics(host, port, metrics_client_);
}

}  // namespace rstorm::ui
