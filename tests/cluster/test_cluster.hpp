// The cluster the end-to-end suites (tests/cluster, tests/dataplane) run
// against: a real ZooKeeper on a free loopback port, a dev cluster of real
// nimbus and supervisor processes (two supervisors on racks r1 and r2, the
// short timeouts of kFastConfig), and a ZooKeeper session of the test's own
// for reading assignments and records.
#pragma once

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "common/logger.hpp"
#include "common/status.hpp"
#include "common/zookeeper_store.hpp"
#include "supervisor/dev_cluster.hpp"
#include "tests/cluster/cli_runner.hpp"
#include "tests/common/zookeeper_server.hpp"

namespace rstorm::testing {

struct TestCluster {
  std::unique_ptr<ZooKeeperServer> zk;
  std::unique_ptr<supervisor::DevCluster> cluster;
  std::unique_ptr<ZooKeeperStore> store;
};

// RSTORM_TEST_SECURE=1 runs the suites against a dev cluster in secure mode
// (mutual TLS, the ACL authorizer; the tests' client is alice, an admin).
inline bool secure_mode_requested() {
  const char* value = std::getenv("RSTORM_TEST_SECURE");
  return value != nullptr && std::string(value) == "1";
}

// `slots` per supervisor; `name` names the dev cluster's log lines.
inline Result<TestCluster> start_test_cluster(int slots, int nimbuses, const std::string& name,
                                              bool secure = secure_mode_requested()) {
  using namespace std::chrono_literals;
  TestCluster out;
  auto zk = ZooKeeperServer::start();
  if (!zk) return zk.status();
  out.zk = std::move(zk).value();
  supervisor::DevClusterOptions o;
  o.supervisors = 2;
  o.racks = 2;
  o.slots = slots;
  o.nimbuses = nimbuses;
  o.zookeeper_connect = out.zk->connect_string();
  o.overrides = kFastConfig;
  o.secure = secure;
  auto cluster = supervisor::DevCluster::start(o, Logger::to_stderr(name));
  if (!cluster) return cluster.status();
  out.cluster = std::move(cluster).value();
  ZooKeeperOptions zo;
  zo.servers = out.zk->connect_string();
  zo.session_timeout = 6s;
  zo.retry_interval = 200ms;
  zo.retry_interval_ceiling = 1000ms;
  // The tests read the cluster's nodes as its daemons do (in secure mode
  // they are closed to a session without the digest).
  zo.auth_payload = out.cluster->zookeeper_auth_payload();
  auto store = ZooKeeperStore::connect(zo, Logger::null());
  if (!store) return store.status();
  out.store = std::move(store).value();
  return out;
}

}  // namespace rstorm::testing
