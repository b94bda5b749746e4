// End-to-end: the `rstorm` CLI keeps working after the leading nimbus dies,
// given only the dev cluster's client config (nimbus.seeds lists every nimbus
// as 127.0.0.1:<port>; no -c nimbus.thrift.port). Real ZooKeeper, real
// rstorm-nimbus and rstorm-supervisor processes, the real `rstorm` binary.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/config_loader.hpp"
#include "nimbus/nimbus_client.hpp"
#include "supervisor/dev_cluster.hpp"
#include "supervisor/supervisor_options.hpp"
#include "tests/cluster/cli_runner.hpp"
#include "tests/common/poll.hpp"
#include "tests/common/zookeeper_server.hpp"

namespace rstorm::testing {
namespace {

namespace sv = supervisor;
using namespace std::chrono_literals;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(FailoverClientTest, ListWithTheDevClusterConfigWorksAfterTheLeadingNimbusDies) {
  auto zk = ZooKeeperServer::start();
  ASSERT_TRUE(zk) << zk.status().to_string();
  sv::DevClusterOptions o;
  o.supervisors = 1;
  o.racks = 1;
  o.slots = 2;
  o.nimbuses = 2;
  o.zookeeper_connect = (*zk)->connect_string();
  o.overrides = kFastConfig;
  auto started = sv::DevCluster::start(o, Logger::to_stderr("failover-client-test"));
  ASSERT_TRUE(started) << started.status().to_string();
  auto& cluster = *started;
  const std::string config = cluster->client_config().string();

  // The client config names both nimbuses by port.
  const std::string yaml = read_file(cluster->client_config());
  EXPECT_NE(yaml.find("nimbus.seeds: [\"127.0.0.1:" + std::to_string(cluster->nimbus_port(0)) +
                      "\", \"127.0.0.1:" + std::to_string(cluster->nimbus_port(1)) + "\"]"),
            std::string::npos)
      << yaml;

  // --wait: running means scheduled, which with two nimbuses means both hold
  // the code (topology.min.replication.count), so the survivor can run it.
  auto submit =
      run_cli({"submit", RSTORM_WORD_COUNT_LIB, "--name", "wc", "--config", config, "--wait"});
  ASSERT_EQ(submit.exit_code, 0) << submit.output;

  // Which nimbus leads: the one a client following the leader ends up on.
  int leader_index = -1;
  ASSERT_TRUE(eventually([&] {
    ConfigLoadOptions lo;
    lo.config_file = cluster->client_config();
    auto loaded = load_config(lo);
    if (!loaded) return false;
    auto client =
        nimbus::NimbusClient::connect(nimbus::NimbusClient::options_from_config(*loaded));
    if (!client) return false;
    auto leader = (*client)->leader();
    if (!leader) return false;
    for (int i = 0; i < 2; ++i) {
      if (leader->port == cluster->nimbus_port(i)) leader_index = i;
    }
    return leader_index >= 0;
  }));
  ASSERT_TRUE(cluster->kill_nimbus(leader_index));

  // Only the config file: the CLI finds the surviving nimbus and shows wc.
  CliResult list;
  EXPECT_TRUE(eventually(
      [&] {
        list = run_cli({"list", "--json", "--config", config});
        return list.exit_code == 0 && list.output.find("\"wc\"") != std::string::npos;
      },
      90s))
      << "exit " << list.exit_code << ": " << list.output;
  // And the survivor leads now: a client following the leader lands on it.
  const int survivor_port = cluster->nimbus_port(1 - leader_index);
  EXPECT_TRUE(eventually(
      [&] {
        ConfigLoadOptions lo;
        lo.config_file = cluster->client_config();
        auto loaded = load_config(lo);
        if (!loaded) return false;
        auto client =
            nimbus::NimbusClient::connect(nimbus::NimbusClient::options_from_config(*loaded));
        if (!client) return false;
        auto leader = (*client)->leader();
        return leader && leader->port == survivor_port &&
               (*client)->address().port == survivor_port;
      },
      90s));
  // The survivor runs the topology: it can be deactivated and activated.
  CliResult deactivate;
  EXPECT_TRUE(eventually(
      [&] {
        deactivate = run_cli({"deactivate", "wc", "--config", config});
        return deactivate.exit_code != 3;  // 3: no nimbus reachable yet
      },
      30s));
  EXPECT_EQ(deactivate.exit_code, 0)
      << "exit " << deactivate.exit_code << ": " << deactivate.output << "\n"
      << run_cli({"describe", "wc", "--config", config}).output;
  auto activate = run_cli({"activate", "wc", "--config", config});
  EXPECT_EQ(activate.exit_code, 0) << activate.output;
  cluster->stop();
}

// One supervisor with two slots in a new work dir of its own, for a cluster
// started, stopped and started again there.
sv::DevClusterOptions restart_options(bool secure) {
  char pattern[] = "/tmp/rstorm-dev-restart-XXXXXX";
  sv::DevClusterOptions o;
  o.supervisors = 1;
  o.racks = 1;
  o.slots = 2;
  o.work_dir = ::mkdtemp(pattern) != nullptr ? pattern : "";
  o.secure = secure;
  o.overrides = kFastConfig;
  return o;
}

// A work dir a secure dev cluster made (its ZooKeeper nodes carry ACLs for
// that cluster's digest) is refused by a plain one, saying so, before
// anything starts; before, its nimbus "exited before listen".
TEST(DevClusterRestartTest, APlainClusterRefusesASecureClustersWorkDirSayingSo) {
  sv::DevClusterOptions o = restart_options(false);
  const std::filesystem::path work = o.work_dir;
  ASSERT_FALSE(work.empty()) << "mkdtemp failed";
  std::ofstream(work / "daemon.yaml") << "# a secure dev cluster's daemon config\n";
  auto started = sv::DevCluster::start(o, Logger::to_stderr("dev-secure-dir-test"));
  ASSERT_FALSE(started);
  EXPECT_NE(started.status().message().find("was made by a secure dev cluster (--secure)"),
            std::string::npos)
      << started.status().message();
  EXPECT_FALSE(std::filesystem::exists(work / "zookeeper")) << "ZooKeeper was started";
  std::filesystem::remove_all(work);
}

// `rstorm dev-cluster --work-dir W` stopped and started again comes back where
// it was: ZooKeeper, nimbus and every slot on the ports they had (while free),
// so the client config, the topologies' assignments and their workers' ports
// still hold. Before, every port was new: supervisors warned that the
// assignment used ports not theirs, and nimbus moved every executor.
TEST(DevClusterRestartTest, SameWorkDirComesBackOnItsPortsAndRunsItsTopologyWhereItWas) {
  const sv::DevClusterOptions o = restart_options(false);
  const std::filesystem::path work = o.work_dir;
  ASSERT_FALSE(work.empty()) << "mkdtemp failed";
  int zookeeper = 0, nimbus = 0;
  std::vector<int> slots;
  {
    auto first = sv::DevCluster::start(o, Logger::to_stderr("dev-restart-test"));
    ASSERT_TRUE(first) << first.status().to_string();
    zookeeper = (*first)->zookeeper_port();
    nimbus = (*first)->nimbus_port(0);
    slots = (*first)->supervisor_ports(0);
    // Each slot's worker /metrics port (slot + worker.metrics.port.offset) is
    // kept from every other port the cluster, or another on this machine, picks.
    for (int slot : slots) {
      EXPECT_FALSE(sv::claim_loopback_port(slot + 1000))
          << "port " << slot + 1000 << " is free to take";
    }
    const std::string config = (*first)->client_config().string();
    auto submit =
        run_cli({"submit", RSTORM_WORD_COUNT_LIB, "--name", "wc", "--config", config, "--wait"});
    ASSERT_EQ(submit.exit_code, 0) << submit.output;
    (*first)->stop();
  }
  auto again = sv::DevCluster::start(o, Logger::to_stderr("dev-restart-test"));
  ASSERT_TRUE(again) << again.status().to_string();
  auto& cluster = *again;
  EXPECT_EQ(cluster->zookeeper_port(), zookeeper);
  EXPECT_EQ(cluster->nimbus_port(0), nimbus);
  EXPECT_EQ(cluster->supervisor_ports(0), slots);
  const std::string config = cluster->client_config().string();
  CliResult describe;
  EXPECT_TRUE(eventually(
      [&] {
        describe = run_cli({"describe", "wc", "--config", config});
        return describe.exit_code == 0 &&
               describe.output.find("status: ACTIVE") != std::string::npos &&
               describe.output.find("worker ") != std::string::npos;
      },
      60s))
      << describe.output;
  // Never re-placed: every worker came back on its slot.
  EXPECT_NE(describe.output.find("Placement (assignment version 1)"), std::string::npos)
      << describe.output;
  const std::string nimbus_log = read_file(cluster->nimbus(0).log);
  const std::string supervisor_log = read_file(cluster->supervisor(0).log);
  EXPECT_EQ(nimbus_log.find("unschedulable"), std::string::npos) << nimbus_log;
  EXPECT_EQ(supervisor_log.find("which is not a slot of this supervisor"), std::string::npos)
      << supervisor_log;
  cluster->stop();
  std::filesystem::remove_all(work);
}

// The same in secure mode: the daemons' ZooKeeper digest is the one the
// nodes in the work dir's ZooKeeper data were created with (a new one each
// start made nimbus fail: "ZooKeeper refused to create node ... its ACL does
// not allow this client").
TEST(DevClusterRestartTest, SecureClusterStartsAgainInItsWorkDirWithItsTopology) {
  const sv::DevClusterOptions o = restart_options(true);
  const std::filesystem::path work = o.work_dir;
  ASSERT_FALSE(work.empty()) << "mkdtemp failed";
  {
    auto first = sv::DevCluster::start(o, Logger::to_stderr("dev-restart-test"));
    ASSERT_TRUE(first) << first.status().to_string();
    auto submit = run_cli({"submit", RSTORM_WORD_COUNT_LIB, "--name", "wc", "--config",
                           (*first)->client_config().string(), "--wait"});
    ASSERT_EQ(submit.exit_code, 0) << submit.output;
    (*first)->stop();
  }
  auto again = sv::DevCluster::start(o, Logger::to_stderr("dev-restart-test"));
  ASSERT_TRUE(again) << again.status().to_string();
  CliResult describe;
  EXPECT_TRUE(eventually(
      [&] {
        describe = run_cli({"describe", "wc", "--config", (*again)->client_config().string()});
        return describe.exit_code == 0 &&
               describe.output.find("status: ACTIVE") != std::string::npos;
      },
      60s))
      << describe.output;
  (*again)->stop();
  std::filesystem::remove_all(work);
}

// A dev cluster's supervisors share one machine: each offers its share of
// the memory and CPU, so that what nimbus places on them fits the machine
// (each offered the whole machine before: N times its memory). A capacity
// the overrides set stands.
TEST(DevClusterTest, SupervisorsOfferTheirShareOfTheMachineUnlessTheOverridesSetIt) {
  auto zk = ZooKeeperServer::start();
  ASSERT_TRUE(zk) << zk.status().to_string();
  sv::DevClusterOptions o;
  o.supervisors = 2;
  o.racks = 1;
  o.slots = 1;
  o.zookeeper_connect = (*zk)->connect_string();
  for (const auto& kv : kFastConfig) {
    if (kv.rfind("supervisor.memory.capacity.mb=", 0) != 0) o.overrides.push_back(kv);
  }
  auto started = sv::DevCluster::start(o, Logger::to_stderr("dev-cluster-share-test"));
  ASSERT_TRUE(started) << started.status().to_string();
  auto& cluster = *started;
  const double machine_mb = sv::machine_memory_mb();
  ASSERT_GT(machine_mb, 0);
  const auto share_mb = static_cast<double>(static_cast<std::int64_t>(machine_mb / 2));

  std::ostringstream banner;
  cluster->describe(banner);
  EXPECT_NE(banner.str().find("each supervisor offers its share of this machine: " +
                              std::to_string(static_cast<std::int64_t>(share_mb)) + " MB ("),
            std::string::npos)
      << banner.str();

  auto shown = run_cli({"cluster", "--json", "--config", cluster->client_config().string()});
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  const auto json = nlohmann::json::parse(shown.output, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << shown.output;
  ASSERT_EQ(json["supervisors"].size(), 2u) << shown.output;
  double offered_mb = 0;
  for (const auto& s : json["supervisors"]) {
    EXPECT_EQ(s["memory_capacity_mb"].get<double>(), share_mb) << s.dump();
    EXPECT_EQ(s["cpu_capacity"].get<double>(), 400) << "the override stands: " << s.dump();
    offered_mb += s["memory_capacity_mb"].get<double>();
  }
  EXPECT_LE(offered_mb, machine_mb);
  cluster->stop();
}

TEST(FailoverClientTest, MalformedNimbusSeedIsAUsageErrorNamingTheEntry) {
  auto r = run_cli({"list", "-c", "nimbus.seeds=[\"a:b:c\"]"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("nimbus.seeds entry 'a:b:c' is not host or host:port"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace rstorm::testing
