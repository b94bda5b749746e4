// Behaviour only the in-memory twin offers: simulated disconnection.
#include "common/in_memory_coordination.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/callback_lifeline.hpp"
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

// A watch fires on the store's thread whenever its node changes, which may be
// after the object that set it is gone: through a closed lifeline it reaches
// nothing, through an open one it runs.
TEST(CallbackLifeline, AWatchFiredAfterItsOwnerClosedReachesNothing) {
  auto service = InMemoryCoordinationService::create();
  auto store = service->connect();
  ASSERT_TRUE(store->create("/nodes", ""));
  auto gone_calls = std::make_shared<std::atomic<int>>(0);
  auto live_calls = std::make_shared<std::atomic<int>>(0);
  CallbackLifeline live;
  {
    CallbackLifeline gone;
    ASSERT_TRUE(
        store->children("/nodes", gone.guard([gone_calls](const WatchEvent&) { ++*gone_calls; })));
    ASSERT_TRUE(
        store->children("/nodes", live.guard([live_calls](const WatchEvent&) { ++*live_calls; })));
  }  // `gone` closes here, its watch still set
  ASSERT_TRUE(store->create("/nodes/a", ""));
  store->wait_for_callbacks();
  EXPECT_EQ(gone_calls->load(), 0);
  EXPECT_EQ(live_calls->load(), 1);
}

// close() waits for a callback that is running: once it returns, nothing of
// the owner is touched again.
TEST(CallbackLifeline, CloseWaitsForACallbackThatIsRunning) {
  CallbackLifeline lifeline;
  std::atomic<bool> entered{false}, closing{false}, closed{false}, closed_while_running{false};
  auto callback = lifeline.guard([&] {
    entered = true;
    ASSERT_TRUE(eventually([&] { return closing.load(); }));
    // A close() that did not wait would return within this bounded look.
    closed_while_running =
        eventually([&] { return closed.load(); }, std::chrono::milliseconds(100));
  });
  std::thread runner([&] { callback(); });
  ASSERT_TRUE(eventually([&] { return entered.load(); }));
  std::thread closer([&] {
    closing = true;
    lifeline.close();
    closed = true;
  });
  runner.join();
  closer.join();
  EXPECT_FALSE(closed_while_running.load());
  int calls = 0;
  lifeline.guard([&] { ++calls; })();
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace rstorm::testing
