// The real rstorm-nimbus binary on a real ZooKeeper, driven by the real
// `rstorm` command line: submit/list/describe/cluster/kill, client-side and
// server-side errors with their exit codes, and a clean stop on SIGTERM.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/cluster_paths.hpp"
#include "common/thrift/codec.hpp"
#include "common/zookeeper_store.hpp"
#include "tests/common/poll.hpp"
#include "tests/common/zookeeper_server.hpp"
#include "tests/nimbus/nimbus_fixture.hpp"

namespace rstorm::nimbus::testing {
namespace {

using rstorm::testing::eventually;

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

CommandResult run(const std::string& command) {
  CommandResult r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) r.output.append(buffer, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class NimbusBinaryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto zk = rstorm::testing::ZooKeeperServer::start();
    ASSERT_TRUE(zk) << zk.status().to_string();
    zookeeper_ = std::move(*zk).release();
  }
  static void TearDownTestSuite() {
    delete zookeeper_;
    zookeeper_ = nullptr;
  }

  void SetUp() override {
    static int counter = 0;
    root_ = "/nimbus-binary-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    dir_ = std::filesystem::temp_directory_path() / ("rstorm-nimbus-binary" + root_.substr(14));
    std::filesystem::create_directories(dir_);
    auto port = rstorm::testing::free_loopback_port();
    ASSERT_TRUE(port);
    port_ = *port;
    ZooKeeperOptions o;
    o.servers = zookeeper_->connect_string();
    auto store = ZooKeeperStore::connect(o, Logger::null());
    ASSERT_TRUE(store) << store.status().to_string();
    registrar_ = std::move(*store);
    start_nimbus();
  }

  void TearDown() override {
    stop_nimbus();
    registrar_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string common_flags() const { return " -c nimbus.thrift.port=" + std::to_string(port_); }

  void start_nimbus() {
    const std::vector<std::string> args = {
        std::string(RSTORM_BIN_DIR) + "/rstorm-nimbus",
        "-c",
        "storm.zookeeper.port=" + std::to_string(zookeeper_->port()),
        "-c",
        "storm.zookeeper.root=" + root_,
        "-c",
        "storm.local.dir=" + (dir_ / "nimbus-local").string(),
        "-c",
        "nimbus.thrift.port=" + std::to_string(port_),
        "-c",
        "nimbus.monitor.freq.secs=1"};
    pid_ = ::fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      const std::string log = (dir_ / "nimbus.log").string();
      std::FILE* f = std::freopen(log.c_str(), "a", stderr);
      (void)f;
      std::vector<char*> argv;
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ASSERT_TRUE(eventually([&] {
      return run(cli("cluster")).output.find("  leader") != std::string::npos;
    })) << log_text();
  }

  // Returns the exit status of the stopped nimbus.
  int stop_nimbus() {
    if (pid_ <= 0) return -1;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::string cli(const std::string& args) const {
    return std::string(RSTORM_BIN_DIR) + "/rstorm " + args + common_flags();
  }

  std::string log_text() const {
    std::ifstream in(dir_ / "nimbus.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  void register_supervisor(const thrift::SupervisorInfo& info) {
    ClusterPaths paths(root_);
    ASSERT_TRUE(registrar_->ensure_path(paths.supervisors()));
    ASSERT_TRUE(
        registrar_->create(paths.supervisor(info.id), encode_thrift(info), CreateMode::kEphemeral));
  }

  static rstorm::testing::ZooKeeperServer* zookeeper_;
  std::string root_;
  std::filesystem::path dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::unique_ptr<CoordinationStore> registrar_;
};

rstorm::testing::ZooKeeperServer* NimbusBinaryTest::zookeeper_ = nullptr;

TEST_F(NimbusBinaryTest, SubmitListDescribeClusterKillThroughTheCommandLine) {
  register_supervisor(supervisor_info("sup-1", "r1"));
  register_supervisor(supervisor_info("sup-2", "r2"));
  const auto t0 = std::chrono::steady_clock::now();
  auto submitted =
      run(cli(std::string("submit ") + RSTORM_TEST_TOPOLOGY_LIB + " --name wc --wait"));
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output << log_text();
  EXPECT_NE(submitted.output.find("submitted topology 'wc' as wc-"), std::string::npos);
  EXPECT_NE(submitted.output.find("is running"), std::string::npos);
  std::printf("submit --wait until assignment written: %lld ms\n", static_cast<long long>(ms));

  auto list = run(cli("list --json"));
  ASSERT_EQ(list.exit_code, 0) << list.output;
  auto json = nlohmann::json::parse(list.output);
  ASSERT_EQ(json["topologies"].size(), 1u);
  EXPECT_EQ(json["topologies"][0]["name"], "wc");
  EXPECT_EQ(json["topologies"][0]["status"], "ACTIVE");
  EXPECT_EQ(json["topologies"][0]["executors"], 7);

  auto describe = run(cli("describe wc --json"));
  ASSERT_EQ(describe.exit_code, 0) << describe.output;
  auto d = nlohmann::json::parse(describe.output);
  EXPECT_EQ(d["executors"].size(), 7u);
  EXPECT_EQ(d["scheduler"], "resource-aware");
  const auto& net = d["network"];
  EXPECT_EQ(net["same_worker"].get<int>() + net["same_node"].get<int>() +
                net["same_rack"].get<int>() + net["cross_rack"].get<int>(),
            12);
  auto text = run(cli("describe wc"));
  EXPECT_NE(text.output.find("Placement (assignment version 1)"), std::string::npos) << text.output;

  auto cluster = run(cli("cluster --json"));
  ASSERT_EQ(cluster.exit_code, 0);
  auto c = nlohmann::json::parse(cluster.output);
  EXPECT_EQ(c["supervisors"].size(), 2u);
  EXPECT_EQ(c["nimbuses"][0]["port"], port_);
  EXPECT_EQ(c["nimbuses"][0]["leader"], true);

  auto deactivated = run(cli("deactivate wc"));
  EXPECT_EQ(deactivated.exit_code, 0) << deactivated.output;
  // `kill` returns once nimbus accepted it; --wait-gone blocks until it is removed.
  auto killed = run(cli("kill wc --wait 0 --wait-gone"));
  ASSERT_EQ(killed.exit_code, 0) << killed.output;
  EXPECT_NE(killed.output.find("topology 'wc' removed"), std::string::npos) << killed.output;
  auto after = run(cli("list"));
  EXPECT_NE(after.output.find("No topologies running."), std::string::npos) << after.output;
  EXPECT_EQ(stop_nimbus(), 0) << "SIGTERM must stop rstorm-nimbus cleanly\n" << log_text();
}

TEST_F(NimbusBinaryTest, LibraryWithoutTheExportMacroIsRejectedClientSide) {
  auto r = run(cli(std::string("submit ") + RSTORM_TEST_NO_MACRO_LIB + " --name x"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(RSTORM_TEST_NO_MACRO_LIB), std::string::npos) << r.output;
  EXPECT_NE(run(cli("list")).output.find("No topologies running."), std::string::npos);
}

// A name nimbus would refuse is refused before anything is uploaded (the
// name is part of the code blob's key): the name rule, exit 2.
TEST_F(NimbusBinaryTest, InvalidTopologyNameIsRefusedBeforeTheUpload) {
  register_supervisor(supervisor_info("sup-1", "r1"));
  auto r = run(cli(std::string("submit ") + RSTORM_TEST_TOPOLOGY_LIB + " --name 'my topo/x'"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("topology name 'my topo/x' is invalid: use letters, digits, '-', '_' "
                          "and '.'"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("blob"), std::string::npos) << r.output;  // was: invalid blob key
}

TEST_F(NimbusBinaryTest, ResourceRequestNoNodeCanHoldFailsWithTheNumbers) {
  register_supervisor(supervisor_info("sup-1", "r1", 2048));
  auto r = run(cli(std::string("submit ") + RSTORM_TEST_TOPOLOGY_LIB +
                   " --name big -c test.count.memory.mb=100000"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("component 'count' asks 100000 MB per executor"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("(sup-1, rack r1)"), std::string::npos) << r.output;
}

TEST_F(NimbusBinaryTest, KillOfUnknownTopologyFailsWithExitCodeOne) {
  auto r = run(cli("kill nope --wait 0"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("topology 'nope' is not running"), std::string::npos) << r.output;
}

TEST_F(NimbusBinaryTest, UnreachableNimbusSaysWhatToDo) {
  auto port = rstorm::testing::free_loopback_port();
  ASSERT_TRUE(port);
  auto r = run(std::string(RSTORM_BIN_DIR) +
               "/rstorm list -c nimbus.thrift.port=" + std::to_string(*port));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("cannot reach nimbus at 127.0.0.1:" + std::to_string(*port)),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("is rstorm-nimbus running? see `rstorm dev-cluster`"), std::string::npos);
}

// With no rstorm.yaml anywhere and no nimbus.seeds given, the refusal says
// that no config was found: the likely cause.
TEST_F(NimbusBinaryTest, UnreachableNimbusWithNoConfigFileSaysNoneWasFound) {
  if (std::filesystem::exists("/etc/rstorm/rstorm.yaml")) {
    GTEST_SKIP() << "/etc/rstorm/rstorm.yaml exists on this machine";
  }
  auto port = rstorm::testing::free_loopback_port();
  ASSERT_TRUE(port);
  auto r = run("env -u RSTORM_CONF_DIR HOME=" + dir_.string() + " " + RSTORM_BIN_DIR +
               "/rstorm list -c nimbus.thrift.port=" + std::to_string(*port));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("no rstorm.yaml was found"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("give --config FILE"), std::string::npos) << r.output;
  // A file named on the command line that is not there: bad input, exit 2.
  auto missing = run(std::string(RSTORM_BIN_DIR) + "/rstorm list --config " + dir_.string() +
                     "/none.yaml");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("cannot read config file " + dir_.string() + "/none.yaml"),
            std::string::npos)
      << missing.output;
}

}  // namespace
}  // namespace rstorm::nimbus::testing
