// ZooKeeperServer: a real ZooKeeper server for tests (Debian's `zookeeper`
// package), started as a child process on a free loopback port with a
// temporary data directory, stopped by pid (SIGTERM, then waitpid), and
// restartable on the same port and data directory to test recovery.
//
// Usage:
//   auto zk = rstorm::testing::ZooKeeperServer::start();
//   ASSERT_TRUE(zk) << zk.status().to_string();
//   ... (*zk)->connect_string() ...
//
// Thread contract: thread-compatible (drive it from the test thread).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "common/status.hpp"

namespace rstorm::testing {

class ZooKeeperServer {
 public:
  struct Options {
    // Deadline for the server to answer "ruok". Default 60 s (a busy 2-core box).
    std::chrono::milliseconds start_timeout{60000};
    // ZooKeeper's tick; sessions may last 2 to 20 ticks. Default 2000 ms.
    int tick_time_ms = 2000;
    std::string java = "/usr/bin/java";
    std::string classpath = "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar";
  };

  // Starts a server; fails with a message that includes the log's tail.
  static Result<std::unique_ptr<ZooKeeperServer>> start(Options options);
  static Result<std::unique_ptr<ZooKeeperServer>> start() { return start(Options{}); }
  ~ZooKeeperServer();  // stops the server and deletes its directory

  ZooKeeperServer(const ZooKeeperServer&) = delete;
  ZooKeeperServer& operator=(const ZooKeeperServer&) = delete;

  // SIGTERM, then SIGKILL if it has not exited within 20 s; reaps the process.
  Status stop();
  // Starts again on the same port and data directory (stopping it first if running).
  Status restart();

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  // "127.0.0.1:<port>"
  std::string connect_string() const;
  const std::filesystem::path& data_dir() const { return data_dir_; }
  // The server's stdout and stderr.
  const std::filesystem::path& log_file() const { return log_file_; }

  // Ends the session `session_id` on the server as a timeout would: a second
  // client attaches to the session with its password and closes it, again
  // until the server reports the session expired (the owner's reconnect can
  // win the first race). The owner then sees its session expire.
  Status expire_session(std::int64_t session_id, const std::string& password) const;

  // Asks "ruok"; true when the server answers "imok".
  bool is_ready() const;

 private:
  ZooKeeperServer(Options options, std::filesystem::path dir, int port);
  Status launch();
  std::string log_tail() const;

  const Options options_;
  const std::filesystem::path dir_;
  const std::filesystem::path data_dir_;
  const std::filesystem::path config_file_;
  const std::filesystem::path log_file_;
  int port_;
  pid_t pid_ = -1;
};

// A free TCP port on 127.0.0.1 (bound then released; a race is possible but rare).
Result<int> free_loopback_port();

}  // namespace rstorm::testing
