#include "common/metrics/exposer.hpp"

#include <exception>

#include <prometheus/exposer.h>

#include "common/metrics/metrics_impl.hpp"

namespace rstorm::metrics {

struct MetricsServer::Impl {
  std::unique_ptr<prometheus::Exposer> exposer;
};

api::Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& host, int port,
                                                                 Registry& registry) {
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->impl_ = std::make_unique<Impl>();
  try {
    server->impl_->exposer =
        std::make_unique<prometheus::Exposer>(host + ":" + std::to_string(port), 2);
  } catch (const std::exception& e) {
    return api::Status::error("cannot serve metrics on " + host + ":" + std::to_string(port) +
                              ": " + e.what());
  }
  auto ports = server->impl_->exposer->GetListeningPorts();
  if (ports.empty()) {
    return api::Status::error("cannot serve metrics on " + host + ":" + std::to_string(port) +
                              ": no listening port");
  }
  server->impl_->exposer->RegisterCollectable(registry.impl().registry);
  server->impl_->exposer->RegisterCollectable(registry.impl().collectors);
  server->host_ = host;
  server->port_ = ports.front();
  return server;
}

MetricsServer::~MetricsServer() = default;

}  // namespace rstorm::metrics
