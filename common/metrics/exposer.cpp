#include "common/metrics/exposer.hpp"

#include <openssl/crypto.h>
#include <prometheus/exposer.h>

#include <exception>

#include "common/metrics/civetweb_tls.hpp"
#include "common/metrics/metrics_impl.hpp"

namespace rstorm::metrics {
namespace {

// The realm a client is asked to authenticate for (WWW-Authenticate).
constexpr const char* kRealm = "rstorm metrics";

// a == b in time that depends on the sizes only: a wrong password takes as
// long to refuse however many of its characters are right.
bool same_secret(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

struct MetricsServer::Impl {
  std::unique_ptr<prometheus::Exposer> exposer;
};

api::Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& host, int port,
                                                                 Registry& registry,
                                                                 const ServerSecurity& security) {
  const std::string where = host + ":" + std::to_string(port);
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->impl_ = std::make_unique<Impl>();
  // civetweb's listening_ports: "s" after the port serves it with TLS.
  const std::vector<std::string> options = {"listening_ports", where + (security.tls() ? "s" : ""),
                                            "num_threads", "2"};
  if (security.tls()) {
    auto exposer = start_tls_exposer(options, security.tls_cert_path, security.tls_key_path);
    if (!exposer.ok()) {
      return api::Status::error("cannot serve metrics over TLS on " + where + ": " +
                                exposer.status().message());
    }
    server->impl_->exposer = std::move(exposer).value();
    server->scheme_ = "https";
  } else {
    try {
      server->impl_->exposer = std::make_unique<prometheus::Exposer>(options);
    } catch (const std::exception& e) {
      return api::Status::error("cannot serve metrics on " + where + ": " + e.what());
    }
  }
  auto ports = server->impl_->exposer->GetListeningPorts();
  if (ports.empty()) {
    return api::Status::error("cannot serve metrics on " + where + ": no listening port");
  }
  if (security.auth()) {
    // Before the collectables: prometheus-cpp then checks the Authorization
    // header (and answers 401 with WWW-Authenticate) before any metric is read.
    server->impl_->exposer->RegisterAuth(
        [user = security.auth_user, password = security.auth_password](const std::string& u,
                                                                       const std::string& p) {
          const bool user_ok = same_secret(u, user);
          const bool password_ok = same_secret(p, password);
          return user_ok && password_ok;
        },
        kRealm);
  }
  server->impl_->exposer->RegisterCollectable(registry.impl().registry);
  server->impl_->exposer->RegisterCollectable(registry.impl().collectors);
  server->host_ = host;
  server->port_ = ports.front();
  return server;
}

MetricsServer::~MetricsServer() = default;

}  // namespace rstorm::metrics
