// MetricsServer: serves a Registry at http://host:port/metrics (prometheus-cpp's
// HTTP server, its own threads), or https:// with TLS, optionally behind HTTP
// basic authentication (both done by prometheus-cpp and its civetweb). Port 0
// picks a free port; port() tells which.
//
// Thread contract: thread-safe after start(). Destroying it stops the server
// (within milliseconds: its listening thread is woken by a connection).
#pragma once

#include <memory>
#include <string>

#include "common/metrics/metrics.hpp"
#include "rstorm/status.hpp"

namespace rstorm::metrics {

// How a MetricsServer guards /metrics. The default, all empty, is plain HTTP
// without authentication.
struct ServerSecurity {
  // HTTPS (TLS 1.2 at least) when set: the PEM certificate, leaf first and then
  // any intermediates, and its unencrypted PEM private key. Both or neither.
  std::string tls_cert_path;  // storm.metrics.tls.cert.path
  std::string tls_key_path;   // storm.metrics.tls.key.path
  // HTTP basic authentication when auth_user is set: a request without these
  // credentials, or with others, gets 401.
  std::string auth_user;      // storm.metrics.auth.user
  std::string auth_password;  // the content of storm.metrics.auth.password.file

  bool tls() const { return !tls_cert_path.empty(); }
  bool auth() const { return !auth_user.empty(); }
};

class MetricsServer {
 public:
  // Fails naming host and port when it cannot listen (e.g. the port is taken),
  // or naming the certificate or key file that cannot be used.
  // REQUIRES: security's TLS paths both set or both empty.
  // `registry` is borrowed and must outlive the server.
  static api::Result<std::unique_ptr<MetricsServer>> start(const std::string& host, int port,
                                                           Registry& registry,
                                                           const ServerSecurity& security = {});
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  // host:port, as a Prometheus target.
  std::string target() const { return host_ + ":" + std::to_string(port_); }
  // "https" with TLS, else "http".
  const std::string& scheme() const { return scheme_; }
  std::string url() const { return scheme_ + "://" + target() + "/metrics"; }

 private:
  struct Impl;
  MetricsServer() = default;
  std::unique_ptr<Impl> impl_;
  std::string host_;
  int port_ = 0;
  std::string scheme_ = "http";
};

}  // namespace rstorm::metrics
