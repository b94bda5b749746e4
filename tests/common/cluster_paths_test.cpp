// ClusterPaths: the node layout, and creating it on a store.
#include "common/cluster_paths.hpp"

#include <gtest/gtest.h>

#include "common/in_memory_coordination.hpp"
#include "common/zookeeper_store.hpp"

namespace rstorm {
namespace {

TEST(ClusterPaths, LayoutUnderDefaultRoot) {
  ClusterPaths p;
  EXPECT_EQ(p.supervisor("sup-1"), "/rstorm/supervisors/sup-1");
  EXPECT_EQ(p.topology("wc-1"), "/rstorm/topologies/wc-1");
  EXPECT_EQ(p.assignment("wc-1"), "/rstorm/assignments/wc-1");
  EXPECT_EQ(p.nimbus_leader(), "/rstorm/nimbus/leader");
  EXPECT_EQ(p.workerbeat("wc-1", "sup-1", 6700), "/rstorm/workerbeats/wc-1/sup-1-6700");
  EXPECT_EQ(p.errors("wc-1"), "/rstorm/errors/wc-1");
  EXPECT_EQ(p.backpressure("wc-1"), "/rstorm/backpressure/wc-1");
}

TEST(ClusterPaths, ConfigurableRootIncludingSlash) {
  EXPECT_EQ(ClusterPaths("/dev-cluster").supervisors(), "/dev-cluster/supervisors");
  EXPECT_EQ(ClusterPaths("/").supervisor("s"), "/supervisors/s");
}

TEST(ClusterPaths, EnsureDirectoriesCreatesEveryDirectoryOnce) {
  auto service = InMemoryCoordinationService::create();
  auto store = service->connect();
  ClusterPaths p("/a/rstorm");
  ASSERT_TRUE(p.ensure_directories(*store));
  ASSERT_TRUE(p.ensure_directories(*store));  // idempotent
  for (const auto& dir : p.directories()) EXPECT_TRUE(store->exists(dir).value()) << dir;
  EXPECT_EQ(store->children("/a/rstorm").value(),
            (std::vector<std::string>{"assignments", "backpressure", "blobstore", "checkpoints",
                                      "errors", "nimbus", "supervisors", "topologies",
                                      "workerbeats"}));
}

TEST(ZooKeeperOptions, FromConfigAppendsPortToBareHosts) {
  Config c;
  c.set(std::string(keys::kZookeeperServers), ConfigValue::List{"127.0.0.1", "127.0.0.1:2182"});
  c.set(std::string(keys::kZookeeperPort), 2190);
  c.set(std::string(keys::kZookeeperSessionTimeout), 5000);
  c.set("storm.zookeeper.retry.times", 2);
  auto o = ZooKeeperOptions::from_config(c);
  EXPECT_EQ(o.servers, "127.0.0.1:2190,127.0.0.1:2182");
  EXPECT_EQ(o.session_timeout.count(), 5000);
  EXPECT_EQ(o.retry_times, 2);
  EXPECT_EQ(o.connection_timeout.count(), 15000);  // unset: the default
}

TEST(ZooKeeperOptions, WrongTypeInConfigNamesTheKey) {
  Config c;
  c.set(std::string(keys::kZookeeperServers), "127.0.0.1", "/etc/rstorm.yaml:1");
  EXPECT_THROW((void)ZooKeeperOptions::from_config(c), ConfigError);
}

}  // namespace
}  // namespace rstorm
