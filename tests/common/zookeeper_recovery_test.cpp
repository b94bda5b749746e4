// ZooKeeperStore against a real server that goes away: unreachable servers,
// a server restart on the same port and data directory.
#include <gtest/gtest.h>

#include "common/zookeeper_store.hpp"
#include "tests/common/poll.hpp"
#include "tests/common/zookeeper_server.hpp"

namespace rstorm::testing {
namespace {

ZooKeeperOptions options_for(const std::string& servers) {
  ZooKeeperOptions o;
  o.servers = servers;
  o.session_timeout = std::chrono::milliseconds(20000);
  o.connection_timeout = std::chrono::seconds(30);
  o.retry_times = 3;
  o.retry_interval = std::chrono::milliseconds(200);
  o.retry_interval_ceiling = std::chrono::milliseconds(1000);
  return o;
}

TEST(ZooKeeperRecovery, ConnectToUnreachableServerFailsWithUnavailable) {
  auto port = free_loopback_port();
  ASSERT_TRUE(port);
  auto options = options_for("127.0.0.1:" + std::to_string(*port));
  options.connection_timeout = std::chrono::milliseconds(1500);
  auto store = ZooKeeperStore::connect(options, Logger::null());
  ASSERT_FALSE(store);
  EXPECT_EQ(store.code(), ErrorCode::kUnavailable);
  EXPECT_EQ(store.status().message(), "no ZooKeeper session with 127.0.0.1:" +
                                          std::to_string(*port) + " within 1500 ms");
}

TEST(ZooKeeperRecovery, OperationWhileServerDownFailsWithUnavailableThenWorksAfterRestart) {
  auto server = ZooKeeperServer::start();
  ASSERT_TRUE(server) << server.status().to_string();
  auto& zk = **server;
  auto connected = ZooKeeperStore::connect(options_for(zk.connect_string()), Logger::null());
  ASSERT_TRUE(connected) << connected.status().to_string();
  auto& store = **connected;
  Recorder<SessionEvent> events;
  store.add_session_listener([&](SessionEvent e) { events.push(e); });
  ASSERT_TRUE(store.create("/kept", "before"));

  ASSERT_TRUE(zk.stop());
  ASSERT_TRUE(events.wait_for_size(1));
  EXPECT_EQ(events.values()[0], SessionEvent::kDisconnected);
  auto failed = store.get("/kept");
  EXPECT_EQ(failed.code(), ErrorCode::kUnavailable);
  EXPECT_NE(failed.status().message().find(zk.connect_string()), std::string::npos)
      << failed.status().message();

  ASSERT_TRUE(zk.restart());
  ASSERT_TRUE(events.wait_for_size(2));
  EXPECT_EQ(events.values()[1], SessionEvent::kConnected);
  EXPECT_EQ(store.get("/kept")->data, "before");  // the data directory survived
  EXPECT_TRUE(store.create("/after", "x"));
  EXPECT_TRUE(store.is_connected());
}

// A daemon stopping for good (stop_retrying) with its server down: each call
// fails after one attempt, saying so, instead of retrying with back-off.
TEST(ZooKeeperRecovery, AStoreThatStopsRetryingFailsAtOnceWhileTheServerIsDown) {
  auto server = ZooKeeperServer::start();
  ASSERT_TRUE(server) << server.status().to_string();
  auto& zk = **server;
  auto connected = ZooKeeperStore::connect(options_for(zk.connect_string()), Logger::null());
  ASSERT_TRUE(connected) << connected.status().to_string();
  auto& store = **connected;
  ASSERT_TRUE(store.create("/kept", "before"));
  ASSERT_TRUE(zk.stop());
  auto retried = store.get("/kept");
  EXPECT_EQ(retried.code(), ErrorCode::kUnavailable);
  EXPECT_NE(retried.status().message().find("failed after 3 attempts"), std::string::npos)
      << retried.status().message();
  store.stop_retrying();
  auto once = store.remove("/kept");
  EXPECT_EQ(once.code(), ErrorCode::kUnavailable);
  EXPECT_NE(once.message().find("failed, not retried while stopping"), std::string::npos)
      << once.message();
}

TEST(ZooKeeperRecovery, EphemeralSurvivesServerRestartWithinSessionTimeout) {
  auto server = ZooKeeperServer::start();
  ASSERT_TRUE(server) << server.status().to_string();
  auto& zk = **server;
  auto owner = ZooKeeperStore::connect(options_for(zk.connect_string()), Logger::null());
  ASSERT_TRUE(owner) << owner.status().to_string();
  ASSERT_TRUE((*owner)->create("/supervisor-1", "s1", CreateMode::kEphemeral));
  const auto session = (*owner)->session_id();

  ASSERT_TRUE(zk.restart());
  // The client reconnects to the restarted server with the same session.
  ASSERT_TRUE(eventually([&] { return (*owner)->is_connected(); }));
  auto node = (*owner)->get("/supervisor-1");
  ASSERT_TRUE(node) << node.status().to_string();
  EXPECT_EQ(node->ephemeral_owner, session);
  EXPECT_EQ((*owner)->session_id(), session);
}

TEST(ZooKeeperRecovery, ExpiredSessionIsReplacedAndOwnerRecreatesEphemeralAfterRestart) {
  auto server = ZooKeeperServer::start();
  ASSERT_TRUE(server) << server.status().to_string();
  auto& zk = **server;
  Recorder<SessionEvent> events;
  auto owner = ZooKeeperStore::connect(options_for(zk.connect_string()), Logger::null());
  ASSERT_TRUE(owner) << owner.status().to_string();
  auto& store = **owner;
  store.add_session_listener([&](SessionEvent e) {
    if (e == SessionEvent::kNewSession) {
      EXPECT_TRUE(store.create("/supervisor-1", "s1", CreateMode::kEphemeral));
    }
    events.push(e);
  });
  ASSERT_TRUE(store.create("/supervisor-1", "s1", CreateMode::kEphemeral));
  const auto first_session = store.session_id();

  // The session ends on the server while this client is cut off by a restart.
  ASSERT_TRUE(zk.stop());
  ASSERT_TRUE(events.wait_for_size(1));
  ASSERT_TRUE(zk.restart());
  ASSERT_TRUE(zk.expire_session(first_session, store.session_password()));

  ASSERT_TRUE(eventually([&] {
    auto v = events.values();
    return std::find(v.begin(), v.end(), SessionEvent::kNewSession) != v.end();
  }));
  EXPECT_NE(store.session_id(), first_session);
  auto node = store.get("/supervisor-1");
  ASSERT_TRUE(node) << node.status().to_string();
  EXPECT_EQ(node->ephemeral_owner, store.session_id());
}

}  // namespace
}  // namespace rstorm::testing
