// Worker tokens' keys over the in-memory coordination store, on a clock the
// test moves: a key signs for one life, the next takes over, a key goes once
// every token it signed has expired; and the checks of a token.
#include "nimbus/worker_tokens.hpp"

#include <gtest/gtest.h>

#include "common/in_memory_coordination.hpp"
#include "common/thrift/codec.hpp"

namespace rstorm::nimbus {
namespace {

constexpr std::int64_t kLife = 1000;  // ms

class WorkerTokensTest : public ::testing::Test {
 protected:
  std::int64_t version_of(const thrift::WorkerToken& token) {
    auto info = read_worker_token_info(token);
    EXPECT_TRUE(info) << info.status().to_string();
    return info ? info->key_version : -1;
  }
  std::vector<std::string> keys() {
    auto names = store_->children("/rstorm/worker-token-keys");
    return names ? *names : std::vector<std::string>{};
  }

  std::shared_ptr<InMemoryCoordinationService> service_ = InMemoryCoordinationService::create();
  std::unique_ptr<CoordinationStore> store_ = service_->connect();
  ClusterPaths paths_{"/rstorm"};
  WorkerTokenKeys tokens_{*store_, paths_, std::chrono::milliseconds(kLife), Logger::null()};
};

TEST_F(WorkerTokensTest, AKeySignsForOneLifeAndGoesWhenItsTokensHaveExpired) {
  auto first = tokens_.issue("wc-1", "alice", 0);
  ASSERT_TRUE(first) << first.status().to_string();
  EXPECT_EQ(version_of(*first), 1);
  auto later = tokens_.issue("wc-1", "alice", kLife - 1);
  ASSERT_TRUE(later);
  EXPECT_EQ(version_of(*later), 1);
  EXPECT_TRUE(tokens_.verify(*later, kLife));  // issued at 999: valid until 1999

  auto next = tokens_.issue("wc-1", "alice", kLife);
  ASSERT_TRUE(next);
  EXPECT_EQ(version_of(*next), 2);
  EXPECT_EQ(keys(), (std::vector<std::string>{"0000000001", "0000000002"}));
  EXPECT_TRUE(tokens_.verify(*later, 2 * kLife - 2));  // key 1 still checks its tokens
  auto expired = tokens_.verify(*first, kLife);
  ASSERT_FALSE(expired);
  EXPECT_EQ(expired.code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(expired.status().message().find("worker token for topology 'wc-1' expired at 1970-"),
            std::string::npos)
      << expired.status().message();

  // Two lives after key 1 was made, every token it signed has expired: it
  // goes (as key 2's life ends and key 3 takes over).
  auto third = tokens_.issue("wc-1", "alice", 2 * kLife);
  ASSERT_TRUE(third);
  EXPECT_EQ(version_of(*third), 3);
  EXPECT_EQ(keys(), (std::vector<std::string>{"0000000002", "0000000003"}));
  auto gone = tokens_.verify(*later, 2 * kLife);
  ASSERT_FALSE(gone);
  EXPECT_NE(gone.status().message().find("key version 1, which nimbus does not have"),
            std::string::npos)
      << gone.status().message();
}

TEST_F(WorkerTokensTest, AnotherNimbusOnTheSameStoreChecksTheSameTokens) {
  auto token = tokens_.issue("wc-1", "alice", 0);
  ASSERT_TRUE(token);
  auto other_session = service_->connect();
  WorkerTokenKeys standby(*other_session, paths_, std::chrono::milliseconds(kLife),
                          Logger::null());
  auto info = standby.verify(*token, 10);
  ASSERT_TRUE(info) << info.status().to_string();
  EXPECT_EQ(info->topology_id, "wc-1");
  EXPECT_EQ(info->user, "alice");
  auto theirs = standby.issue("wc-2", "bob", 20);
  ASSERT_TRUE(theirs);
  EXPECT_EQ(version_of(*theirs), 1);  // the same key, not a second one
  EXPECT_TRUE(tokens_.verify(*theirs, 30));
}

TEST_F(WorkerTokensTest, ADamagedKeyIsNeverUsedToAcceptATokenAndNamesItsNode) {
  auto token = tokens_.issue("wc-1", "alice", 0);
  ASSERT_TRUE(token);
  ASSERT_TRUE(store_->set("/rstorm/worker-token-keys/0000000001", "12 not-hex"));
  WorkerTokenKeys fresh(*store_, paths_, std::chrono::milliseconds(kLife), Logger::null());
  auto info = fresh.verify(*token, 10);
  ASSERT_FALSE(info);
  EXPECT_NE(info.status().message().find("key version 1, which nimbus does not have"),
            std::string::npos)
      << info.status().message();
}

TEST(WorkerTokenLifeTest, ReadsHoursAndRefusesANonPositiveLife) {
  Config config;
  EXPECT_EQ(worker_token_life(config), std::chrono::hours(24));
  config.set("storm.worker.token.life.time.hours", 0.5);
  EXPECT_EQ(worker_token_life(config), std::chrono::minutes(30));
  config.set("storm.worker.token.life.time.hours", -1);
  EXPECT_THROW(worker_token_life(config), ConfigError);
}

}  // namespace
}  // namespace rstorm::nimbus
