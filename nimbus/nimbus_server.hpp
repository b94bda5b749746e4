// NimbusServer: the Thrift face of a Nimbus. A TThreadedServer (one thread
// per connection; framed transport, binary protocol) bound to host:port that
// maps each call onto Nimbus and each error Status onto the IDL's exceptions
// (a standby answers mutating calls with NotLeaderException naming the leader).
//
// Secure mode: a second listener on tls_port speaks mutual TLS
// (common/security/tls.hpp); the client's certificate names its principal,
// mapped to a local user, and every call passes the authorizer before it
// reaches Nimbus (a denial is logged and answered with AuthorizationException).
// Upload and download sessions belong to the connection that opened them.
//
// Thread contract: start() and stop() from one owning thread; the server runs
// on its own thread plus one per client connection. REQUIRES: the Nimbus
// outlives this object.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "common/logger.hpp"
#include "common/security/authorizer.hpp"
#include "common/security/tls.hpp"
#include "common/status.hpp"
#include "nimbus/nimbus.hpp"

namespace apache::thrift::server {
class TThreadedServer;
}

namespace rstorm::nimbus {

class NimbusServer {
 public:
  struct Options {
    std::string host = "127.0.0.1";  // bind address (nimbus.thrift.host)
    int port = 6627;                 // 0: any free port (see port())
    // Largest accepted frame, and so string. Default 16 MiB; a chunk is at most 1 MiB.
    int max_frame_bytes = 16 << 20;
    // Most elements of one list, set or map in a call. Thrift allocates a
    // string or a list before reading it: without these bounds, a few bytes
    // claiming a 2 GB name or 250 million strings make nimbus allocate them.
    // Default 100000 (real lists, such as components, config keys or a
    // worker's executors, are far shorter).
    int max_container_elements = 100000;
    // Serve plaintext on `port`. False with TLS only (nimbus.thrift.tls.server.only).
    bool plaintext = true;
    // Serve mutual TLS on tls_port with these files (nimbus.thrift.tls.server.*).
    std::optional<security::TlsFiles> tls;
    int tls_port = 6067;  // nimbus.thrift.tls.port; 0: any free port
    security::Authorizer::Options authorizer;
    security::PrincipalMapper principals;
  };
  NimbusServer(Nimbus& nimbus, Options options, Logger logger);
  ~NimbusServer();  // stop()

  // Binds and starts serving; returns once the socket listens
  // (kUnavailable naming host:port when it cannot bind).
  Status start();
  void stop();
  // The bound ports (after start()); 0 for a listener not served.
  int port() const { return plain_.port; }
  int tls_port() const { return tls_.port; }

 private:
  struct Listener {
    std::shared_ptr<apache::thrift::server::TThreadedServer> server;
    std::thread thread;
    int port = 0;
  };
  Status listen(Listener& listener, bool tls);
  void stop(Listener& listener);

  Nimbus& nimbus_;
  const Options options_;
  const Logger logger_;
  std::shared_ptr<const security::Authorizer> authorizer_;
  Listener plain_;
  Listener tls_;
};

// Logs one line of Thrift's global output (a server's connection that ended
// badly) to `logger`: a warning, except for a client that closed before its
// TLS handshake began (a port check, such as a load balancer's or the dev
// cluster's), logged at debug. Echoes of the socket's close are dropped.
void log_thrift_output(const Logger& logger, std::string_view line);

}  // namespace rstorm::nimbus
