// Behaviour only the in-memory twin offers: simulated disconnection.
#include "common/in_memory_coordination.hpp"

#include <gtest/gtest.h>

#include "common/leader_election.hpp"
#include "tests/common/poll.hpp"

namespace rstorm::testing {
namespace {

TEST(InMemoryCoordination, DisconnectedClientFailsWithUnavailableUntilReconnected) {
  auto service = InMemoryCoordinationService::create();
  Recorder<SessionEvent> events;
  auto store = service->connect();
  store->add_session_listener([&](SessionEvent e) { events.push(e); });
  ASSERT_TRUE(store->create("/x", "1"));
  store->simulate_disconnect();
  EXPECT_EQ(store->get("/x").code(), ErrorCode::kUnavailable);
  EXPECT_EQ(store->create("/y", "").code(), ErrorCode::kUnavailable);
  store->simulate_reconnect();
  ASSERT_TRUE(events.wait_for_size(2));
  EXPECT_EQ(events.values(),
            (std::vector<SessionEvent>{SessionEvent::kDisconnected, SessionEvent::kConnected}));
  EXPECT_EQ(store->get("/x")->data, "1");
}

TEST(InMemoryCoordination, LeaderStepsDownWhileDisconnectedAndResumesOnReconnect) {
  auto service = InMemoryCoordinationService::create();
  Recorder<bool> changes;
  auto store = service->connect();
  LeaderElection election(*store, {"/leader", "n1"}, [&](bool l) { changes.push(l); },
                          Logger::null());
  ASSERT_TRUE(election.start());
  ASSERT_TRUE(election.is_leader());
  store->simulate_disconnect();
  ASSERT_TRUE(changes.wait_for_size(2));
  EXPECT_FALSE(election.is_leader());
  store->simulate_reconnect();
  ASSERT_TRUE(changes.wait_for_size(3));
  EXPECT_EQ(changes.values(), (std::vector<bool>{true, false, true}));
}

TEST(InMemoryCoordination, ExpiringAnUnknownSessionReturnsFalse) {
  auto service = InMemoryCoordinationService::create();
  EXPECT_FALSE(service->expire_session(424242));
}

TEST(InMemoryCoordination, ClosingAStoreRemovesOnlyItsEphemerals) {
  auto service = InMemoryCoordinationService::create();
  auto a = service->connect();
  auto b = service->connect();
  ASSERT_TRUE(a->create("/a", "", CreateMode::kEphemeral));
  ASSERT_TRUE(b->create("/b", "", CreateMode::kEphemeral));
  ASSERT_TRUE(a->create("/p", ""));
  a.reset();
  EXPECT_FALSE(b->exists("/a").value());
  EXPECT_TRUE(b->exists("/b").value());
  EXPECT_TRUE(b->exists("/p").value());
  EXPECT_EQ(service->node_count(), 3u);  // "/", "/b", "/p"
}

}  // namespace
}  // namespace rstorm::testing
