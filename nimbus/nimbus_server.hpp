// NimbusServer: the Thrift face of a Nimbus. A TThreadedServer (one thread
// per connection; framed transport, binary protocol) bound to host:port that
// maps each call onto Nimbus and each error Status onto the IDL's exceptions
// (a standby answers mutating calls with NotLeaderException naming the leader).
//
// Thread contract: start() and stop() from one owning thread; the server runs
// on its own thread plus one per client connection. REQUIRES: the Nimbus
// outlives this object.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "common/logger.hpp"
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
    // Largest accepted frame. Default 16 MiB; a chunk is at most 1 MiB.
    int max_frame_bytes = 16 << 20;
  };
  NimbusServer(Nimbus& nimbus, Options options, Logger logger);
  ~NimbusServer();  // stop()

  // Binds and starts serving; returns once the socket listens
  // (kUnavailable naming host:port when it cannot bind).
  Status start();
  void stop();
  // The bound port (after start()).
  int port() const { return port_; }

 private:
  Nimbus& nimbus_;
  const Options options_;
  const Logger logger_;
  int port_ = 0;
  std::shared_ptr<apache::thrift::server::TThreadedServer> server_;
  std::thread thread_;
};

}  // namespace rstorm::nimbus
