// The two CoordinationStore implementations as test backends, so that one
// typed test suite holds both to the same contract. The ZooKeeper backend
// shares one real server per test binary; each test works under its own root.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <memory>

#include "common/in_memory_coordination.hpp"
#include "common/zookeeper_store.hpp"
#include "tests/common/zookeeper_server.hpp"

namespace rstorm::testing {

class InMemoryBackend {
 public:
  static constexpr const char* kName = "InMemory";
  static void set_up_suite() {}
  static void tear_down_suite() {}

  std::unique_ptr<CoordinationStore> connect() { return service_->connect(); }
  // Ends the store's session as a server-side timeout would.
  void expire(CoordinationStore& store) {
    ASSERT_TRUE(service_->expire_session(store.session_id()));
  }

 private:
  std::shared_ptr<InMemoryCoordinationService> service_ = InMemoryCoordinationService::create();
};

class ZooKeeperBackend {
 public:
  static constexpr const char* kName = "ZooKeeper";
  static void set_up_suite() {
    auto started = ZooKeeperServer::start();
    ASSERT_TRUE(started) << started.status().to_string();
    server() = std::move(*started);
  }
  static void tear_down_suite() { server().reset(); }

  std::unique_ptr<CoordinationStore> connect() {
    ZooKeeperOptions options;
    options.servers = server()->connect_string();
    options.session_timeout = std::chrono::milliseconds(6000);
    options.connection_timeout = std::chrono::seconds(30);
    options.retry_interval = std::chrono::milliseconds(200);
    auto store = ZooKeeperStore::connect(options, Logger::null());
    EXPECT_TRUE(store) << store.status().to_string();
    return store ? std::unique_ptr<CoordinationStore>(std::move(*store)) : nullptr;
  }
  void expire(CoordinationStore& store) {
    auto& zk = dynamic_cast<ZooKeeperStore&>(store);
    Status s = server()->expire_session(zk.session_id(), zk.session_password());
    ASSERT_TRUE(s) << s.to_string();
  }

  static std::unique_ptr<ZooKeeperServer>& server() {
    static std::unique_ptr<ZooKeeperServer> instance;
    return instance;
  }
};

// A fresh root path per test so that tests on one server do not see each other.
inline std::string unique_root() {
  static std::atomic<int> counter{0};
  return "/test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

}  // namespace rstorm::testing
