#include "common/metrics/exposer.hpp"

#include <netdb.h>
#include <openssl/crypto.h>
#include <prometheus/exposer.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

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

// Connects to host:port and closes at once, to wake the server's listening
// thread; false when nothing could be connected to.
bool knock(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return false;
  bool connected = false;
  for (addrinfo* a = found; a != nullptr && !connected; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    timeval timeout{0, 200'000};  // bounds connect() too: the host is one of ours
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    connected = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return connected;
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

MetricsServer::~MetricsServer() {
  if (!impl_ || !impl_->exposer) return;
  // civetweb's listening thread sees the stop only between two polls of its
  // socket, up to 2 s apart, unless a connection wakes it: the server is
  // knocked on while it stops, and stops in milliseconds.
  std::mutex mutex;
  std::condition_variable cv;
  bool stopped = false;
  const std::string host = host_.empty() || host_ == "0.0.0.0" ? "127.0.0.1"
                           : host_ == "::"                     ? "::1"
                                                               : host_;
  std::thread knocker([&] {
    std::unique_lock lock(mutex);
    while (!stopped) {
      lock.unlock();
      const bool answered = knock(host, port_);
      lock.lock();
      if (!answered) break;  // no longer listening
      cv.wait_for(lock, std::chrono::milliseconds(10), [&] { return stopped; });
    }
  });
  impl_->exposer.reset();
  {
    std::lock_guard lock(mutex);
    stopped = true;
  }
  cv.notify_all();
  knocker.join();
}

}  // namespace rstorm::metrics
