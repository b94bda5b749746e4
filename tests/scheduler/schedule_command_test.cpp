// Runs the real `rstorm schedule` binary on the shipped paper cluster and
// topologies and checks its output and exit codes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

const std::string kSource = RSTORM_SOURCE_DIR;
const std::string kBinary = RSTORM_BINARY;
const std::string kCluster = kSource + "/conf/clusters/rstorm-paper.yaml";

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class ScheduleCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rstorm-schedule-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  RunResult run(const std::string& args) {
    const auto out = dir_ / "out", err = dir_ / "err";
    const std::string cmd = "'" + kBinary + "' schedule " + args + " >'" + out.string() + "' 2>'" +
                            err.string() + "' </dev/null";
    const int status = std::system(cmd.c_str());
    RunResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  std::string write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

  std::filesystem::path dir_;
};

TEST_F(ScheduleCommandTest, PrintsPlacementByRackNodeAndWorkerWithNetworkCost) {
  RunResult r =
      run("--cluster " + kCluster + " " + kSource + "/examples/paper/linear-network.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("topology linear-network (resource-aware): scheduled, 20 executors in 4 "
                       "workers on 2 nodes\n  rack rack-1\n    node node-1 (node-1.rack-1): "
                       "memory 768/4096 MB, cpu 210/400, slots 1/4\n      worker node-1:6700: "
                       "heap 768/768 MB, off-heap 0 MB, cpu 210: spout[1] spout[2] spout[3] "
                       "spout[4] spout[5] +1 acker\n"),
            std::string::npos)
      << r.out;
  // The greedy alone costs 77 (13 same worker, 25 same node, 26 same rack).
  EXPECT_NE(r.out.find("  network: 64 communicating pairs: 18 same worker, 26 same node, 20 "
                       "same rack, 0 cross rack (weighted cost 66)\n  quality: greedy cost 77, "
                       "final cost 66 (from: first-fit decreasing, 6 moves in 5000 "
                       "evaluations), lower bound 28\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("cluster: 12 nodes in 2 racks\n"), std::string::npos);
  EXPECT_NE(r.out.find("    node-12 (node-12.rack-2): memory 0/4096 MB, cpu 0/400, slots 0/4\n"),
            std::string::npos);
}

TEST_F(ScheduleCommandTest, ClusterListsEachRackOnceWhateverTheOrderOfNodeIds) {
  // supervisor-2 sorts between the two nodes of r1, as on a dev cluster.
  const std::string cluster = write("three.yaml", R"(defaults:
  memory_mb: 8035
  cpu: 66
  slots: [6700, 6701]
racks:
  - name: r1
    nodes:
      - {id: supervisor-1, host: 127.0.0.1}
      - {id: supervisor-3, host: 127.0.0.1}
  - name: r2
    nodes:
      - {id: supervisor-2, host: 127.0.0.1}
)");
  RunResult r = run("--cluster " + cluster + " " + kSource + "/examples/paper/linear-network.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string listing = r.out.substr(r.out.find("cluster: "));
  EXPECT_EQ(listing.find("rack r1"), listing.rfind("rack r1")) << listing;
  EXPECT_NE(listing.find("  rack r1\n    supervisor-1 (127.0.0.1): "), std::string::npos)
      << listing;
  EXPECT_NE(listing.find("\n    supervisor-3 (127.0.0.1): "), std::string::npos) << listing;
  EXPECT_LT(listing.find("supervisor-3"), listing.find("rack r2")) << listing;
}

TEST_F(ScheduleCommandTest, ExplainListsEveryDecisionWithItsDistanceTerms) {
  RunResult r = run("--explain --cluster " + kCluster + " " + kSource +
                    "/examples/paper/linear-network.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // memory (4096 - 128 - 128) / 4096, cpu (400 - 40 - 10) / 400, same rack as
  // the rack with most free: 0.5.
  EXPECT_NE(r.out.find("    spout[1] -> node-1:6700 (new worker): distance 1.376 = memory 0.938, "
                       "cpu 0.875, network 0.500\n    b1[9] -> node-1:6700: distance"),
            std::string::npos)
      << r.out;
  std::size_t lines = 0;
  for (std::size_t at = r.out.find(" -> node-"); at != std::string::npos;
       at = r.out.find(" -> node-", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 20u);  // one per executor
}

TEST_F(ScheduleCommandTest, JsonOutputAndRoundRobinBaseline) {
  const std::string topology = kSource + "/examples/paper/star-network.yaml";
  RunResult ra = run("--json --cluster " + kCluster + " " + topology);
  RunResult rr = run("--json --scheduler round-robin --cluster " + kCluster + " " + topology);
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  ASSERT_EQ(rr.exit_code, 0) << rr.err;
  const auto a = nlohmann::json::parse(ra.out);
  const auto b = nlohmann::json::parse(rr.out);
  EXPECT_EQ(a["topologies"][0]["strategy"], "resource-aware");
  EXPECT_EQ(b["topologies"][0]["strategy"], "round-robin");
  EXPECT_TRUE(a["topologies"][0]["scheduled"].get<bool>());
  EXPECT_EQ(a["topologies"][0]["executors"].size(), 18u);
  EXPECT_EQ(a["topologies"][0]["decisions"].size(), 18u);
  EXPECT_EQ(b["topologies"][0]["decisions"].size(), 0u);
  EXPECT_EQ(a["nodes"].size(), 12u);
  EXPECT_EQ(b["topologies"][0]["workers"].size(), 12u);
  EXPECT_EQ(a["topologies"][0]["network"]["pairs"], 72);
  // The search's result against the greedy's, in the same units.
  EXPECT_EQ(a["topologies"][0]["quality"]["final_cost"], a["topologies"][0]["network"]["weighted"]);
  EXPECT_EQ(a["topologies"][0]["quality"]["greedy_cost"], 92);
  EXPECT_EQ(a["topologies"][0]["quality"]["final_cost"], 72);
  EXPECT_FALSE(b["topologies"][0].contains("quality"));
  EXPECT_LT(a["topologies"][0]["network"]["weighted"].get<int>(),
            b["topologies"][0]["network"]["weighted"].get<int>());
}

TEST_F(ScheduleCommandTest, UnschedulableTopologyExitsWithFailureAndTheReason) {
  const std::string topology = write("huge.yaml", R"(name: huge
components:
  - {name: src, type: spout}
  - {name: big, onheap_mb: 100, offheap_mb: 4900, inputs: [src]}
)");
  RunResult r = run("--cluster " + kCluster + " " + topology);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("topology huge (resource-aware): NOT SCHEDULED: component 'big' asks "
                       "5000 MB per executor; the largest free node has 4096 MB (node-1, rack "
                       "rack-1)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("topology 'huge' is unschedulable: component 'big' asks 5000 MB"),
            std::string::npos)
      << r.err;
  // Round-robin places by slots, not memory: the dry run refuses what nimbus
  // refuses at submit instead of placing it overcommitted.
  RunResult rr = run("--scheduler round-robin --cluster " + kCluster + " " + topology);
  EXPECT_EQ(rr.exit_code, 1) << rr.out << rr.err;
  EXPECT_NE(rr.err.find("topology 'huge' is unschedulable (nimbus refuses it at submit): "
                        "component 'big' asks 5000 MB per executor"),
            std::string::npos)
      << rr.err;
  EXPECT_EQ(rr.out.find("topology huge (round-robin)"), std::string::npos) << rr.out;
}

TEST_F(ScheduleCommandTest, BadTopologyFileExitsWithUsageNamingFileLineAndField) {
  const std::string topology =
      write("bad.yaml", "name: bad\ncomponents:\n  - name: s\n    type: spout\n    cpu: many\n");
  RunResult r = run("--cluster " + kCluster + " " + topology);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "rstorm schedule: " + topology +
                       ":5: field 'components[0].cpu': expected a number, got 'many'\n");
  EXPECT_EQ(r.out, "");
}

TEST_F(ScheduleCommandTest, MissingClusterFileExitsWithUsage) {
  RunResult r = run("--cluster " + (dir_ / "none.yaml").string() + " " + kSource +
                    "/examples/paper/linear-cpu.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "rstorm schedule: " + (dir_ / "none.yaml").string() + ": cannot read the file\n");
}

TEST_F(ScheduleCommandTest, UnknownSchedulerExitsWithUsage) {
  RunResult r = run("--scheduler fastest --cluster " + kCluster + " " + kSource +
                    "/examples/paper/linear-cpu.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("fastest"), std::string::npos) << r.err;
}

}  // namespace

namespace {

TEST_F(ScheduleCommandTest, TopologyLibraryIsPlacedLikeItsYamlDescription) {
  const std::string library = RSTORM_LINEAR_TOPOLOGY;
  RunResult so = run("--json -c topology.workers=12 --cluster " + kCluster + " " + library);
  RunResult yaml =
      run("--json --cluster " + kCluster + " " + kSource + "/examples/paper/linear-network.yaml");
  ASSERT_EQ(so.exit_code, 0) << so.err;
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  const auto a = nlohmann::json::parse(so.out)["topologies"][0];
  const auto b = nlohmann::json::parse(yaml.out)["topologies"][0];
  EXPECT_EQ(a["id"], "linear");
  EXPECT_EQ(a["executors"].size(), 20u);
  EXPECT_EQ(a["network"], b["network"]);
  EXPECT_EQ(a["workers"].size(), b["workers"].size());

  RunResult rr = run("--json --scheduler round-robin -c topology.workers=12 --cluster " + kCluster +
                     " " + library);
  ASSERT_EQ(rr.exit_code, 0) << rr.err;
  EXPECT_EQ(nlohmann::json::parse(rr.out)["topologies"][0]["workers"].size(), 12u);
}

// Storm's topology.component.resources.* and topology.component.cpu.pcore.percent
// in the topology config are the resources of every component that does not
// set its own: the linear topology sets only its CPU (set_cpu_load), so -c
// changes each executor's memory and not its CPU. Before, both keys were
// ignored: every executor asked 128 MB whatever the config said.
TEST_F(ScheduleCommandTest, TopologyConfigSetsTheResourcesOfComponentsThatDoNotSetTheirOwn) {
  const std::string library = RSTORM_LINEAR_TOPOLOGY;
  // What the executors ask in all: each worker's heap and CPU less its
  // ackers' (128 MB and 10 points each by default).
  auto asked = [&](const std::string& extra) {
    RunResult r = run("--json " + extra + " --cluster " + kCluster + " " + library);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    double memory = 0, cpu = 0;
    const auto json = nlohmann::json::parse(r.out);
    EXPECT_FALSE(json["topologies"][0]["workers"].empty()) << r.out;
    for (const auto& w : json["topologies"][0]["workers"]) {
      memory += w["heap_mb"].get<double>() - 128 * w["ackers"].get<double>();
      cpu += w["cpu"].get<double>() - 10 * w["ackers"].get<double>();
    }
    return std::pair(memory, cpu);
  };
  EXPECT_EQ(asked(""), std::pair(20 * 128.0, 8 * 40.0 + 12 * 20.0));
  EXPECT_EQ(asked("-c topology.component.resources.onheap.memory.mb=300 "
                  "-c topology.component.cpu.pcore.percent=99"),
            std::pair(20 * 300.0, 8 * 40.0 + 12 * 20.0))
      << "the memory follows the config; the CPU set_cpu_load gave in the topology's code wins";

  RunResult too_big = run("-c topology.component.resources.onheap.memory.mb=5000 --cluster " +
                          kCluster + " " + library);
  EXPECT_EQ(too_big.exit_code, 1) << too_big.out << too_big.err;
  EXPECT_NE(too_big.err.find("asks 5000 MB on-heap per executor"), std::string::npos)
      << too_big.err;

  RunResult wrong = run("-c topology.component.resources.onheap.memory.mb=lots --cluster " +
                        kCluster + " " + library);
  EXPECT_EQ(wrong.exit_code, 2) << wrong.out << wrong.err;
  EXPECT_NE(wrong.err.find("topology.component.resources.onheap.memory.mb"), std::string::npos)
      << wrong.err;
}

TEST_F(ScheduleCommandTest, MissingTopologyLibraryExitsWithUsage) {
  RunResult r = run("--cluster " + kCluster + " " + (dir_ / "nothing.so").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find((dir_ / "nothing.so").string()), std::string::npos) << r.err;
}

TEST_F(ScheduleCommandTest, ConfigOverrideWithoutEqualsExitsWithUsage) {
  RunResult r = run("-c topology.workers --cluster " + kCluster + " " + kSource +
                    "/examples/paper/linear-cpu.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("topology.workers"), std::string::npos) << r.err;
}

}  // namespace
