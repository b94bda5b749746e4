// The R-Storm experiment, small and short (bench/rack_experiment/rack_experiment.py --smoke):
// 2 racks x 2 node namespaces, each with a CPU-quota cgroup and a real rstorm-supervisor,
// ZooKeeper and nimbus in a master namespace; the linear network-bound topology submitted with
// round-robin and with the resource-aware scheduler, tuples flowing between workers on the
// emulated nodes. Needs root, network namespaces, tc htb
// and a cgroup CPU controller: skipped, with the script's reason, where it has not.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/config_loader.hpp"
#include "rstorm/topology_library.hpp"
#include "scheduler/api_request.hpp"
#include "scheduler/scheduler.hpp"

namespace rstorm::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
constexpr int kRefused = 4;  // the script's exit code when the machine lacks something

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The script as a child process, stdout and stderr in files under a fresh directory.
class Script {
 public:
  explicit Script(std::vector<std::string> args, std::vector<std::string> wrapper = {},
                  std::string script = RSTORM_RACK_EXPERIMENT_SCRIPT) {
    char pattern[] = "/tmp/rack-experiment-test-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    std::vector<std::string> argv = std::move(wrapper);
    argv.push_back("/usr/bin/python3");
    argv.push_back(std::move(script));
    argv.push_back("--build-dir");
    argv.push_back(RSTORM_RACK_BUILD_DIR);
    for (auto& a : args) argv.push_back(std::move(a));
    pid_ = ::fork();
    if (pid_ == 0) {
      const int out = ::open((dir_ / "stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = ::open((dir_ / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(out, 1);
      ::dup2(err, 2);
      std::vector<char*> c;
      for (auto& a : argv) c.push_back(a.data());
      c.push_back(nullptr);
      ::execv(c[0], c.data());
      ::_exit(127);
    }
  }
  ~Script() {
    if (pid_ > 0 && exit_code_ < 0) {
      ::kill(pid_, SIGTERM);  // the script tears down what it built
      wait(std::chrono::seconds(120));
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Waits for the exit; -1 when it is still running at the deadline.
  int wait(std::chrono::seconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (exit_code_ < 0 && Clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return exit_code_;
  }
  void signal(int sig) const { ::kill(pid_, sig); }
  std::string err() const { return read_file(dir_ / "stderr"); }
  std::string out() const { return read_file(dir_ / "stdout"); }
  fs::path dir() const { return dir_; }

 private:
  fs::path dir_;
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

std::string unique_prefix() { return "rsxt" + std::to_string(::getpid() % 1000) + "x"; }

std::vector<std::string> namespaces_with(const std::string& prefix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/run/netns", ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(prefix)) out.push_back(name);
  }
  return out;
}

std::vector<std::string> cgroups_with(const std::string& prefix) {
  std::vector<std::string> out;
  for (const char* root : {"/sys/fs/cgroup", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root, ec)) {
      if (e.path().filename().string().starts_with(prefix)) out.push_back(e.path().string());
    }
  }
  return out;
}

// Processes whose command line mentions `text` (the run's work directory).
std::vector<int> processes_mentioning(const std::string& text) {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::string cmd = read_file(e.path() / "cmdline");
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.find(text) != std::string::npos) out.push_back(std::stoi(name));
  }
  return out;
}

std::string work_dir_of(const std::string& stderr_text) {
  const std::string key = "work dir ";
  const auto at = stderr_text.find(key);
  if (at == std::string::npos) return "";
  const auto end = stderr_text.find('\n', at);
  return stderr_text.substr(at + key.size(), end - at - key.size());
}

// Where the scheduler library places the experiment's topology on the registered nodes.
scheduler::NetworkCost expected_network(const json& supervisors, const std::string& strategy,
                                        std::int64_t workers) {
  scheduler::Cluster model;
  for (const auto& s : supervisors) {
    scheduler::NodeSpec spec;
    spec.id = scheduler::NodeId(s["id"].get<std::string>());
    spec.host = s["host"].get<std::string>();
    spec.rack = scheduler::RackId(s["rack"].get<std::string>());
    spec.memory_mb = s["memory_capacity_mb"].get<double>();
    spec.cpu = s["cpu_capacity"].get<double>();
    spec.ports = s["slots"].get<std::vector<int>>();
    model.nodes.push_back(spec);
  }
  auto loaded = load_topology_library(RSTORM_PAPER_TOPOLOGIES_LIB);
  EXPECT_TRUE(loaded.ok());
  Config config = default_config();
  config.set("paper.topology", std::string("linear"));
  config.set("paper.variant", std::string("network"));
  config.set("topology.scheduler.strategy", strategy);
  config.set("topology.workers", workers);
  auto topology = loaded->build(config);
  EXPECT_TRUE(topology.ok());
  auto request = scheduler::request_from_topology("linear", topology->spec(), config);
  EXPECT_TRUE(request.ok());
  auto result = scheduler::schedule(model, {request.value()});
  EXPECT_TRUE(result.ok());
  EXPECT_TRUE(result.value().topologies.at(0).scheduled) << result.value().topologies.at(0).reason;
  return result.value().topologies.at(0).network;
}

TEST(RackExperimentTest, RefusesClearlyWithoutRoot) {
  // As root, run it as nobody; as anyone else, run it as is.
  std::vector<std::string> wrapper;
  if (::geteuid() == 0) {
    wrapper = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  }
  // The checkout may sit where nobody cannot read (a mktemp -d folder is 0700):
  // run a copy of the script from a folder everyone can read.
  char pattern[] = "/tmp/rack-experiment-script-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const fs::path copy_dir = pattern;
  fs::permissions(copy_dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
  const fs::path copy = copy_dir / "rack_experiment.py";
  fs::copy_file(RSTORM_RACK_EXPERIMENT_SCRIPT, copy);
  fs::permissions(copy, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                            fs::perms::others_read);
  Script script({"--smoke"}, wrapper, copy.string());
  const int code = script.wait(std::chrono::seconds(60));
  std::error_code ec;
  fs::remove_all(copy_dir, ec);
  ASSERT_EQ(code, kRefused) << script.err();
  EXPECT_NE(script.err().find("must run as root"), std::string::npos) << script.err();
}

TEST(RackExperimentTest, SmokeRunPlacesAsTheSchedulerAndDeliversAcrossNamespaces) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: network namespaces, tc and cgroups";
  const std::string prefix = unique_prefix();
  Script script({"--smoke", "--json", "--prefix", prefix});
  const int code = script.wait(std::chrono::seconds(400));
  if (code == kRefused) GTEST_SKIP() << "this machine cannot run the experiment: " << script.err();
  ASSERT_EQ(code, 0) << script.err();
  EXPECT_TRUE(namespaces_with(prefix).empty());
  EXPECT_TRUE(cgroups_with(prefix).empty());
  const std::string work = work_dir_of(script.err());
  ASSERT_FALSE(work.empty()) << script.err();
  EXPECT_FALSE(fs::exists(work)) << "work dir left behind";
  EXPECT_TRUE(processes_mentioning(work).empty());

  const json result = json::parse(script.out());
  // Four supervisors, each with its own address and rack label.
  std::map<std::string, std::pair<std::string, std::string>> nodes;
  for (const auto& s : result["supervisors"]) {
    nodes[s["id"]] = {s["host"], s["rack"]};
  }
  const std::map<std::string, std::pair<std::string, std::string>> want = {
      {"node-1", {"10.77.1.1", "rack-1"}}, {"node-2", {"10.77.1.2", "rack-1"}},
      {"node-3", {"10.77.2.1", "rack-2"}}, {"node-4", {"10.77.2.2", "rack-2"}}};
  EXPECT_EQ(nodes, want);

  const auto workers = result["settings"]["round_robin_workers"].get<std::int64_t>();
  ASSERT_EQ(result["runs"].size(), 2u) << result.dump(2);
  for (const auto& run : result["runs"]) {
    ASSERT_FALSE(run.contains("error")) << run.dump(2);
    const std::string strategy = run["scheduler"];
    const auto expected = expected_network(result["supervisors"], strategy, workers);
    SCOPED_TRACE(strategy);
    EXPECT_EQ(run["network"]["cross_rack"].get<std::uint64_t>(), expected.cross_rack);
    EXPECT_EQ(run["network"]["same_rack"].get<std::uint64_t>(), expected.same_rack);
    EXPECT_EQ(run["network"]["same_node"].get<std::uint64_t>(), expected.same_node);
    EXPECT_EQ(run["network"]["same_worker"].get<std::uint64_t>(), expected.same_worker);
    EXPECT_TRUE(run["placement_stable"].get<bool>()) << "rescheduled while measured";
    // Tuples crossed workers, nodes and (round-robin) racks, and reached the sinks.
    EXPECT_GT(run["sink_received"].get<std::int64_t>(), 0) << run.dump(2);
  }
  // The resource-aware placement keeps the topology in one rack; round-robin spreads it.
  for (const auto& run : result["runs"]) {
    if (run["scheduler"] == "resource-aware") {
      EXPECT_EQ(run["network"]["cross_rack"].get<int>(), 0);
    } else {
      EXPECT_EQ(run["nodes_used"].size(), 4u);
    }
  }
}

TEST(RackExperimentTest, InterruptedRunLeavesNoNamespaceCgroupOrProcess) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: network namespaces, tc and cgroups";
  const std::string prefix = unique_prefix();
  Script script({"--smoke", "--prefix", prefix});
  // Interrupt once the supervisors run (the script says so), as Ctrl-C would.
  const auto deadline = Clock::now() + std::chrono::seconds(240);
  while (script.err().find("supervisors registered") == std::string::npos) {
    const int code = script.wait(std::chrono::seconds(1));
    if (code == kRefused) GTEST_SKIP() << "this machine cannot run the experiment: " << script.err();
    ASSERT_EQ(code, -1) << "exited before the supervisors registered:\n" << script.err();
    ASSERT_LT(Clock::now(), deadline) << script.err();
  }
  const std::string work = work_dir_of(script.err());
  ASSERT_FALSE(work.empty());
  EXPECT_FALSE(processes_mentioning(work).empty()) << "no supervisor runs";
  EXPECT_FALSE(namespaces_with(prefix).empty());
  script.signal(SIGINT);
  EXPECT_EQ(script.wait(std::chrono::seconds(120)), 1) << script.err();
  EXPECT_NE(script.err().find("interrupted"), std::string::npos) << script.err();
  EXPECT_TRUE(namespaces_with(prefix).empty());
  EXPECT_TRUE(cgroups_with(prefix).empty());
  EXPECT_TRUE(processes_mentioning(work).empty());
  EXPECT_FALSE(fs::exists(work));
}

TEST(RackExperimentTest, KilledRunIsRemovedByCleanup) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: network namespaces, tc and cgroups";
  const std::string prefix = unique_prefix();
  std::string work;
  {
    Script script({"--smoke", "--prefix", prefix});
    const auto deadline = Clock::now() + std::chrono::seconds(240);
    while (script.err().find("supervisors registered") == std::string::npos) {
      const int code = script.wait(std::chrono::seconds(1));
      if (code == kRefused) GTEST_SKIP() << "this machine cannot run the experiment: " << script.err();
      ASSERT_EQ(code, -1) << "exited before the supervisors registered:\n" << script.err();
      ASSERT_LT(Clock::now(), deadline) << script.err();
    }
    work = work_dir_of(script.err());
    script.signal(SIGKILL);  // no teardown: namespaces, cgroups and daemons stay
    ASSERT_EQ(script.wait(std::chrono::seconds(30)), 128 + SIGKILL);
  }
  ASSERT_FALSE(work.empty());
  EXPECT_FALSE(namespaces_with(prefix).empty());
  EXPECT_FALSE(processes_mentioning(work).empty());
  Script cleanup({"--cleanup", "--prefix", prefix});
  ASSERT_EQ(cleanup.wait(std::chrono::seconds(120)), 0) << cleanup.err();
  EXPECT_TRUE(namespaces_with(prefix).empty());
  EXPECT_TRUE(cgroups_with(prefix).empty());
  EXPECT_TRUE(processes_mentioning(work).empty());
  EXPECT_FALSE(fs::exists(work));
}

}  // namespace
}  // namespace rstorm::testing
