// Nimbus on a real ZooKeeper (started by the tests/common harness) with its
// real RocksDB blob store: leader failover between two nimbus daemons, and a
// restarted nimbus recovering its state.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "common/config_loader.hpp"
#include "common/zookeeper_store.hpp"
#include "nimbus/nimbus_daemon.hpp"
#include "tests/common/coordination_backends.hpp"
#include "tests/nimbus/nimbus_fixture.hpp"

namespace rstorm::nimbus::testing {
namespace {

using rstorm::testing::eventually;
using rstorm::testing::ZooKeeperBackend;

class NimbusZooKeeperTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ZooKeeperBackend::set_up_suite(); }
  static void TearDownTestSuite() { ZooKeeperBackend::tear_down_suite(); }

  void SetUp() override {
    root_ = rstorm::testing::unique_root();
    dir_ = std::filesystem::temp_directory_path() /
           ("rstorm-nimbus-test-" + std::to_string(::getpid()) + root_.substr(root_.rfind('-')));
    std::filesystem::remove_all(dir_);
    registrar_ = backend_.connect();
    ASSERT_NE(registrar_, nullptr);
  }
  void TearDown() override {
    registrar_.reset();
    std::filesystem::remove_all(dir_);
  }

  Config config_for(const std::string& name) {
    ConfigLoadOptions o;
    o.overrides = {
        "storm.zookeeper.servers=[127.0.0.1]",
        "storm.zookeeper.port=" + std::to_string(ZooKeeperBackend::server()->port()),
        "storm.zookeeper.root=" + root_,
        "storm.zookeeper.session.timeout=6000",
        "storm.local.dir=" + (dir_ / name).string(),
        "nimbus.thrift.port=0",
        "nimbus.monitor.freq.secs=1",
    };
    auto config = load_config(o);
    EXPECT_TRUE(config) << config.status().to_string();
    return *config;
  }

  std::unique_ptr<NimbusDaemon> start_daemon(const std::string& name) {
    auto d = NimbusDaemon::start(config_for(name), Logger::null());
    EXPECT_TRUE(d) << d.status().to_string();
    return d ? std::move(*d) : nullptr;
  }

  void register_supervisor(const thrift::SupervisorInfo& info) {
    ClusterPaths paths(root_);
    ASSERT_TRUE(registrar_->ensure_path(paths.supervisors()));
    ASSERT_TRUE(
        registrar_->create(paths.supervisor(info.id), encode_thrift(info), CreateMode::kEphemeral));
  }

  std::unique_ptr<NimbusClient> client_for(int port) {
    NimbusClient::Options o;
    o.seeds = {{"127.0.0.1", port}};
    auto c = NimbusClient::connect(o);
    EXPECT_TRUE(c) << c.status().to_string();
    return c ? std::move(*c) : nullptr;
  }

  std::optional<thrift::Assignment> assignment(const std::string& id) {
    auto node = registrar_->get(ClusterPaths(root_).assignment(id));
    if (!node) return std::nullopt;
    auto a = decode_thrift<thrift::Assignment>(node->data, "Assignment");
    return a ? std::optional(*a) : std::nullopt;
  }

  Result<std::string> submit(NimbusClient& client, const std::string& name,
                             const std::string& code) {
    auto up = client.upload_blob(name + "-code", code);
    if (!up) return up.status();
    return client.submit_topology(name, word_count_structure(), {}, name + "-code");
  }

  ZooKeeperBackend backend_;
  std::string root_;
  std::filesystem::path dir_;
  std::unique_ptr<CoordinationStore> registrar_;
};

TEST_F(NimbusZooKeeperTest, LeaderFailoverStandbyTakesOverAndTheTopologyKeepsItsAssignment) {
  register_supervisor(supervisor_info("sup-1", "r1"));
  auto first = start_daemon("n1");
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(eventually([&] { return first->nimbus().is_leader(); }));
  auto second = start_daemon("n2");
  ASSERT_NE(second, nullptr);
  EXPECT_FALSE(second->nimbus().is_leader());

  // A client seeded with the standby is sent to the leader.
  auto client = client_for(second->port());
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->address().port, first->port());
  const std::string code(3'000'000, 'c');  // several chunks
  auto id = submit(*client, "wc", code);
  ASSERT_TRUE(id) << id.status().to_string();
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));
  const auto before = *assignment(*id);

  // The standby answers mutating calls with NotLeader naming the leader.
  NimbusClient::Options direct;
  direct.seeds = {{"127.0.0.1", second->port()}};
  direct.follow_leader = false;
  auto standby = NimbusClient::connect(direct);
  ASSERT_TRUE(standby);
  auto refused = (*standby)->kill_topology("wc", 0);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.code(), ErrorCode::kUnavailable);
  EXPECT_NE(refused.message().find("the leader is 127.0.0.1:" + std::to_string(first->port())),
            std::string::npos)
      << refused.message();
  // The standby copies the code from the leader.
  ASSERT_TRUE(eventually([&] {
    auto bytes = (*standby)->download_blob(before.code_blob_key);
    return bytes && *bytes == code;
  }));

  const int second_port = second->port();
  first->stop();
  first.reset();
  ASSERT_TRUE(eventually([&] { return second->nimbus().is_leader(); }));
  auto after_client = client_for(second_port);
  ASSERT_NE(after_client, nullptr);
  auto info = after_client->topology_info("wc");
  ASSERT_TRUE(info) << info.status().to_string();
  EXPECT_EQ(info->summary.status, thrift::TopologyStatus::ACTIVE);
  // Let the new leader run rounds: the assignment stays as it was.
  const auto rounds = second->nimbus().rounds();
  second->nimbus().trigger();
  ASSERT_TRUE(eventually([&] { return second->nimbus().rounds() > rounds + 2; }));
  EXPECT_EQ(assignment(*id)->executors, before.executors);
  EXPECT_EQ(assignment(*id)->version, before.version);
  auto served = after_client->download_blob(before.code_blob_key);
  ASSERT_TRUE(served) << served.status().to_string();
  EXPECT_EQ(*served, code);
}

// A rebalance rewrites the topology's structure in place: the standby
// copies the new version, and the leader it becomes keeps the executors the
// rebalance gave, rather than those of the submit.
TEST_F(NimbusZooKeeperTest, RebalancedParallelismSurvivesAFailover) {
  register_supervisor(supervisor_info("sup-1", "r1"));
  auto first = start_daemon("n1");
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(eventually([&] { return first->nimbus().is_leader(); }));
  auto second = start_daemon("n2");
  ASSERT_NE(second, nullptr);
  auto client = client_for(first->port());
  ASSERT_NE(client, nullptr);
  auto id = submit(*client, "wc", "library bytes");
  ASSERT_TRUE(id) << id.status().to_string();
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));
  ASSERT_EQ(assignment(*id)->executors.size(), 7u);  // count 2, split 3, words 2
  const std::string structure_key = *id + ".topology";
  NimbusClient::Options direct;
  direct.seeds = {{"127.0.0.1", second->port()}};
  direct.follow_leader = false;
  auto standby = NimbusClient::connect(direct);
  ASSERT_TRUE(standby);
  ASSERT_TRUE(eventually([&] { return (*standby)->download_blob(structure_key).is_ok(); }));

  thrift::RebalanceOptions options;
  options.__set_num_executors({{"split", 1}});
  options.__set_wait_secs(0);
  ASSERT_TRUE(client->rebalance("wc", options));
  ASSERT_TRUE(eventually([&] {
    auto a = assignment(*id);
    return a && a->executors.size() == 5u;
  }));
  auto rebalanced = client->download_blob(structure_key);
  ASSERT_TRUE(rebalanced) << rebalanced.status().to_string();
  ASSERT_TRUE(eventually([&] {
    auto copy = (*standby)->download_blob(structure_key);
    return copy && *copy == *rebalanced;
  }));

  const int second_port = second->port();
  standby->reset();
  client.reset();
  first->stop();
  first.reset();
  ASSERT_TRUE(eventually([&] { return second->nimbus().is_leader(); }));
  const auto rounds = second->nimbus().rounds();
  second->nimbus().trigger();
  ASSERT_TRUE(eventually([&] { return second->nimbus().rounds() > rounds + 2; }));
  EXPECT_EQ(assignment(*id)->executors.size(), 5u);
  auto after = client_for(second_port);
  ASSERT_NE(after, nullptr);
  auto info = after->topology_info("wc");
  ASSERT_TRUE(info) << info.status().to_string();
  EXPECT_EQ(info->summary.num_executors, 5);
}

TEST_F(NimbusZooKeeperTest, NimbusRestartRecoversItsState) {
  register_supervisor(supervisor_info("sup-1", "r1"));
  auto daemon = start_daemon("n1");
  ASSERT_NE(daemon, nullptr);
  ASSERT_TRUE(eventually([&] { return daemon->nimbus().is_leader(); }));
  auto client = client_for(daemon->port());
  auto id = submit(*client, "wc", "library bytes");
  ASSERT_TRUE(id) << id.status().to_string();
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));
  ASSERT_TRUE(client->deactivate("wc"));
  const auto before = *assignment(*id);
  client.reset();
  daemon->stop();
  daemon.reset();

  daemon = start_daemon("n1");  // same local dir, same ZooKeeper root
  ASSERT_NE(daemon, nullptr);
  ASSERT_TRUE(eventually([&] { return daemon->nimbus().is_leader(); }));
  client = client_for(daemon->port());
  auto info = client->topology_info("wc");
  ASSERT_TRUE(info) << info.status().to_string();
  EXPECT_EQ(info->summary.id, *id);
  EXPECT_EQ(info->summary.status, thrift::TopologyStatus::INACTIVE);
  EXPECT_EQ(info->structure.components.size(), 3u);
  auto code = client->download_blob(before.code_blob_key);
  ASSERT_TRUE(code) << code.status().to_string();
  EXPECT_EQ(*code, "library bytes");
  const auto rounds = daemon->nimbus().rounds();
  ASSERT_TRUE(eventually([&] { return daemon->nimbus().rounds() > rounds + 2; }));
  EXPECT_EQ(assignment(*id)->version, before.version);
  // A kill after the restart still frees everything.
  ASSERT_TRUE(client->kill_topology("wc", 0));
  ASSERT_TRUE(eventually([&] { return !assignment(*id).has_value(); }));
}

}  // namespace
}  // namespace rstorm::nimbus::testing
