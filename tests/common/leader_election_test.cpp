// Leader election on both coordination stores: lowest candidate leads, the
// next takes over when the leader's session closes or expires.
#include "common/leader_election.hpp"

#include <gtest/gtest.h>

#include "tests/common/coordination_backends.hpp"
#include "tests/common/poll.hpp"

namespace rstorm::testing {
namespace {

template <typename Backend>
class LeaderElectionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { Backend::set_up_suite(); }
  static void TearDownTestSuite() { Backend::tear_down_suite(); }

  // One candidate: its own session, its election, what its callback saw.
  struct Candidate {
    Recorder<bool> changes;
    std::unique_ptr<CoordinationStore> store;
    std::unique_ptr<LeaderElection> election;
  };

  std::unique_ptr<Candidate> join(const std::string& id) {
    auto c = std::make_unique<Candidate>();
    c->store = backend_.connect();
    auto* changes = &c->changes;
    c->election = std::make_unique<LeaderElection>(
        *c->store, LeaderElection::Options{election_path_, id},
        [changes](bool leading) { changes->push(leading); }, Logger::null());
    Status s = c->election->start();
    EXPECT_TRUE(s) << s.to_string();
    return c;
  }

  Backend backend_;
  std::string election_path_ = unique_root() + "/nimbus/leader";
};

using Backends = ::testing::Types<InMemoryBackend, ZooKeeperBackend>;
class BackendNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return T::kName;
  }
};
TYPED_TEST_SUITE(LeaderElectionTest, Backends, BackendNames);

TYPED_TEST(LeaderElectionTest, FirstCandidateLeadsAndOthersFollow) {
  auto a = this->join("nimbus-a");
  auto b = this->join("nimbus-b");
  auto c = this->join("nimbus-c");
  ASSERT_TRUE(eventually([&] { return a->election->is_leader(); }));
  EXPECT_FALSE(b->election->is_leader());
  EXPECT_FALSE(c->election->is_leader());
  EXPECT_EQ(b->election->leader().value(), "nimbus-a");
  EXPECT_EQ(a->changes.values(), std::vector<bool>{true});
  EXPECT_TRUE(b->changes.values().empty());
}

TYPED_TEST(LeaderElectionTest, LeadershipHandsOverWhenLeaderSessionCloses) {
  auto a = this->join("nimbus-a");
  auto b = this->join("nimbus-b");
  auto c = this->join("nimbus-c");
  ASSERT_TRUE(eventually([&] { return a->election->is_leader(); }));
  // The leader's process dies: its session closes without a resign.
  a->store.reset();
  ASSERT_TRUE(b->changes.wait_for_size(1));
  EXPECT_EQ(b->changes.values(), std::vector<bool>{true});
  EXPECT_TRUE(b->election->is_leader());
  EXPECT_FALSE(c->election->is_leader());
  EXPECT_EQ(c->election->leader().value(), "nimbus-b");
  // `a` crashed: its election object must not touch the closed store again.
  // Keep it reachable (not freed, not leaked) for the rest of the process.
  static auto* crashed = new std::vector<std::unique_ptr<LeaderElection>>();
  crashed->push_back(std::move(a->election));
}

TYPED_TEST(LeaderElectionTest, StopResignsToTheNextCandidate) {
  auto a = this->join("nimbus-a");
  auto b = this->join("nimbus-b");
  ASSERT_TRUE(eventually([&] { return a->election->is_leader(); }));
  a->election->stop();
  EXPECT_FALSE(a->election->is_leader());
  EXPECT_EQ(a->changes.values(), (std::vector<bool>{true, false}));
  ASSERT_TRUE(b->changes.wait_for_size(1));
  EXPECT_TRUE(b->election->is_leader());
  EXPECT_EQ(a->election->node_path(), "");
}

TYPED_TEST(LeaderElectionTest, LeaderWhoseSessionExpiresStepsDownAndRejoins) {
  auto a = this->join("nimbus-a");
  auto b = this->join("nimbus-b");
  ASSERT_TRUE(eventually([&] { return a->election->is_leader(); }));
  const std::string first_node = a->election->node_path();
  this->backend_.expire(*a->store);
  ASSERT_TRUE(b->changes.wait_for_size(1));
  EXPECT_TRUE(b->election->is_leader());
  // `a` re-joins behind `b` with a new node. (Against a real server, the
  // connection that ends the session first steals it from `a`, so `a` may see
  // disconnect/reconnect flips before the expiry: every flip is a real change.)
  ASSERT_TRUE(eventually([&] {
    auto node = a->election->node_path();
    return !node.empty() && node != first_node;
  }));
  EXPECT_FALSE(a->election->is_leader());
  auto flips = a->changes.values();
  ASSERT_GE(flips.size(), 2u);
  EXPECT_TRUE(flips.front());
  EXPECT_FALSE(flips.back());
  for (std::size_t i = 1; i < flips.size(); ++i) EXPECT_NE(flips[i], flips[i - 1]) << i;
  b->election->stop();
  ASSERT_TRUE(eventually([&] { return a->election->is_leader(); }));
  EXPECT_TRUE(a->changes.values().back());
}

}  // namespace
}  // namespace rstorm::testing
