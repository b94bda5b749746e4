// The CoordinationStore contract, run against the in-memory twin and a real
// ZooKeeper server alike.
#include "common/coordination_store.hpp"

#include <gtest/gtest.h>

#include "tests/common/coordination_backends.hpp"
#include "tests/common/poll.hpp"

namespace rstorm::testing {
namespace {

template <typename Backend>
class CoordinationStoreContract : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { Backend::set_up_suite(); }
  static void TearDownTestSuite() { Backend::tear_down_suite(); }

  void SetUp() override {
    store_ = backend_.connect();
    ASSERT_NE(store_, nullptr);
    root_ = unique_root();
    ASSERT_TRUE(store_->ensure_path(root_));
  }
  void TearDown() override {
    if (store_) (void)store_->remove_recursive(root_);
  }

  std::string path(std::string_view name) const { return join_path(root_, name); }

  Backend backend_;
  std::unique_ptr<CoordinationStore> store_;
  std::string root_;
};

using Backends = ::testing::Types<InMemoryBackend, ZooKeeperBackend>;
class BackendNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return T::kName;
  }
};
TYPED_TEST_SUITE(CoordinationStoreContract, Backends, BackendNames);

TYPED_TEST(CoordinationStoreContract, CreateGetSetRemove) {
  auto& s = *this->store_;
  const auto p = this->path("node");
  auto created = s.create(p, "v0");
  ASSERT_TRUE(created) << created.status().to_string();
  EXPECT_EQ(*created, p);
  auto got = s.get(p);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->data, "v0");
  EXPECT_EQ(got->version, 0);
  EXPECT_EQ(got->ephemeral_owner, 0);
  auto v1 = s.set(p, "v1");
  ASSERT_TRUE(v1);
  EXPECT_EQ(*v1, 1);
  EXPECT_EQ(s.get(p)->data, "v1");
  ASSERT_TRUE(s.remove(p));
  EXPECT_EQ(s.get(p).code(), ErrorCode::kNotFound);
  EXPECT_EQ(s.exists(p).value(), false);
}

TYPED_TEST(CoordinationStoreContract, BinaryAndLargeDataRoundTrip) {
  auto& s = *this->store_;
  std::string binary("a\0b\xff\x01", 5);
  ASSERT_TRUE(s.create(this->path("bin"), binary));
  EXPECT_EQ(s.get(this->path("bin"))->data, binary);
  std::string large(200 * 1024, 'x');
  for (std::size_t i = 0; i < large.size(); i += 7) large[i] = static_cast<char>(i % 251);
  ASSERT_TRUE(s.create(this->path("large"), large));
  EXPECT_EQ(s.get(this->path("large"))->data, large);
  ASSERT_TRUE(s.create(this->path("empty"), ""));
  EXPECT_EQ(s.get(this->path("empty"))->data, "");
}

TYPED_TEST(CoordinationStoreContract, CreateExistingNodeFailsWithAlreadyExists) {
  auto& s = *this->store_;
  ASSERT_TRUE(s.create(this->path("x"), "1"));
  auto again = s.create(this->path("x"), "2");
  EXPECT_EQ(again.code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(s.get(this->path("x"))->data, "1");
}

TYPED_TEST(CoordinationStoreContract, CreateWithoutParentFailsWithNotFound) {
  auto created = this->store_->create(this->path("missing/child"), "");
  EXPECT_EQ(created.code(), ErrorCode::kNotFound);
  EXPECT_NE(created.status().message().find(this->path("missing")), std::string::npos)
      << created.status().message();
}

TYPED_TEST(CoordinationStoreContract, InvalidPathIsRejected) {
  auto& s = *this->store_;
  EXPECT_EQ(s.create("relative", "").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(s.create(this->path("trailing/"), "").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(s.get(this->root_ + "//x").code(), ErrorCode::kInvalidArgument);
}

TYPED_TEST(CoordinationStoreContract, CompareAndSetConflict) {
  auto& s = *this->store_;
  const auto p = this->path("cas");
  ASSERT_TRUE(s.create(p, "0"));
  auto other = this->backend_.connect();
  // Both read version 0; the first writer wins, the second conflicts.
  ASSERT_TRUE(s.set(p, "mine", 0));
  auto lost = other->set(p, "theirs", 0);
  EXPECT_EQ(lost.code(), ErrorCode::kVersionConflict);
  EXPECT_EQ(s.get(p)->data, "mine");
  EXPECT_EQ(s.get(p)->version, 1);
  EXPECT_EQ(other->remove(p, 0).code(), ErrorCode::kVersionConflict);
  EXPECT_TRUE(other->remove(p, 1));
}

TYPED_TEST(CoordinationStoreContract, RemoveNodeWithChildrenFailsWithNotEmpty) {
  auto& s = *this->store_;
  ASSERT_TRUE(s.create(this->path("dir"), ""));
  ASSERT_TRUE(s.create(this->path("dir/a"), ""));
  EXPECT_EQ(s.remove(this->path("dir")).code(), ErrorCode::kNotEmpty);
  EXPECT_EQ(s.remove(this->path("nothing")).code(), ErrorCode::kNotFound);
}

TYPED_TEST(CoordinationStoreContract, ChildrenAreSortedNames) {
  auto& s = *this->store_;
  ASSERT_TRUE(s.create(this->path("dir"), ""));
  for (auto name : {"c", "a", "b"}) ASSERT_TRUE(s.create(this->path("dir/") + name, ""));
  EXPECT_EQ(s.children(this->path("dir")).value(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(s.children(this->path("nothing")).code(), ErrorCode::kNotFound);
}

TYPED_TEST(CoordinationStoreContract, EnsurePathAndRemoveRecursive) {
  auto& s = *this->store_;
  ASSERT_TRUE(s.ensure_path(this->path("a/b/c")));
  ASSERT_TRUE(s.ensure_path(this->path("a/b/c")));  // idempotent
  ASSERT_TRUE(s.create(this->path("a/b/d"), "x"));
  EXPECT_EQ(s.children(this->path("a/b")).value(), (std::vector<std::string>{"c", "d"}));
  ASSERT_TRUE(s.remove_recursive(this->path("a")));
  EXPECT_FALSE(s.exists(this->path("a")).value());
  EXPECT_TRUE(s.remove_recursive(this->path("a")));  // missing is fine
}

TYPED_TEST(CoordinationStoreContract, SequentialNodesGetIncreasingSuffixes) {
  auto& s = *this->store_;
  ASSERT_TRUE(s.create(this->path("q"), ""));
  std::vector<std::string> created;
  for (int i = 0; i < 3; ++i) {
    auto p = s.create(this->path("q/item-"), std::to_string(i), CreateMode::kPersistentSequential);
    ASSERT_TRUE(p) << p.status().to_string();
    created.push_back(*p);
  }
  EXPECT_EQ(created, (std::vector<std::string>{this->path("q/item-0000000000"),
                                               this->path("q/item-0000000001"),
                                               this->path("q/item-0000000002")}));
  EXPECT_EQ(s.get(created[2])->data, "2");
}

TYPED_TEST(CoordinationStoreContract, EphemeralNodeVanishesWhenSessionCloses) {
  auto owner = this->backend_.connect();
  const auto p = this->path("eph");
  ASSERT_TRUE(owner->create(p, "alive", CreateMode::kEphemeral));
  auto seen = this->store_->get(p);
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->ephemeral_owner, owner->session_id());
  Recorder<WatchEvent> events;
  ASSERT_TRUE(this->store_->exists(p, [&](const WatchEvent& e) { events.push(e); }).value());
  owner.reset();  // closes the session
  ASSERT_TRUE(events.wait_for_size(1));
  EXPECT_EQ(events.values()[0].type, WatchEventType::kDeleted);
  EXPECT_FALSE(this->store_->exists(p).value());
}

TYPED_TEST(CoordinationStoreContract, EphemeralNodeCannotHaveChildren) {
  auto& s = *this->store_;
  ASSERT_TRUE(s.create(this->path("eph"), "", CreateMode::kEphemeral));
  EXPECT_EQ(s.create(this->path("eph/child"), "").code(), ErrorCode::kInvalidArgument);
}

TYPED_TEST(CoordinationStoreContract, DataWatchFiresOnceOnChange) {
  auto& s = *this->store_;
  const auto p = this->path("w");
  ASSERT_TRUE(s.create(p, "0"));
  Recorder<WatchEvent> first;
  ASSERT_TRUE(s.get(p, [&](const WatchEvent& e) { first.push(e); }));
  ASSERT_TRUE(s.set(p, "1"));
  ASSERT_TRUE(s.set(p, "2"));
  // A second watch, triggered after both sets: events arrive in order, so once
  // it has fired the first watch has had every chance to fire twice.
  Recorder<WatchEvent> second;
  ASSERT_TRUE(s.get(p, [&](const WatchEvent& e) { second.push(e); }));
  ASSERT_TRUE(s.remove(p));
  ASSERT_TRUE(second.wait_for_size(1));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first.values()[0].type, WatchEventType::kDataChanged);
  EXPECT_EQ(first.values()[0].path, p);
  EXPECT_EQ(second.values()[0].type, WatchEventType::kDeleted);
}

TYPED_TEST(CoordinationStoreContract, ExistsWatchFiresOnCreation) {
  auto& s = *this->store_;
  const auto p = this->path("later");
  Recorder<WatchEvent> events;
  ASSERT_FALSE(s.exists(p, [&](const WatchEvent& e) { events.push(e); }).value());
  auto other = this->backend_.connect();
  ASSERT_TRUE(other->create(p, "here"));
  ASSERT_TRUE(events.wait_for_size(1));
  EXPECT_EQ(events.values()[0].type, WatchEventType::kCreated);
  EXPECT_EQ(events.values()[0].path, p);
}

TYPED_TEST(CoordinationStoreContract, ChildrenWatchFiresOnAddAndCanBeRearmedFromCallback) {
  auto& s = *this->store_;
  const auto dir = this->path("kids");
  ASSERT_TRUE(s.create(dir, ""));
  Recorder<std::vector<std::string>> snapshots;
  // The callback re-reads (and re-arms) from the dispatch thread.
  std::function<void(const WatchEvent&)> watch = [&](const WatchEvent&) {
    auto kids = s.children(dir, watch);
    if (kids) snapshots.push(*kids);
  };
  ASSERT_TRUE(s.children(dir, watch));
  auto other = this->backend_.connect();
  ASSERT_TRUE(other->create(dir + "/a", ""));
  ASSERT_TRUE(snapshots.wait_for_size(1));
  ASSERT_TRUE(other->create(dir + "/b", ""));
  ASSERT_TRUE(snapshots.wait_for_size(2));
  ASSERT_TRUE(other->remove(dir + "/a"));
  ASSERT_TRUE(snapshots.wait_for_size(3));
  auto values = snapshots.values();
  EXPECT_EQ(values[0], (std::vector<std::string>{"a"}));
  EXPECT_EQ(values[1], (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(values[2], (std::vector<std::string>{"b"}));
  this->store_.reset();  // no callback may outlive `watch` and `snapshots`
}

TYPED_TEST(CoordinationStoreContract, SessionExpiryDropsEphemeralsAndOwnerRecreatesThem) {
  Recorder<SessionEvent> events;  // outlives `owner` and its listener
  auto owner = this->backend_.connect();
  const auto p = this->path("registration");
  ASSERT_TRUE(owner->create(p, "s1", CreateMode::kEphemeral));
  const auto old_session = owner->session_id();
  owner->add_session_listener([&](SessionEvent e) {
    events.push(e);
    if (e == SessionEvent::kNewSession) {
      auto again = owner->create(p, "s1", CreateMode::kEphemeral);
      EXPECT_TRUE(again) << again.status().to_string();
    }
  });
  this->backend_.expire(*owner);
  ASSERT_TRUE(eventually([&] {
    auto v = events.values();
    return std::find(v.begin(), v.end(), SessionEvent::kNewSession) != v.end();
  }));
  auto v = events.values();
  auto expired = std::find(v.begin(), v.end(), SessionEvent::kExpired);
  auto fresh = std::find(v.begin(), v.end(), SessionEvent::kNewSession);
  ASSERT_NE(expired, v.end());
  EXPECT_LT(expired - v.begin(), fresh - v.begin());
  EXPECT_NE(owner->session_id(), old_session);
  ASSERT_TRUE(eventually([&] {
    auto node = this->store_->get(p);
    return node && node->ephemeral_owner == owner->session_id();
  }));
  EXPECT_EQ(this->store_->get(p)->data, "s1");
}

}  // namespace
}  // namespace rstorm::testing
