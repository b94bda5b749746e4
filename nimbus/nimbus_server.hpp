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
    // Largest accepted frame, and so string. Default 16 MiB; a chunk is at most 1 MiB.
    int max_frame_bytes = 16 << 20;
    // Most elements of one list, set or map in a call. Thrift allocates a
    // string or a list before reading it: without these bounds, a few bytes
    // claiming a 2 GB name or 250 million strings make nimbus allocate them.
    // Default 100000 (real lists, such as components, config keys or a
    // worker's executors, are far shorter).
    int max_container_elements = 100000;
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
