// End-to-end: real ZooKeeper (tests/common harness), real rstorm-nimbus and
// rstorm-supervisor processes (DevCluster), real rstorm-worker processes, the
// word count library submitted through the `rstorm` command line.
#include <gtest/gtest.h>
#include <signal.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "common/cluster_paths.hpp"
#include "common/config_loader.hpp"
#include "common/thrift/codec.hpp"
#include "common/zookeeper_store.hpp"
#include "nimbus/nimbus_client.hpp"
#include "rstorm/state.hpp"
#include "rstorm/topology_library.hpp"
#include "rstorm/worker/checkpoint.hpp"
#include "rstorm_thrift/Nimbus.h"
#include "scheduler/api_request.hpp"
#include "scheduler/scheduler.hpp"
#include "supervisor/dev_cluster.hpp"
#include "supervisor/supervisor_options.hpp"
#include "tests/cluster/cli_runner.hpp"
#include "tests/cluster/test_cluster.hpp"
#include "tests/common/poll.hpp"
#include "tests/common/zookeeper_server.hpp"
#include "worker/process/nimbus_checkpoint_store.hpp"
#include "worker/process/worker_spec.hpp"
#include "worker/transport/codec.hpp"

namespace rstorm::testing {
namespace {

namespace sv = supervisor;
namespace wp = worker_process;
using namespace std::chrono_literals;

// What the stateful word count test does in its second round, instead of
// killing a worker.
enum class SecondRound {
  kKillWorker,
  // The leading nimbus is killed; the standby leads (and then a worker is killed).
  kNimbusFailover,
  // `rebalance -e count=1`: the counter's two tasks into one executor.
  kMergeCounter,
  // `rebalance -e count=1 -r` with a CPU amount that only the supervisor
  // the counter is not on can hold: its tasks move to that supervisor.
  kMoveCounterToAnotherSupervisor,
  // The counter's supervisor is killed with its workers (a machine lost):
  // nimbus moves its executors to the other supervisor.
  kLoseCountersSupervisor,
};

class ClusterTest : public ::testing::Test {
 protected:
  void stateful_word_count_through_kill9(bool folder,
                                         SecondRound second = SecondRound::kKillWorker);
  void start_cluster(int nimbuses = 1, int slots = 2) {
    auto started = start_test_cluster(slots, nimbuses, "cluster-test");
    ASSERT_TRUE(started) << started.status().to_string();
    zk_ = std::move(started.value().zk);
    cluster_ = std::move(started.value().cluster);
    store_ = std::move(started.value().store);
  }

  void TearDown() override {
    if (cluster_) {
      std::vector<pid_t> workers = worker_pids_on_disk();
      cluster_->stop();
      for (pid_t pid : workers) EXPECT_FALSE(alive(pid)) << "worker " << pid << " left behind";
    }
  }

  std::vector<std::string> client(int nimbus = 0) const { return cluster_->client_overrides(nimbus); }

  // A client of nimbus `index`; in secure mode it is 'admin'.
  nimbus::NimbusClient::Options nimbus_options(int index = 0) const {
    nimbus::NimbusClient::Options o;
    o.seeds = {{"127.0.0.1", cluster_->nimbus_port(index)}};
    if (cluster_->secure()) {
      const auto dir = cluster_->tls_dir();
      o.tls = security::TlsFiles{(dir / "admin.pem").string(), (dir / "admin-key.pem").string(),
                                 (dir / "ca.pem").string()};
    }
    return o;
  }

  // The index of the nimbus that leads, as nimbus `ask` names it; -1 when it
  // does not answer or names none of this cluster's.
  int leading_nimbus(int ask = 0) const {
    auto options = nimbus_options(ask);
    options.follow_leader = false;
    auto client = nimbus::NimbusClient::connect(options);
    if (!client) return -1;
    auto leader = (*client)->leader();
    if (!leader) return -1;
    for (int i = 0; i < 2; ++i) {
      if (leader->port == cluster_->nimbus_port(i)) return i;
    }
    return -1;
  }

  CliResult cli(std::vector<std::string> args, int nimbus = 0) const {
    for (const auto& a : client(nimbus)) args.push_back(a);
    return run_cli(args);
  }

  void submit_word_count() {
    auto r = cli({"submit", RSTORM_WORD_COUNT_LIB, "--name", "wc", "--wait", "-c",
                  "topology.message.timeout.secs=5"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  std::optional<thrift::Assignment> assignment() const {
    auto ids = store_->children(paths_.assignments());
    if (!ids || ids->size() != 1) return std::nullopt;
    auto node = store_->get(paths_.assignment(ids->front()));
    if (!node) return std::nullopt;
    auto a = decode_thrift<thrift::Assignment>(node->data, "Assignment");
    if (!a) return std::nullopt;
    return *a;
  }

  // The assignment once every worker of it runs; nullopt if that never happens.
  std::optional<thrift::Assignment> running_assignment() const {
    std::optional<thrift::Assignment> a;
    if (!eventually([&] {
          a = assignment();
          return a && every_assigned_worker_runs(*a);
        })) {
      return std::nullopt;
    }
    return a;
  }

  int supervisor_index(const std::string& id) const {
    for (int i = 0; i < cluster_->num_supervisors(); ++i) {
      if (cluster_->supervisor_id(i) == id) return i;
    }
    return -1;
  }

  std::filesystem::path worker_dir(const std::string& node, const std::string& topology, int port) const {
    return cluster_->supervisor_dir(supervisor_index(node)) / "workers" /
           (topology + "-" + std::to_string(port));
  }

  std::optional<wp::WorkerHeartbeatFile> heartbeat(const std::string& node,
                                                   const std::string& topology, int port) const {
    auto text = wp::read_whole_file(worker_dir(node, topology, port) / "heartbeat");
    if (!text) return std::nullopt;
    auto beat = wp::heartbeat_from_json(*text);
    if (!beat) return std::nullopt;
    return *beat;
  }

  // The supervisor's log lines about the worker on `port`, and its worker's
  // log lines about an exit: why a worker restarted, for a failure message.
  std::string lines_about_worker(const std::string& node, const std::string& topology,
                                 int port) const {
    std::string out;
    auto grep = [&](const std::filesystem::path& file, const std::vector<std::string>& needles) {
      std::ifstream in(file);
      std::string line;
      while (std::getline(in, line)) {
        for (const auto& n : needles) {
          if (line.find(n) != std::string::npos) {
            out += line + "\n";
            break;
          }
        }
      }
    };
    grep(cluster_->supervisor_dir(supervisor_index(node)) / "supervisor.log",
         {"on port " + std::to_string(port) + " "});
    grep(worker_dir(node, topology, port) / "worker.log",
         {"exiting", "stopped", "assignment version"});
    return out;
  }

  static bool alive(pid_t pid) { return sv::process_alive(sv::ProcessId{pid, 0}); }

  // Every slot of the assignment has a live worker whose heartbeat is fresh
  // and lists exactly the slot's executors (its ackers too when the
  // assignment lists them: topology.acker.executors set).
  bool every_assigned_worker_runs(const thrift::Assignment& a) const {
    std::map<std::pair<std::string, int>, std::set<std::pair<std::string, int>>> slots;
    bool listed_ackers = false;
    for (const auto& e : a.executors) {
      slots[{e.slot.node_id, e.slot.port}].insert({e.executor.component, e.executor.task_start});
      listed_ackers = listed_ackers || e.executor.component == "__acker";
    }
    for (const auto& [slot, executors] : slots) {
      auto beat = heartbeat(slot.first, a.topology_id, slot.second);
      if (!beat || !alive(static_cast<pid_t>(beat->pid))) return false;
      std::set<std::pair<std::string, int>> running;
      for (const auto& e : beat->executors) {
        if (listed_ackers || e.component != "__acker") running.insert({e.component, e.task_start});
      }
      if (running != executors) return false;
    }
    return true;
  }

  // kill -9 of a worker of the current assignment: the `k`th slot (modulo
  // their number), so that successive calls hit different workers.
  void kill_worker(const std::string& topology_id, int k) {
    const std::optional<thrift::Assignment> now = assignment();
    ASSERT_TRUE(now);
    const auto slots = executors_by_slot(*now);
    const auto& [node, port] =
        std::next(slots.begin(), static_cast<std::ptrdiff_t>(k % static_cast<int>(slots.size())))
            ->first;
    std::optional<wp::WorkerHeartbeatFile> beat;
    ASSERT_TRUE(eventually([&] {
      beat = heartbeat(node, topology_id, port);
      return beat && alive(static_cast<pid_t>(beat->pid));
    })) << "worker "
        << node << ":" << port << " does not run";
    ASSERT_EQ(::kill(static_cast<pid_t>(beat->pid), SIGKILL), 0);
  }

  static std::map<std::pair<std::string, int>, std::set<std::tuple<std::string, int, int>>>
  executors_by_slot(const thrift::Assignment& a) {
    std::map<std::pair<std::string, int>, std::set<std::tuple<std::string, int, int>>> out;
    for (const auto& e : a.executors) {
      if (e.executor.component == "__acker") continue;
      out[{e.slot.node_id, e.slot.port}].insert(
          {e.executor.component, e.executor.task_start, e.executor.task_end});
    }
    return out;
  }

  // Trees the word count's spout saw acked, summed over the heartbeats of the
  // assignment's workers.
  std::uint64_t sentences_acked(const thrift::Assignment& a) const {
    std::uint64_t n = 0;
    for (const auto& [slot, executors] : executors_by_slot(a)) {
      auto beat = heartbeat(slot.first, a.topology_id, slot.second);
      if (beat && beat->components.count("sentences")) n += beat->components["sentences"]["acked"];
    }
    return n;
  }

  std::vector<pid_t> worker_pids_on_disk() const {
    std::vector<pid_t> out;
    for (int i = 0; i < cluster_->num_supervisors(); ++i) {
      for (const auto& w : cluster_->live_workers(i)) out.push_back(w.pid);
    }
    return out;
  }

  ClusterPaths paths_;
  std::unique_ptr<ZooKeeperServer> zk_;
  std::unique_ptr<sv::DevCluster> cluster_;
  std::unique_ptr<ZooKeeperStore> store_;
};

std::map<std::pair<std::string, int>, std::pair<std::string, int>> by_component_ordinal(
    const thrift::Assignment& a) {
  std::map<std::string, std::vector<std::pair<int, std::pair<std::string, int>>>> lists;
  for (const auto& e : a.executors) {
    lists[e.executor.component].push_back({e.executor.task_start, {e.slot.node_id, e.slot.port}});
  }
  std::map<std::pair<std::string, int>, std::pair<std::string, int>> out;
  for (auto& [component, list] : lists) {
    std::sort(list.begin(), list.end());
    for (std::size_t k = 0; k < list.size(); ++k) out[{component, static_cast<int>(k)}] = list[k].second;
  }
  return out;
}

TEST_F(ClusterTest, SubmittedWordCountRunsWhereTheSchedulerPlacesItAndKillRemovesIt) {
  start_cluster();
  const auto submitted = std::chrono::steady_clock::now();
  submit_word_count();
  std::optional<thrift::Assignment> a;
  ASSERT_TRUE(eventually([&] {
    a = assignment();
    return a && every_assigned_worker_runs(*a);
  })) << (a ? "workers not all running" : "no assignment");
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - submitted).count();
  std::cout << "submit to every assigned worker heartbeating: " << secs << " s" << std::endl;

  // The placement is the scheduler library's for the same cluster and request.
  scheduler::Cluster model;
  for (int i = 0; i < cluster_->num_supervisors(); ++i) {
    auto node = store_->get(paths_.supervisor(cluster_->supervisor_id(i)));
    ASSERT_TRUE(node);
    auto info = decode_thrift<thrift::SupervisorInfo>(node->data, "SupervisorInfo");
    ASSERT_TRUE(info);
    scheduler::NodeSpec spec;
    spec.id = scheduler::NodeId(info->id);
    spec.host = info->host;
    spec.rack = scheduler::RackId(info->rack);
    spec.memory_mb = info->memory_capacity_mb;
    spec.cpu = info->cpu_capacity;
    spec.ports = info->slots;
    model.nodes.push_back(spec);
  }
  auto loaded = load_topology_library(RSTORM_WORD_COUNT_LIB);
  ASSERT_TRUE(loaded.ok());
  Config config = default_config();
  config.set("topology.message.timeout.secs", std::int64_t{5});
  auto topology = loaded->build(config);
  ASSERT_TRUE(topology.ok());
  auto request = scheduler::request_from_topology(a->topology_id, topology->spec(), config);
  ASSERT_TRUE(request.ok());
  auto expected = scheduler::schedule(model, {request.value()});
  ASSERT_TRUE(expected.ok());
  const auto& placement = expected.value().topologies.at(0);
  ASSERT_TRUE(placement.scheduled) << placement.reason;
  thrift::Assignment planned;
  planned.topology_id = a->topology_id;
  const auto& executors = request.value().executors;
  for (std::size_t i = 0; i < executors.size(); ++i) {
    if (executors[i].component == "__acker") continue;
    thrift::ExecutorAssignment e;
    e.executor.component = executors[i].component;
    e.executor.task_start = executors[i].first_task;
    e.slot.node_id = placement.executor_slots[i].node.value();
    e.slot.port = placement.executor_slots[i].port;
    planned.executors.push_back(e);
  }
  thrift::Assignment actual = *a;
  std::erase_if(actual.executors, [](const auto& e) { return e.executor.component == "__acker"; });
  EXPECT_EQ(by_component_ordinal(actual), by_component_ordinal(planned));

  // list, describe and cluster show it.
  auto list = cli({"list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("\"wc\""), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("ACTIVE"), std::string::npos) << list.output;
  auto describe = cli({"describe", "wc", "--json"});
  ASSERT_EQ(describe.exit_code, 0) << describe.output;
  auto described = nlohmann::json::parse(describe.output, nullptr, false);
  ASSERT_FALSE(described.is_discarded()) << describe.output;
  std::size_t described_executors = 0;
  for (const auto& e : described["executors"]) {
    if (e["component"] != "__acker") ++described_executors;
  }
  EXPECT_EQ(described_executors, actual.executors.size());
  // describe reads each component's counts from its workers' /metrics.
  EXPECT_TRUE(eventually([&] {
    auto d = cli({"describe", "wc", "--json"});
    auto j = nlohmann::json::parse(d.output, nullptr, false);
    if (d.exit_code != 0 || j.is_discarded() || !j["counts_unreachable"].empty()) return false;
    const auto& counts = j["counts"];
    return counts.contains("split") && counts["split"]["executed"].get<long long>() > 0 &&
           counts["sentences"]["kind"] == "spout" && !counts.contains("__acker");
  })) << cli({"describe", "wc"}).output;
  auto cluster = cli({"cluster", "--json"});
  ASSERT_EQ(cluster.exit_code, 0) << cluster.output;
  for (int i = 0; i < 2; ++i) {
    EXPECT_NE(cluster.output.find(cluster_->supervisor_id(i)), std::string::npos) << cluster.output;
  }

  // kill --wait: every worker goes, then the code blob.
  const auto pids = worker_pids_on_disk();
  ASSERT_FALSE(pids.empty());
  auto killed = cli({"kill", "wc", "--wait", "1"});
  ASSERT_EQ(killed.exit_code, 0) << killed.output;
  EXPECT_TRUE(eventually([&] {
    for (pid_t pid : pids) {
      if (alive(pid)) return false;
    }
    auto ids = store_->children(paths_.assignments());
    return ids && ids->empty();
  }));
  auto nimbus = nimbus::NimbusClient::connect(nimbus_options());
  ASSERT_TRUE(nimbus) << nimbus.status().to_string();
  EXPECT_TRUE(eventually([&] {
    return (*nimbus)->download_blob(a->code_blob_key).code() == ErrorCode::kNotFound;
  }));
}

// topology.acker.executors=2: the word count's executors fill one worker's
// heap (6 x 128 MB of 768), so the scheduler puts both ackers in a worker of
// their own. The assignment lists them there, that worker runs them (and only
// them), and the sentences' trees complete through it.
TEST_F(ClusterTest, AckersOfTopologyAckerExecutorsRunWhereTheSchedulerPlacedThem) {
  start_cluster();
  auto r = cli({"submit", RSTORM_WORD_COUNT_LIB, "--name", "wc", "--wait", "-c",
                "topology.message.timeout.secs=5", "-c", "topology.acker.executors=2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::optional<thrift::Assignment> a = running_assignment();
  ASSERT_TRUE(a) << "the workers of the assignment, ackers included, do not all run";
  std::set<std::pair<std::string, int>> acker_slots, executor_slots;
  for (const auto& e : a->executors) {
    (e.executor.component == "__acker" ? acker_slots : executor_slots)
        .insert({e.slot.node_id, e.slot.port});
  }
  ASSERT_EQ(std::count_if(a->executors.begin(), a->executors.end(),
                          [](const auto& e) { return e.executor.component == "__acker"; }),
            2);
  ASSERT_EQ(acker_slots.size(), 1u);
  EXPECT_FALSE(executor_slots.count(*acker_slots.begin())) << "the ackers share a worker";
  EXPECT_TRUE(eventually([&] { return sentences_acked(*a) > 1000; })) << sentences_acked(*a);
  auto describe = cli({"describe", "wc"});
  ASSERT_EQ(describe.exit_code, 0) << describe.output;
  EXPECT_NE(describe.output.find("__acker[-1] __acker[-2]"), std::string::npos) << describe.output;
}

TEST_F(ClusterTest, BoltErrorsReachDescribeWithComponentTaskHostAndPort) {
  start_cluster();
  auto r = cli({"submit", RSTORM_FAILING_BOLT_LIB, "--name", "fb", "--wait"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json described;
  std::string last_output;
  const bool both = eventually([&] {
    auto d = cli({"describe", "fb", "--json"});
    last_output = d.output;
    if (d.exit_code != 0) return false;
    described = nlohmann::json::parse(d.output, nullptr, false);
    if (described.is_discarded()) return false;
    return described["errors"].size() == 2;
  });
  ASSERT_TRUE(both) << last_output;
  // The one executor of "picky" and its slot, as the assignment says.
  int picky_task = -1000, picky_port = -1;
  std::string picky_node, picky_host;
  for (const auto& e : described["executors"]) {
    if (e["component"] == "picky") {
      picky_task = e["task_start"].get<int>();
      picky_port = e["port"].get<int>();
      picky_node = e["node"].get<std::string>();
    }
  }
  for (const auto& n : described["nodes"]) {
    if (n["node"] == picky_node) picky_host = n["host"].get<std::string>();
  }
  ASSERT_NE(picky_port, -1) << described.dump();
  ASSERT_FALSE(picky_host.empty()) << described.dump();
  std::set<std::string> messages;
  for (const auto& e : described["errors"]) {
    EXPECT_EQ(e["component"], "picky");
    EXPECT_EQ(e["task_id"].get<int>(), picky_task);
    EXPECT_EQ(e["port"].get<int>(), picky_port);
    EXPECT_EQ(e["host"], picky_host);
    EXPECT_GT(e["time_ms"].get<std::int64_t>(), 0);
    messages.insert(e["message"].get<std::string>());
  }
  EXPECT_EQ(messages, (std::set<std::string>{
                          "reported error: value 3 is unlucky",
                          "execute threw: bad input 7; input from numbers failed"}));
  // The text form lists them too.
  auto text = cli({"describe", "fb"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("picky: execute threw: bad input 7"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find(", task " + std::to_string(picky_task) + " on " + picky_host + ":" +
                             std::to_string(picky_port) + ")"),
            std::string::npos)
      << text.output;
  // Killing the topology removes its errors.
  ASSERT_EQ(cli({"kill", "fb", "--wait", "0"}).exit_code, 0);
  EXPECT_TRUE(eventually([&] {
    auto ids = store_->children(paths_.errors());
    return ids && ids->empty();
  }));
}

// topology.fuse.executors on a cluster: round-robin over two workers puts
// executor k of numbers, double and sink in one worker (the scheduler places
// them as a unit), each worker runs its chain on one thread, tuples flow and
// are acked, and `rstorm describe` shows the chain.
TEST_F(ClusterTest, FusedChainIsPlacedAsUnitsAndDescribeShowsIt) {
  start_cluster();
  auto r = cli({"submit", RSTORM_FUSED_CHAIN_LIB, "--name", "chain", "--wait", "-c",
                "topology.fuse.executors=true", "-c", "topology.scheduler.strategy=round-robin",
                "-c", "topology.workers=2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto a = running_assignment();
  ASSERT_TRUE(a);
  std::map<std::string, std::vector<std::pair<int, std::pair<std::string, int>>>> by;
  std::set<std::pair<std::string, int>> slots;
  for (const auto& e : a->executors) {
    by[e.executor.component].push_back({e.executor.task_start, {e.slot.node_id, e.slot.port}});
    slots.insert({e.slot.node_id, e.slot.port});
  }
  ASSERT_EQ(slots.size(), 2u);
  for (auto& [component, executors] : by) std::sort(executors.begin(), executors.end());
  ASSERT_EQ(by["numbers"].size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(by["double"].at(k).second, by["numbers"][k].second) << k;
    EXPECT_EQ(by["sink"].at(k).second, by["numbers"][k].second) << k;
  }
  auto total = [&](const std::string& component, const std::string& counter) {
    std::uint64_t n = 0;
    for (const auto& [node, port] : slots) {
      auto beat = heartbeat(node, a->topology_id, port);
      if (beat && beat->components.count(component)) n += beat->components[component][counter];
    }
    return n;
  };
  EXPECT_TRUE(eventually([&] { return total("numbers", "acked") > 1000; }))
      << total("numbers", "acked");
  for (const auto& [node, port] : slots) {
    auto beat = heartbeat(node, a->topology_id, port);
    ASSERT_TRUE(beat);
    EXPECT_EQ(beat->fused,
              (std::map<std::string, std::string>{{"double", "numbers"}, {"sink", "double"}}))
        << node << ":" << port;
  }
  std::string last;
  EXPECT_TRUE(eventually([&] {
    auto d = cli({"describe", "chain", "--json"});
    last = d.output;
    auto j = nlohmann::json::parse(d.output, nullptr, false);
    return d.exit_code == 0 && !j.is_discarded() &&
           j["fused"] == nlohmann::json({{"double", "numbers"}, {"sink", "double"}});
  })) << last;
  auto text = cli({"describe", "chain"});
  EXPECT_NE(text.output.find("runs on one thread): numbers > double > sink\n"), std::string::npos)
      << text.output;
  ASSERT_EQ(cli({"kill", "chain", "--wait", "0"}).exit_code, 0);
}

TEST_F(ClusterTest, BoltBlockedForEverMakesDescribeAndListReportTheStallUntilItMovesAgain) {
  start_cluster();
  const auto dir = std::filesystem::temp_directory_path() /
                   ("rstorm-stall-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto release = dir / "release";
  auto r = cli({"submit", RSTORM_FAILING_BOLT_LIB, "--name", "stuck", "--wait", "-c",
                "failing_bolt.block.file=" + release.string(), "-c",
                "topology.stall.timeout.secs=2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json stall;
  std::string last;
  ASSERT_TRUE(eventually([&] {
    auto d = cli({"describe", "stuck", "--json"});
    last = d.output;
    auto j = nlohmann::json::parse(d.output, nullptr, false);
    if (d.exit_code != 0 || j.is_discarded() || j["topology"]["stall"].is_null()) return false;
    stall = j["topology"]["stall"];
    return stall["queued"] == nlohmann::json::array({"picky"});
  })) << last;
  EXPECT_GE(stall["stalled_secs"].get<std::int64_t>(), 2);
  EXPECT_GT(stall["pending"].get<std::int64_t>(), 0);
  EXPECT_EQ(stall["stalled_spouts"], nlohmann::json::array({"numbers"}));
  auto text = cli({"describe", "stuck"});
  EXPECT_NE(text.output.find("status: ACTIVE, no progress for "), std::string::npos) << text.output;
  // Whether picky's queue is also full depends on how far the spout's adaptive
  // bound has come down (its trees time out behind the blocked bolt).
  EXPECT_NE(text.output.find("trees pending at numbers; tuples queued at picky; queues full: "),
            std::string::npos)
      << text.output;
  auto list = cli({"list"});
  EXPECT_NE(list.output.find("no progress for "), std::string::npos) << list.output;
  // The bolt moves again: the stall report goes away.
  { std::ofstream(release.string()) << "go\n"; }
  EXPECT_TRUE(eventually([&] {
    auto d = cli({"describe", "stuck", "--json"});
    last = d.output;
    auto j = nlohmann::json::parse(d.output, nullptr, false);
    return d.exit_code == 0 && !j.is_discarded() && j["topology"]["stall"].is_null();
  })) << last;
  ASSERT_EQ(cli({"kill", "stuck", "--wait", "0"}).exit_code, 0);
  std::filesystem::remove_all(dir);
}

TEST_F(ClusterTest, WorkerThatCannotRunIsReportedBySubmitWaitDescribeAndList) {
  start_cluster();
  auto r = cli({"submit", RSTORM_FAILING_BOLT_LIB, "--name", "broken", "--wait", "-c",
                "failing_bolt.prepare.throw=true"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("prepare threw: cannot open the database"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("exit code 1"), std::string::npos) << r.output;
  nlohmann::json failing;
  std::string last;
  ASSERT_TRUE(eventually([&] {
    auto d = cli({"describe", "broken", "--json"});
    last = d.output;
    auto j = nlohmann::json::parse(d.output, nullptr, false);
    if (d.exit_code != 0 || j.is_discarded()) return false;
    failing = j["topology"]["failing_workers"];
    return failing.size() == 1 && failing[0]["restarts"].get<int>() >= 1;
  })) << last;
  EXPECT_EQ(failing[0]["exit_status"], "exit code 1");
  EXPECT_NE(failing[0]["reason"].get<std::string>().find(
                "component 'picky' task 2: prepare threw: cannot open the database"),
            std::string::npos)
      << failing.dump();
  EXPECT_LE(failing[0]["first_time_ms"].get<std::int64_t>(),
            failing[0]["last_time_ms"].get<std::int64_t>());
  auto text = cli({"describe", "broken"});
  EXPECT_NE(text.output.find("status: ACTIVE, 1 worker failing"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("Failing workers:"), std::string::npos) << text.output;
  auto list = cli({"list"});
  EXPECT_NE(list.output.find("1 worker failing: "), std::string::npos) << list.output;
  ASSERT_EQ(cli({"kill", "broken", "--wait", "0"}).exit_code, 0);
}

// A worker that crashes (a bolt's SIGSEGV) says so: the signal in describe,
// and a backtrace in its worker.log.
TEST_F(ClusterTest, CrashedWorkerIsReportedWithItsSignalAndABacktrace) {
  start_cluster();
  auto r = cli({"submit", RSTORM_FAILING_BOLT_LIB, "--name", "crashy", "-c",
                "failing_bolt.execute.crash=true"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json failing;
  std::string last;
  ASSERT_TRUE(eventually([&] {
    auto d = cli({"describe", "crashy", "--json"});
    last = d.output;
    auto j = nlohmann::json::parse(d.output, nullptr, false);
    if (d.exit_code != 0 || j.is_discarded()) return false;
    failing = j["topology"]["failing_workers"];
    return failing.size() == 1 && failing[0]["reason"].get<std::string>().find("crashed") !=
                                      std::string::npos;
  })) << last;
  EXPECT_EQ(failing[0]["exit_status"], "signal 11 (SIGSEGV)") << failing.dump();
  EXPECT_NE(failing[0]["reason"].get<std::string>().find(
                "the worker crashed: fatal signal 11 (SIGSEGV)"),
            std::string::npos)
      << failing.dump();
  const auto log = worker_dir(failing[0]["node"], assignment()->topology_id,
                              failing[0]["port"].get<int>()) /
                   "worker.log";
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("rstorm-worker: fatal signal 11 (SIGSEGV)"), std::string::npos) << text;
  EXPECT_NE(text.find("; backtrace:"), std::string::npos) << text;
  ASSERT_EQ(cli({"kill", "crashy", "--wait", "0"}).exit_code, 0);
}

TEST_F(ClusterTest, RebalanceChangesAComponentsExecutorsLiveAndLeavesOtherWorkersRunning) {
  start_cluster();
  submit_word_count();
  std::optional<thrift::Assignment> before = running_assignment();
  ASSERT_TRUE(before);
  std::map<std::pair<std::string, int>, std::int64_t> pid_before;
  for (const auto& [slot, executors] : executors_by_slot(*before)) {
    pid_before[slot] = heartbeat(slot.first, before->topology_id, slot.second)->pid;
  }
  // The resource-aware scheduler chooses the number of workers: -n is refused.
  auto n = cli({"rebalance", "wc", "-n", "3"});
  EXPECT_NE(n.exit_code, 0) << n.output;
  EXPECT_NE(n.output.find("resource-aware scheduler"), std::string::npos) << n.output;
  // Resource overrides that cannot be read, or name no component, change nothing.
  auto bad_json = cli({"rebalance", "wc", "-r", "{\"split\": 5"});
  EXPECT_EQ(bad_json.exit_code, 2) << bad_json.output;
  EXPECT_NE(bad_json.output.find("-r {\"split\": 5: "), std::string::npos) << bad_json.output;
  auto not_a_number = cli({"rebalance", "wc", "-r", "{\"split\": {\"cpu.pcore.percent\": \"x\"}}"});
  EXPECT_EQ(not_a_number.exit_code, 2) << not_a_number.output;
  EXPECT_NE(not_a_number.output.find("component 'split': cpu.pcore.percent is \"x\", not a number"),
            std::string::npos)
      << not_a_number.output;
  auto unknown = cli({"rebalance", "wc", "-r", "{\"splat\": {\"cpu.pcore.percent\": 20}}"});
  EXPECT_EQ(unknown.exit_code, 1) << unknown.output;
  EXPECT_NE(unknown.output.find("has no component 'splat'"), std::string::npos) << unknown.output;

  for (int split : {1, 2}) {
    auto r = cli({"rebalance", "wc", "-e", "split=" + std::to_string(split), "-w", "0"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::optional<thrift::Assignment> after;
    ASSERT_TRUE(eventually([&] {
      after = assignment();
      if (!after || after->version <= before->version) return false;
      int splits = 0;
      for (const auto& e : after->executors) splits += e.executor.component == "split";
      return splits == split && every_assigned_worker_runs(*after);
    })) << "split=" << split;
    // Task ids never change: split keeps tasks 5 and 6, in one executor or two.
    std::set<int> split_tasks;
    for (const auto& e : after->executors) {
      if (e.executor.component != "split") continue;
      for (int t = e.executor.task_start; t <= e.executor.task_end; ++t) split_tasks.insert(t);
    }
    EXPECT_EQ(split_tasks, (std::set<int>{5, 6}));
    // A worker whose executors stayed the same kept running (same process).
    const auto old_slots = executors_by_slot(*before);
    for (const auto& [slot, executors] : executors_by_slot(*after)) {
      auto it = old_slots.find(slot);
      if (it == old_slots.end() || it->second != executors) continue;
      EXPECT_EQ(heartbeat(slot.first, after->topology_id, slot.second)->pid, pid_before[slot])
          << slot.first << ":" << slot.second
          << " restarted though its executors stayed (split=" << split << ", assignment version "
          << after->version << "); what its supervisor and "
          << "worker said:\n"
          << lines_about_worker(slot.first, after->topology_id, slot.second);
    }
    // Sentences are acked again at the new parallelism.
    const std::uint64_t start = sentences_acked(*after);
    EXPECT_TRUE(eventually([&] { return sentences_acked(*after) > start + 1000; }))
        << "split=" << split;
    for (const auto& [slot, executors] : executors_by_slot(*after)) {
      pid_before[slot] = heartbeat(slot.first, after->topology_id, slot.second)->pid;
    }
    before = after;
  }
  auto d = cli({"describe", "wc"});
  EXPECT_NE(d.output.find("Placement (assignment version " + std::to_string(before->version) +
                          "; it moved or resized "),
            std::string::npos)
      << d.output;
}

// A windowed bolt's late tuples cross workers to their consumer (Storm 2.8
// cannot serialize them): clicks out of order by far more than the lag, the
// late stream's consumer in another worker than a counter; every click is
// acked, none fails.
TEST_F(ClusterTest, LateTuplesOfAWindowedBoltReachAConsumerInAnotherWorkerAndAreAcked) {
  start_cluster();
  constexpr int kClicks = 4000;
  auto r = cli({"submit", RSTORM_TOP_WORDS_LIB, "--name", "tw", "--wait", "-c",
                "topwords.events.limit=" + std::to_string(kClicks), "-c", "topwords.disorder.ms=3000",
                "-c", "topwords.print=false", "-c", "topology.bolts.watermark.idle.timeout.ms=1000",
                "-c", "topology.bolts.watermark.event.interval.ms=50",
                // Three executors of 128 MB per worker: more than one worker.
                "-c", "topology.worker.max.heap.size.mb=400"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::optional<thrift::Assignment> a = running_assignment();
  ASSERT_TRUE(a);
  std::set<std::pair<std::string, int>> late_slots, count_slots;
  for (const auto& e : a->executors) {
    if (e.executor.component == "late") late_slots.insert({e.slot.node_id, e.slot.port});
    if (e.executor.component == "count") count_slots.insert({e.slot.node_id, e.slot.port});
  }
  ASSERT_EQ(late_slots.size(), 1u);
  ASSERT_TRUE(count_slots.size() > 1 || count_slots != late_slots)
      << "the late stream's consumer shares the only worker of the counters";
  auto component_total = [&](const std::string& component, const std::string& counter) {
    std::uint64_t total = 0;
    std::set<std::pair<std::string, int>> slots;
    for (const auto& e : a->executors) slots.insert({e.slot.node_id, e.slot.port});
    for (const auto& [node, port] : slots) {
      auto beat = heartbeat(node, a->topology_id, port);
      if (beat && beat->components.count(component)) total += beat->components[component][counter];
    }
    return total;
  };
  std::string seen;
  EXPECT_TRUE(eventually([&] {
    const auto acked = component_total("clicks", "acked");
    seen = "clicks acked " + std::to_string(acked) + ", failed " +
           std::to_string(component_total("clicks", "failed")) + ", late executed " +
           std::to_string(component_total("late", "executed"));
    return acked == static_cast<std::uint64_t>(kClicks);
  })) << seen;
  EXPECT_EQ(component_total("clicks", "failed"), 0u) << seen;
  EXPECT_GT(component_total("late", "executed"), 0u) << seen;
  EXPECT_EQ(component_total("count", "executed"), static_cast<std::uint64_t>(kClicks)) << seen;
}

// `rstorm dev-cluster --secure`: supervisors fetch alice's code over mutual
// TLS and run it; bob may list but not kill or describe it; a plaintext
// client is told the port speaks TLS; an admin may kill it.
TEST_F(ClusterTest, SecureClusterRunsAlicesTopologyAndRefusesBobAndPlaintextClients) {
  auto started = start_test_cluster(/*slots=*/2, /*nimbuses=*/1, "cluster-test", /*secure=*/true);
  ASSERT_TRUE(started) << started.status().to_string();
  zk_ = std::move(started.value().zk);
  cluster_ = std::move(started.value().cluster);
  store_ = std::move(started.value().store);
  submit_word_count();
  std::optional<thrift::Assignment> a = running_assignment();
  ASSERT_TRUE(a);
  auto record = store_->children(paths_.topologies());
  ASSERT_TRUE(record && record->size() == 1);

  // A ZooKeeper session without the daemons' digest can neither read
  // rstorm's nodes nor change them.
  ZooKeeperOptions outsider_options;
  outsider_options.servers = zk_->connect_string();
  auto outsider = ZooKeeperStore::connect(outsider_options, Logger::null());
  ASSERT_TRUE(outsider) << outsider.status().to_string();
  ZooKeeperStore& zk = *outsider.value();
  auto node = zk.get(paths_.assignment(a->topology_id));
  EXPECT_EQ(node.code(), ErrorCode::kPermissionDenied) << node.status().to_string();
  EXPECT_NE(node.status().message().find("storm.zookeeper.auth.payload"), std::string::npos)
      << node.status().to_string();
  EXPECT_EQ(zk.children(paths_.topologies()).code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(zk.children(paths_.workerbeats()).code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(zk.children(paths_.supervisors()).code(), ErrorCode::kPermissionDenied);
  auto forged = zk.set(paths_.assignment(a->topology_id), "forged");
  EXPECT_EQ(forged.code(), ErrorCode::kPermissionDenied) << forged.status().to_string();
  EXPECT_EQ(zk.remove(paths_.topology(a->topology_id)).code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(zk.create(paths_.assignments() + "/evil", "x").code(), ErrorCode::kPermissionDenied);
  // The daemons' digest reads them (the test's own session holds it).
  auto readable = store_->get(paths_.assignment(a->topology_id));
  EXPECT_TRUE(readable) << readable.status().to_string();
  // Workers hold the topology's secret in a spec only their user can read.
  const auto slot = a->executors.front().slot;
  const auto spec = worker_dir(slot.node_id, a->topology_id, slot.port) / "spec.json";
  const auto perms = std::filesystem::status(spec).permissions();
  EXPECT_EQ(perms & (std::filesystem::perms::group_all | std::filesystem::perms::others_all),
            std::filesystem::perms::none);
  auto spec_text = wp::read_whole_file(spec);
  ASSERT_TRUE(spec_text);
  EXPECT_NE(spec_text->find("\"secret\""), std::string::npos);
  // ... and the worker token their supervisor keeps fresh: with it (and no
  // certificate) a worker may describe its topology on nimbus's TLS port,
  // and nothing more; a forged one is refused.
  const auto token_file =
      worker_dir(slot.node_id, a->topology_id, slot.port) / wp::kWorkerTokenFile;
  EXPECT_EQ(std::filesystem::status(token_file).permissions() &
                (std::filesystem::perms::group_all | std::filesystem::perms::others_all),
            std::filesystem::perms::none);
  auto token_bytes = wp::read_whole_file(token_file);
  ASSERT_TRUE(token_bytes) << token_bytes.status().to_string();
  auto token = decode_thrift<thrift::WorkerToken>(*token_bytes, "WorkerToken");
  ASSERT_TRUE(token) << token.status().to_string();
  auto cluster_config = read_yaml_config_file(cluster_->client_config());
  ASSERT_TRUE(cluster_config) << cluster_config.status().to_string();
  auto as_worker = nimbus::NimbusClient::connect(
      nimbus::NimbusClient::worker_options_from_config(*cluster_config, *token));
  ASSERT_TRUE(as_worker) << as_worker.status().to_string();
  auto described = (*as_worker)->topology_info(a->topology_id);
  ASSERT_TRUE(described) << described.status().to_string();
  EXPECT_EQ(described->summary.name, "wc");
  auto worker_kill = (*as_worker)->kill_topology("wc", 0);
  EXPECT_EQ(worker_kill.code(), ErrorCode::kPermissionDenied) << worker_kill.to_string();
  EXPECT_NE(worker_kill.message().find("a worker of topology '" + a->topology_id +
                                       "' may not kill topology 'wc'"),
            std::string::npos)
      << worker_kill.to_string();
  thrift::WorkerToken forged_token = *token;
  forged_token.signature[0] = static_cast<char>(forged_token.signature[0] ^ 0x40);
  auto forged_worker = nimbus::NimbusClient::connect(
      nimbus::NimbusClient::worker_options_from_config(*cluster_config, forged_token));
  ASSERT_FALSE(forged_worker);
  EXPECT_NE(forged_worker.status().message().find("is forged or damaged"), std::string::npos)
      << forged_worker.status().to_string();
  // Workers speak only TLS: a plaintext hello that claims to be one of them is
  // refused at the handshake, and the worker's log names where it came from.
  transport::FrameEncoder hello;
  hello.add_hello(a->topology_id, "127.0.0.1", slot.port);
  auto answer = sv::loopback_exchange(
      slot.port, std::string_view(reinterpret_cast<const char*>(hello.data()), hello.size()), 5s);
  ASSERT_TRUE(answer) << "worker " << slot.port << " does not listen";
  const auto worker_log = worker_dir(slot.node_id, a->topology_id, slot.port) / "worker.log";
  EXPECT_TRUE(eventually([&] {
    auto text = wp::read_whole_file(worker_log);
    return text && std::regex_search(*text, std::regex("refused connection from 127\\.0\\.0\\.1:"
                                                       "[0-9]+: TLS handshake failed: wrong "
                                                       "version number"));
  })) << "no refusal in "
      << worker_log;

  const std::string bob = cluster_->user_config("bob").string();
  auto list = run_cli({"list", "--config", bob});
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("wc"), std::string::npos) << list.output;
  auto kill = run_cli({"kill", "wc", "--config", bob});
  EXPECT_EQ(kill.exit_code, 1) << kill.output;
  EXPECT_NE(kill.output.find("user 'bob' may not kill topology 'wc' (owner 'alice')"),
            std::string::npos)
      << kill.output;
  auto describe = run_cli({"describe", "wc", "--config", bob});
  EXPECT_NE(describe.exit_code, 0) << describe.output;
  EXPECT_NE(describe.output.find("may not describe"), std::string::npos) << describe.output;
  std::ifstream log(cluster_->nimbus(0).log);
  const std::string nimbus_log((std::istreambuf_iterator<char>(log)), {});
  EXPECT_NE(nimbus_log.find("denied user 'bob'"), std::string::npos);
  EXPECT_NE(
      nimbus_log.find("worker of topology '" + a->topology_id + "' (user 'alice') at 127.0.0.1:"),
      std::string::npos);

  auto plaintext = run_cli({"list", "--config", cluster_->client_config().string(), "-c",
                            "nimbus.thrift.client.use.tls=false"});
  EXPECT_EQ(plaintext.exit_code, 3) << plaintext.output;
  EXPECT_NE(plaintext.output.find("TLS"), std::string::npos) << plaintext.output;

  auto killed =
      run_cli({"kill", "wc", "--wait", "1", "--config", cluster_->user_config("admin").string()});
  EXPECT_EQ(killed.exit_code, 0) << killed.output;
  EXPECT_TRUE(eventually([&] {
    auto ids = store_->children(paths_.assignments());
    return ids && ids->empty();
  }));
}

TEST_F(ClusterTest, KilledWorkerIsRestartedByItsSupervisor) {
  start_cluster();
  submit_word_count();
  std::optional<thrift::Assignment> a = running_assignment();
  ASSERT_TRUE(a);
  const auto& victim = a->executors.front().slot;
  auto before = heartbeat(victim.node_id, a->topology_id, victim.port);
  ASSERT_TRUE(before);
  ASSERT_EQ(::kill(static_cast<pid_t>(before->pid), SIGKILL), 0);
  ASSERT_TRUE(eventually([&] {
    auto now = heartbeat(victim.node_id, a->topology_id, victim.port);
    return now && now->pid != before->pid && alive(static_cast<pid_t>(now->pid));
  }));
  auto after = assignment();
  ASSERT_TRUE(after);
  EXPECT_EQ(after->executors, a->executors);  // nothing moved
  // describe keeps the failure for a minute, but says the worker runs again
  // rather than that it is failing.
  std::string last;
  ASSERT_TRUE(eventually([&] {
    auto d = cli({"describe", "wc"});
    last = d.output;
    return d.output.find("status: ACTIVE, 1 worker restarted after a failure") !=
           std::string::npos;
  })) << last;
  EXPECT_NE(last.find("Recent worker failures:"), std::string::npos) << last;
  EXPECT_NE(last.find("signal 9"), std::string::npos) << last;
  EXPECT_NE(last.find(", running again since "), std::string::npos) << last;
  EXPECT_EQ(last.find("failing"), std::string::npos) << last;
}

// The keyed state `state` of every task in `record`'s checkpoint (tasks 1 ..
// record.tasks: the user components' tasks), values of a key held by several
// tasks summed (K, V: its codecs' types).
template <typename K = std::string, typename V = std::int64_t>
std::map<K, V> checkpoint_state(worker::CheckpointStore& store,
                                const worker::CheckpointRecord& record, const std::string& state) {
  std::map<K, V> out;
  for (int t = 1; t <= record.tasks; ++t) {
    auto bytes = store.get(record, TaskId(t));
    EXPECT_TRUE(bytes.ok()) << bytes.status().message();
    if (!bytes.ok()) continue;
    auto entries = worker::decode_task_snapshot(*bytes, record.id, TaskId(t));
    EXPECT_TRUE(entries.ok()) << entries.status().message();
    if (!entries.ok()) continue;
    auto copy = std::make_shared<InMemoryStateStore>();
    for (const auto& [k, v] : *entries) copy->put(k, v);
    KeyValueState<K, V>(copy, state).for_each([&](const K& k, const V& v) { out[k] += v; });
  }
  return out;
}

// The newest complete checkpoint; nullopt when none is or it cannot be read.
std::optional<worker::CheckpointRecord> last_complete(worker::SharedCheckpointStore& store) {
  auto l = store.last_complete();
  return l.ok() ? *l : std::nullopt;
}

// Where the examples' spouts stand in `record`: the next input they emit
// (their keyed state "position", key "next").
std::int64_t spout_position(worker::CheckpointStore& store,
                            const worker::CheckpointRecord& record) {
  auto p = checkpoint_state(store, record, "position");
  return p.count("next") ? p["next"] : std::int64_t{0};
}

// The topology's recovery epoch reaches `epoch` (its workers restarted on a
// checkpoint that many times).
bool epoch_reaches(worker::SharedCheckpointStore& store, std::int64_t epoch) {
  return eventually([&] {
    auto e = store.read_epoch();
    return e.ok() && *e >= epoch;
  });
}

// The nodes that run executors of `component`.
std::set<std::string> nodes_of(const thrift::Assignment& a, const std::string& component) {
  std::set<std::string> out;
  for (const auto& e : a.executors) {
    if (e.executor.component == component) out.insert(e.slot.node_id);
  }
  return out;
}

// Exactly once across kill -9: the stateful word count over a finite input,
// checkpoints every 200 ms, in three workers on two supervisors. A worker is
// killed three times (each time after a new checkpoint completed); every
// worker then restarts on the last complete checkpoint (a new recovery
// epoch). The checkpoint taken after the spout's last sentence holds exactly
// the true counts: none lost with a killed worker, none counted twice by the
// replay. `folder`: the checkpoints are kept in a folder, else by nimbus
// (the default: parts in its blob store, records and epoch in ZooKeeper).
// `second`: what the second round does instead (see SecondRound): the
// counter's state is then restored by tasks in other executors, workers or
// supervisors.
void ClusterTest::stateful_word_count_through_kill9(bool folder, SecondRound second) {
  const bool failover = second == SecondRound::kNimbusFailover;
  // A lost supervisor's three workers must fit into the other's slots.
  start_cluster(failover ? 2 : 1, second == SecondRound::kLoseCountersSupervisor ? 4 : 2);
  // A failover takes longer: the dead leader's ZooKeeper session must expire
  // (storm.zookeeper.session.timeout, 6 s here) before the standby leads, and
  // the input must outlast that (300,000 sentences ran out at ~45,000/s; the
  // test passed only when the nimbus it killed was the standby).
  const std::int64_t kSentences = failover ? 1000000 : 150000;
  const auto dir = cluster_->work_dir() / "test-checkpoints";
  auto r =
      cli({"submit", RSTORM_STATEFUL_WORD_COUNT_LIB, "--name", "swc", "--wait", "-c",
           "topology.state.checkpointing=true", "-c", "topology.state.checkpoint.interval.ms=200",
           "-c", std::string("topology.state.checkpoint.store=") + (folder ? "folder" : "nimbus"),
           "-c", "topology.state.checkpoint.dir=" + dir.string(), "-c",
           // Every checkpoint kept: one the test reads is never removed under it.
           "topology.state.checkpoint.retained=100000", "-c",
           "wordcount.sentences.limit=" + std::to_string(kSentences), "-c",
           "wordcount.report.print=false", "-c", "topology.worker.max.heap.size.mb=400"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::optional<thrift::Assignment> a = running_assignment();
  ASSERT_TRUE(a);
  ASSERT_GE(executors_by_slot(*a).size(), 3u);
  std::shared_ptr<worker::SharedCheckpointStore> shared;
  if (folder) {
    shared = std::make_shared<worker::FolderCheckpointStore>(dir / a->topology_id);
  } else {
    auto options = nimbus_options();
    if (failover) options.seeds.push_back(nimbus_options(1).seeds.front());
    auto client = nimbus::NimbusClient::connect(options);
    ASSERT_TRUE(client) << client.status().to_string();
    shared = std::make_shared<wp::NimbusCheckpointStore>(
        std::shared_ptr<nimbus::NimbusClient>(std::move(client).value()), a->topology_id);
  }
  worker::SharedCheckpointStore& store = *shared;
  // Where the counter runs after the second round, when it moved.
  std::string counter_node;
  int surviving_nimbus = 0;  // the standby that leads after the failover
  std::int64_t seen = 0;
  for (int round = 1; round <= 3; ++round) {
    std::optional<worker::CheckpointRecord> done;
    ASSERT_TRUE(eventually([&] {
      done = last_complete(store);
      return done && done->id > seen;
    })) << "no checkpoint completed in round "
        << round;
    seen = done->id;
    ASSERT_LT(spout_position(store, *done), kSentences)
        << "the input ran out before round " << round;
    const std::optional<thrift::Assignment> before = assignment();
    ASSERT_TRUE(before);
    if (round == 2 && second == SecondRound::kNimbusFailover) {
      // The standby copies the parts of each checkpoint the leader records
      // (woken by the checkpoint node's watch). A checkpoint recorded just
      // before the leader dies may not have been copied yet, and on a busy
      // machine neither may the few before it: the leader is killed once the
      // standby holds a whole checkpoint, which it then restores from. Both
      // nimbuses start at once, so either may lead.
      int leader = -1;
      ASSERT_TRUE(eventually([&] { return (leader = leading_nimbus()) >= 0; }))
          << "no nimbus says which one leads";
      const int standby_index = 1 - leader;
      surviving_nimbus = standby_index;
      auto holds_a_checkpoint = [&](std::string* why) {
        auto options = nimbus_options(standby_index);
        options.follow_leader = false;
        auto standby = nimbus::NimbusClient::connect(options);
        if (!standby) {
          *why = standby.status().to_string();
          return false;
        }
        wp::NimbusCheckpointStore copies(
            std::shared_ptr<nimbus::NimbusClient>(std::move(standby).value()), a->topology_id);
        auto recorded = copies.complete_checkpoints();
        if (!recorded.ok()) {
          *why = std::string(recorded.status().message());
          return false;
        }
        for (const auto& c : *recorded) {
          bool all = true;
          for (int t = 1; t <= c.tasks; ++t) all = all && copies.get(c, TaskId(t)).ok();
          if (all) return true;
        }
        *why = "it holds none of the " + std::to_string(recorded->size()) +
               " checkpoints the leader recorded";
        return false;
      };
      std::string why;
      ASSERT_TRUE(eventually([&] { return holds_a_checkpoint(&why); }))
          << "the standby copies no checkpoint from the leader: " << why;
      ASSERT_TRUE(cluster_->kill_nimbus(leader));
      ASSERT_TRUE(eventually([&] {
        auto r = cli({"list", "--json"}, standby_index);
        return r.exit_code == 0 && r.output.find("\"swc\"") != std::string::npos;
      })) << "the standby nimbus does not lead";
      // What it copied is still there once it leads.
      EXPECT_TRUE(holds_a_checkpoint(&why)) << "after the failover, " << why;
      // Checkpoints go on under the new leader before the worker is killed.
      ASSERT_TRUE(eventually([&] {
        done = last_complete(store);
        return done && done->id > seen + 1;
      })) << "no checkpoint completed after the failover";
      seen = done->id;
    }
    if (round == 2 && (second == SecondRound::kMergeCounter ||
                       second == SecondRound::kMoveCounterToAnotherSupervisor)) {
      std::vector<std::string> args = {"rebalance", "swc", "-e", "count=1", "-w", "0"};
      if (second == SecondRound::kMoveCounterToAnotherSupervisor) {
        // The CPU each supervisor's other executors take (of the 400 points
        // of kFastConfig): the merged counter asks for what the less busy
        // one has left, which the other cannot hold.
        std::map<std::string, double> taken = {{cluster_->supervisor_id(0), 0},
                                               {cluster_->supervisor_id(1), 0}};
        for (const auto& e : before->executors) {
          if (e.executor.component != "count")
            taken[e.slot.node_id] += e.resources.cpu_pcore_percent;
        }
        const auto target = std::min_element(taken.begin(), taken.end(), [](auto& x, auto& y) {
                              return x.second < y.second;
                            })->first;
        const auto busier = std::max_element(taken.begin(), taken.end(), [](auto& x, auto& y) {
                              return x.second < y.second;
                            })->second;
        ASSERT_LT(taken[target], busier) << "both supervisors are as busy";
        ASSERT_NE(nodes_of(*before, "count"), std::set<std::string>{target})
            << "the counter already runs only on " << target;
        counter_node = target;
        // Less than all that is free: an acker of the counter's new worker may join it.
        const double cpu = 400 - (taken[target] + busier) / 2;
        args.insert(args.end(), {"-r", "{\"count\": {\"cpu.pcore.percent\": " +
                                           std::to_string(static_cast<int>(cpu)) + "}}"});
      }
      auto r = cli(args);
      ASSERT_EQ(r.exit_code, 0) << r.output;
      ASSERT_TRUE(eventually([&] {
        auto after = assignment();
        if (!after || after->version <= before->version) return false;
        int counters = 0;
        for (const auto& e : after->executors) counters += e.executor.component == "count";
        return counters == 1 && every_assigned_worker_runs(*after);
      })) << "the rebalance did not take effect";
      if (!counter_node.empty()) {
        EXPECT_EQ(nodes_of(*assignment(), "count"), std::set<std::string>{counter_node})
            << "the counter did not move to the supervisor that can hold it";
      }
    } else if (round == 2 && second == SecondRound::kLoseCountersSupervisor) {
      const std::string lost = *nodes_of(*before, "count").begin();
      counter_node = cluster_->supervisor_id(supervisor_index(lost) == 0 ? 1 : 0);
      ASSERT_TRUE(cluster_->kill_supervisor(supervisor_index(lost)));
      ASSERT_TRUE(eventually([&] {
        auto after = assignment();
        return after && after->version > before->version &&
               nodes_of(*after, "count") == std::set<std::string>{counter_node} &&
               every_assigned_worker_runs(*after);
      })) << "the counter did not move off the lost "
          << lost;
    } else {
      kill_worker(a->topology_id, round - 1);
      if (HasFatalFailure()) return;
    }
    ASSERT_TRUE(epoch_reaches(store, round))
        << "the restarted workers did not move the recovery epoch on";
  }
  // The checkpoint after the last sentence: every count, exactly.
  std::optional<worker::CheckpointRecord> final_checkpoint;
  ASSERT_TRUE(eventually(
      [&] {
        final_checkpoint = last_complete(store);
        return final_checkpoint && spout_position(store, *final_checkpoint) == kSentences;
      },
      600s))
      << "last checkpoint: " << (final_checkpoint ? final_checkpoint->id : 0) << " at sentence "
      << (final_checkpoint ? spout_position(store, *final_checkpoint) : 0);
  const std::vector<std::string> sentences = {
      "the cow jumped over the moon", "an apple a day keeps the doctor away",
      "four score and seven years ago", "snow white and the seven dwarfs",
      "i am at two with nature"};
  std::map<std::string, std::int64_t> truth;
  for (std::int64_t i = 0; i < kSentences; ++i) {
    std::istringstream words(sentences[static_cast<std::size_t>(i % 5)]);
    for (std::string w; words >> w;) ++truth[w];
  }
  EXPECT_EQ(checkpoint_state(store, *final_checkpoint, "counts"), truth)
      << "checkpoint " << final_checkpoint->id << " of epoch " << final_checkpoint->epoch;
  EXPECT_GE(final_checkpoint->epoch, 3);
  if (!counter_node.empty()) {
    // The counts were kept by tasks on the supervisor the counter moved to.
    EXPECT_EQ(nodes_of(*assignment(), "count"), std::set<std::string>{counter_node});
  }
  if (!folder) {
    // `rstorm describe` shows the last complete checkpoint.
    auto described = cli({"describe", "swc"}, surviving_nimbus);
    EXPECT_NE(described.output.find("Checkpoints: last complete"), std::string::npos)
        << described.output;
  }
}

TEST_F(ClusterTest, StatefulWordCountKeepsExactCountsThroughKill9OfWorkers) {
  stateful_word_count_through_kill9(/*folder=*/false);
}

TEST_F(ClusterTest, StatefulWordCountWithAFolderStoreKeepsExactCountsThroughKill9) {
  stateful_word_count_through_kill9(/*folder=*/true);
}

TEST_F(ClusterTest, StatefulWordCountKeepsExactCountsThroughNimbusFailoverAndKill9) {
  stateful_word_count_through_kill9(/*folder=*/false, SecondRound::kNimbusFailover);
}

TEST_F(ClusterTest, StatefulWordCountKeepsExactCountsThroughARebalanceOfItsCounter) {
  stateful_word_count_through_kill9(/*folder=*/false, SecondRound::kMergeCounter);
}

TEST_F(ClusterTest, StatefulWordCountKeepsExactCountsThroughARebalanceToAnotherSupervisor) {
  stateful_word_count_through_kill9(/*folder=*/false, SecondRound::kMoveCounterToAnotherSupervisor);
}

TEST_F(ClusterTest, StatefulWordCountKeepsExactCountsThroughTheLossOfItsCountersSupervisor) {
  stateful_word_count_through_kill9(/*folder=*/false, SecondRound::kLoseCountersSupervisor);
}

// The top words example's click stream, computed here from its definition
// (examples/top_words/top_words.hpp): click `id` has word
// kWords[floor(u^2 * 12)] for u from splitmix64(id), and timestamp
// 1.7e12 + 10 id - (splitmix64(splitmix64(id)) mod (disorder + 1)).
std::pair<std::string, std::int64_t> top_words_click(std::int64_t id, std::int64_t disorder) {
  static const std::vector<std::string> kWords = {"storm", "stream", "tuple",  "bolt",
                                                  "spout", "window", "state",  "ack",
                                                  "rack",  "node",   "worker", "nimbus"};
  auto mix = [](std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  };
  const std::uint64_t h = mix(static_cast<std::uint64_t>(id));
  const double u = static_cast<double>(h >> 11) / static_cast<double>(1ull << 53);
  const auto index = std::min(kWords.size() - 1, static_cast<std::size_t>(u * u * kWords.size()));
  const auto jitter = static_cast<std::int64_t>(mix(h) % static_cast<std::uint64_t>(disorder + 1));
  return {kWords[index], 1'700'000'000'000 + id * 10 - jitter};
}

// Exactly once for windows: the top words example (event-time sliding
// windows of 10 s every 2 s in two counter tasks, a ranker keeping each
// complete window's top 3 in keyed state) with checkpoints every 200 ms, in
// three workers on two supervisors; a worker is killed twice, each time
// after a new checkpoint. The counters' windows (the clicks they buffer, the
// watermark, the next window's end) are restored with their checkpoint and
// the spout replays from its position, so the rankings in the checkpoint
// taken after the last click are exactly those computed here from the
// clicks: no click lost with a window, none counted twice.
TEST_F(ClusterTest, TopWordsWindowsKeepExactRankingsThroughKill9OfWorkers) {
  start_cluster();
  const std::int64_t kClicks = 300000;
  const std::int64_t kDisorder = 400;
  auto r =
      cli({"submit", RSTORM_TOP_WORDS_LIB, "--name", "tw", "--wait", "-c",
           "topology.state.checkpointing=true", "-c", "topology.state.checkpoint.interval.ms=200",
           "-c", "topology.state.checkpoint.retained=100000", "-c",
           "topwords.events.limit=" + std::to_string(kClicks), "-c",
           "topwords.disorder.ms=" + std::to_string(kDisorder), "-c", "topwords.print=false", "-c",
           "topwords.rankings.kept=100000", "-c",
           // A restart must not make the restored counters think the
           // spout went idle (which would move event time on).
           "topology.bolts.watermark.idle.timeout.ms=10000", "-c",
           "topology.worker.max.heap.size.mb=400"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::optional<thrift::Assignment> a = running_assignment();
  ASSERT_TRUE(a);
  ASSERT_GE(executors_by_slot(*a).size(), 3u);
  auto client = nimbus::NimbusClient::connect(nimbus_options());
  ASSERT_TRUE(client) << client.status().to_string();
  wp::NimbusCheckpointStore store(std::shared_ptr<nimbus::NimbusClient>(std::move(client).value()),
                                  a->topology_id);
  std::int64_t seen = 0;
  for (int round = 1; round <= 2; ++round) {
    std::optional<worker::CheckpointRecord> done;
    ASSERT_TRUE(eventually([&] {
      done = last_complete(store);
      return done && done->id > seen && spout_position(store, *done) > 0;
    })) << "no checkpoint completed in round "
        << round;
    seen = done->id;
    ASSERT_LT(spout_position(store, *done), kClicks) << "the input ran out before round " << round;
    kill_worker(a->topology_id, round);
    if (HasFatalFailure()) return;
    ASSERT_TRUE(epoch_reaches(store, round))
        << "the restarted worker did not move the recovery epoch on";
  }
  // The truth: every window [end - 10 s, end) ending at a multiple of 2 s
  // that holds a click, its top 3 (count descending, then word).
  std::map<std::int64_t, std::map<std::string, std::int64_t>> windows;
  for (std::int64_t id = 0; id < kClicks; ++id) {
    const auto [word, ts] = top_words_click(id, kDisorder);
    for (std::int64_t end = (ts / 2000 + 1) * 2000; end <= ts + 10000; end += 2000) {
      ++windows[end][word];
    }
  }
  std::map<std::int64_t, std::string> truth;
  for (const auto& [end, counts] : windows) {
    std::vector<std::pair<std::string, std::int64_t>> all(counts.begin(), counts.end());
    std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) {
      return x.second != y.second ? x.second > y.second : x.first < y.first;
    });
    std::string line;
    for (std::size_t i = 0; i < std::min<std::size_t>(3, all.size()); ++i) {
      line += (line.empty() ? "" : ", ") + all[i].first + "=" + std::to_string(all[i].second);
    }
    truth[end] = line;
  }
  // The ranker completes a window once both counters sent a later one: all
  // but the last, once event time moved past the end of the input (the
  // spout idle for 10 s).
  const std::int64_t last_end = truth.rbegin()->first;
  std::optional<worker::CheckpointRecord> final_checkpoint;
  std::map<std::int64_t, std::string> rankings;
  ASSERT_TRUE(eventually(
      [&] {
        final_checkpoint = last_complete(store);
        if (!final_checkpoint || spout_position(store, *final_checkpoint) != kClicks) return false;
        rankings =
            checkpoint_state<std::int64_t, std::string>(store, *final_checkpoint, "rankings");
        return !rankings.empty() && rankings.rbegin()->first >= last_end - 2000;
      },
      600s))
      << "last checkpoint: " << (final_checkpoint ? final_checkpoint->id : 0) << " with "
      << rankings.size() << " rankings, the newest ending at "
      << (rankings.empty() ? 0 : rankings.rbegin()->first) << " (the input's last window ends at "
      << last_end << ")";
  std::map<std::int64_t, std::string> expected = truth;
  expected.erase(last_end);
  rankings.erase(last_end);
  EXPECT_EQ(rankings.size(), expected.size());
  int wrong = 0;
  for (const auto& [end, line] : expected) {
    auto it = rankings.find(end);
    const std::string got = it == rankings.end() ? "(none)" : it->second;
    if (got != line && ++wrong <= 5) {
      ADD_FAILURE() << "window ending at " << end << ": ranked " << got << ", truth " << line;
    }
  }
  EXPECT_EQ(wrong, 0) << "of " << expected.size() << " windows";
  EXPECT_GE(final_checkpoint->epoch, 2);
}

// The checkpoint store unreachable: with nimbus down, checkpoints fail and
// are reported naming the task and checkpoint, while the topology keeps
// processing on the last good checkpoint; when nimbus is back, checkpoints
// complete again and no worker restarted in between.
TEST_F(ClusterTest, StatefulWordCountRunsOnWhileNimbusIsDownAndCheckpointsResume) {
  start_cluster();
  auto r =
      cli({"submit", RSTORM_STATEFUL_WORD_COUNT_LIB, "--name", "swc", "--wait", "-c",
           "topology.state.checkpointing=true", "-c", "topology.state.checkpoint.interval.ms=200",
           "-c", "wordcount.sentences.limit=100000000", "-c", "wordcount.report.print=false", "-c",
           "topology.worker.max.heap.size.mb=400"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::optional<thrift::Assignment> a = running_assignment();
  ASSERT_TRUE(a);
  auto client = nimbus::NimbusClient::connect(nimbus_options());
  ASSERT_TRUE(client) << client.status().to_string();
  wp::NimbusCheckpointStore store(std::shared_ptr<nimbus::NimbusClient>(std::move(client).value()),
                                  a->topology_id);
  auto last_id = [&]() -> std::int64_t {
    auto l = last_complete(store);
    return l ? l->id : 0;
  };
  std::int64_t before = 0;
  ASSERT_TRUE(eventually([&] { return (before = last_id()) > 0; })) << "no checkpoint completed";
  const auto pids = worker_pids_on_disk();
  auto executed = [&] {
    std::uint64_t total = 0;
    for (const auto& [slot, executors] : executors_by_slot(*a)) {
      auto beat = heartbeat(slot.first, a->topology_id, slot.second);
      if (beat && beat->components.count("count")) total += beat->components["count"]["executed"];
    }
    return total;
  };
  ASSERT_TRUE(cluster_->kill_nimbus(0));
  // Processing goes on.
  const std::uint64_t at_kill = executed();
  EXPECT_TRUE(eventually([&] { return executed() > at_kill + 10000; }))
      << "the counters stopped while nimbus was down";
  // The failed checkpoints are logged naming the task and the checkpoint.
  auto logs = [&] {
    std::string all;
    for (const auto& [slot, executors] : executors_by_slot(*a)) {
      auto text =
          wp::read_whole_file(worker_dir(slot.first, a->topology_id, slot.second) / "worker.log");
      if (text) all += *text;
    }
    return all;
  };
  std::string text;
  EXPECT_TRUE(eventually([&] {
    text = logs();
    return text.find("cannot store the part of task") != std::string::npos &&
           text.find("is rstorm-nimbus running?") != std::string::npos;
  })) << "no failed checkpoint in the workers' logs";
  ASSERT_TRUE(cluster_->start_nimbus(0));
  EXPECT_TRUE(eventually([&] { return last_id() > before; }, 120s))
      << "no checkpoint completed after nimbus came back";
  for (pid_t pid : pids) EXPECT_TRUE(alive(pid)) << "worker " << pid << " restarted";
}

// A spout whose worker is killed starts again with new tuple-tree roots: its
// old trees may still be pending at an acker in another worker, and a reused
// root would merge an old tree with a new one (the new tree then never
// completes and fails at the message timeout, or completes on the old tree's
// acks). After the restart the spout runs past the number of trees its first
// run made, is deactivated, and every tree it emitted must be acked, none
// failed. (Before the roots started at a random point, hundreds failed.)
TEST_F(ClusterTest, RestartedSpoutsNewTreesCompleteWhileItsOldOnesArePendingAtAnotherWorker) {
  start_cluster();
  auto r = cli({"submit", RSTORM_WORD_COUNT_LIB, "--name", "wc", "--wait", "-c",
                "topology.message.timeout.secs=20", "-c", "topology.max.spout.pending=1000"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::optional<thrift::Assignment> a = running_assignment();
  ASSERT_TRUE(a);
  std::pair<std::string, int> spout_slot;
  for (const auto& [slot, executors] : executors_by_slot(*a)) {
    for (const auto& e : executors) {
      if (std::get<0>(e) == "sentences") spout_slot = slot;
    }
  }
  ASSERT_FALSE(spout_slot.first.empty());
  auto spout = [&]() { return heartbeat(spout_slot.first, a->topology_id, spout_slot.second); };
  std::optional<wp::WorkerHeartbeatFile> first;
  ASSERT_TRUE(eventually([&] {
    first = spout();
    return first && first->components["sentences"]["acked"] >= 20000;
  }));
  const std::uint64_t first_run = first->components["sentences"]["emitted"];
  ASSERT_EQ(::kill(static_cast<pid_t>(first->pid), SIGKILL), 0);
  std::optional<wp::WorkerHeartbeatFile> now;
  ASSERT_TRUE(eventually([&] {
    now = spout();
    return now && now->pid != first->pid && now->components["sentences"]["acked"] > 2 * first_run;
  })) << "the restarted spout did not get past " << 2 * first_run << " acked trees";
  auto off = cli({"deactivate", "wc"});
  ASSERT_EQ(off.exit_code, 0) << off.output;
  ASSERT_TRUE(eventually([&] {
    now = spout();
    if (!now || now->pid == first->pid) return false;
    auto& c = now->components["sentences"];
    return c["acked"] + c["failed"] == c["emitted"];
  })) << "trees still pending";
  EXPECT_EQ(now->components["sentences"]["failed"], 0u)
      << "of " << now->components["sentences"]["emitted"] << " trees (first run: " << first_run << ")";
}

TEST_F(ClusterTest, DeactivateAndActivateReachTheSpoutsOfEveryWorker) {
  start_cluster();
  submit_word_count();
  std::optional<thrift::Assignment> a = running_assignment();
  ASSERT_TRUE(a);
  std::set<std::pair<std::string, int>> slots;
  for (const auto& e : a->executors) slots.insert({e.slot.node_id, e.slot.port});
  auto all_workers = [&](bool active) {
    for (const auto& [node, port] : slots) {
      auto beat = heartbeat(node, a->topology_id, port);
      if (!beat || beat->active != active) return false;
    }
    return true;
  };
  ASSERT_TRUE(eventually([&] { return all_workers(true); }));
  auto off = cli({"deactivate", "wc"});
  ASSERT_EQ(off.exit_code, 0) << off.output;
  EXPECT_TRUE(eventually([&] { return all_workers(false); }));
  auto on = cli({"activate", "wc"});
  ASSERT_EQ(on.exit_code, 0) << on.output;
  EXPECT_TRUE(eventually([&] { return all_workers(true); }));
}

TEST_F(ClusterTest, StoppedSupervisorsExecutorsMoveToTheOtherAndTheRestStay) {
  start_cluster();
  submit_word_count();
  std::optional<thrift::Assignment> a = running_assignment();
  ASSERT_TRUE(a);
  // Stop the supervisor with the fewest executors; if the scheduler put
  // everything on one node, stop that one (its executors must move).
  std::map<std::string, int> per_node;
  for (const auto& e : a->executors) ++per_node[e.slot.node_id];
  const std::string lost = per_node.size() == 1 ? per_node.begin()->first
                                                : std::min_element(per_node.begin(), per_node.end(),
                                                                   [](auto& x, auto& y) { return x.second < y.second; })->first;
  const std::string other = cluster_->supervisor_id(supervisor_index(lost) == 0 ? 1 : 0);
  ASSERT_TRUE(cluster_->stop_supervisor(supervisor_index(lost)));
  std::optional<thrift::Assignment> b;
  ASSERT_TRUE(eventually([&] {
    b = assignment();
    if (!b || b->version == a->version) return false;
    for (const auto& e : b->executors) {
      if (e.slot.node_id == lost) return false;
    }
    return every_assigned_worker_runs(*b);
  })) << "executors did not move off " << lost;
  // Executors that were on the surviving node kept their slot.
  std::map<std::pair<std::string, int>, thrift::WorkerSlot> after;
  for (const auto& e : b->executors) after[{e.executor.component, e.executor.task_start}] = e.slot;
  for (const auto& e : a->executors) {
    if (e.slot.node_id != other) continue;
    EXPECT_EQ(after.at({e.executor.component, e.executor.task_start}), e.slot)
        << e.executor.component << " " << e.executor.task_start;
  }
}

TEST_F(ClusterTest, StandbyNimbusTakesOverAndTheTopologyKeepsRunning) {
  start_cluster(2);
  submit_word_count();
  std::optional<thrift::Assignment> a = running_assignment();
  ASSERT_TRUE(a);
  const auto pids = worker_pids_on_disk();
  // Both nimbuses start at once, so either may lead.
  int leader = -1;
  ASSERT_TRUE(eventually([&] { return (leader = leading_nimbus()) >= 0; }));
  const int standby = 1 - leader;
  ASSERT_TRUE(cluster_->kill_nimbus(leader));
  // The standby leads: it answers `list` on its own port and shows wc.
  ASSERT_TRUE(eventually([&] {
    auto r = cli({"list", "--json"}, standby);
    return r.exit_code == 0 && r.output.find("\"wc\"") != std::string::npos;
  }));
  EXPECT_TRUE(eventually([&] { return leading_nimbus(standby) == standby; }));
  auto cluster = cli({"cluster", "--json"}, standby);
  EXPECT_EQ(cluster.exit_code, 0) << cluster.output;
  // Workers kept running, in place.
  for (pid_t pid : pids) EXPECT_TRUE(alive(pid));
  auto after = assignment();
  ASSERT_TRUE(after);
  EXPECT_EQ(after->executors, a->executors);
  EXPECT_TRUE(every_assigned_worker_runs(*after));
}

// Byte strings that are not what a port expects: random bytes, absurd length
// prefixes, and every `valid` message cut short at several points.
std::vector<std::string> garbage(std::mt19937_64& rng, const std::vector<std::string>& valid) {
  std::vector<std::string> out;
  auto random_bytes = [&](std::size_t n) {
    std::string b(n, '\0');
    for (auto& c : b) c = static_cast<char>(rng() & 0xff);
    return b;
  };
  for (std::size_t n : {1, 3, 4, 7, 64, 4096, 65536}) out.push_back(random_bytes(n));
  out.push_back(std::string("\xff\xff\xff\xff", 4));                      // length -1
  out.push_back(std::string("\x7f\xff\xff\xff", 4) + random_bytes(1024));  // 2 GiB claimed
  out.push_back(std::string("\x00\x00\x00\x00", 4) + random_bytes(16));    // empty frame
  out.push_back("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  for (const auto& v : valid) {
    for (std::size_t cut : {std::size_t{1}, std::size_t{4}, std::size_t{5}, v.size() / 2, v.size() - 1}) {
      if (cut < v.size()) out.push_back(v.substr(0, cut));
    }
    // The whole message, then random bytes where the next frame should be.
    out.push_back(v + random_bytes(256));
    // The message with a few bytes flipped.
    std::string flipped = v;
    for (int k = 0; k < 4; ++k) flipped[rng() % flipped.size()] ^= static_cast<char>(1 + rng() % 255);
    out.push_back(flipped);
  }
  return out;
}

// A Nimbus call as a client writes it (framed, binary protocol).
template <typename Send>
std::string nimbus_call(Send&& send) {
  auto buffer = std::make_shared<apache::thrift::transport::TMemoryBuffer>();
  auto framed = std::make_shared<apache::thrift::transport::TFramedTransport>(buffer);
  auto protocol = std::make_shared<apache::thrift::protocol::TBinaryProtocol>(framed);
  thrift::NimbusClient client(protocol);
  send(client);
  return buffer->getBufferAsString();
}

// What the word count's report bolt must end with after sentences 0..n-1, each
// counted once.
std::map<std::string, std::int64_t> true_word_counts(std::int64_t n) {
  static const std::vector<std::string> kSentences = {
      "the cow jumped over the moon", "an apple a day keeps the doctor away",
      "four score and seven years ago", "snow white and the seven dwarfs", "i am at two with nature"};
  std::map<std::string, std::int64_t> out;
  for (std::int64_t id = 0; id < n; ++id) {
    std::istringstream words(kSentences[static_cast<std::size_t>(id % 5)]);
    for (std::string w; words >> w;) ++out[w];
  }
  return out;
}

// Random and truncated bytes sent to nimbus's Thrift port and to every
// worker's data port while the word count runs leave nimbus answering, every
// worker running (same process), and the counts exact: every sentence the
// spout emitted is acked once, none fails, and the report bolt ends with the
// true count of every word.
TEST_F(ClusterTest, GarbageOnNimbusAndWorkerPortsLeavesBothRunningAndCountsExact) {
  start_cluster();
  auto submitted = cli({"submit", RSTORM_WORD_COUNT_LIB, "--name", "wc", "--wait", "-c",
                        "wordcount.report.top=100"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  std::optional<thrift::Assignment> a = running_assignment();
  ASSERT_TRUE(a);
  const auto slots = executors_by_slot(*a);
  ASSERT_GE(slots.size(), 2u) << "the word count should span two workers";
  std::map<std::pair<std::string, int>, std::int64_t> pids;
  for (const auto& [slot, executors] : slots) {
    pids[slot] = heartbeat(slot.first, a->topology_id, slot.second)->pid;
  }
  auto spout_counter = [&](const std::string& name) -> std::optional<std::uint64_t> {
    for (const auto& [slot, executors] : slots) {
      auto beat = heartbeat(slot.first, a->topology_id, slot.second);
      if (beat && beat->components.count("sentences")) return beat->components["sentences"][name];
    }
    return std::nullopt;
  };

  const std::uint64_t seed = std::random_device{}();
  SCOPED_TRACE("garbage seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<std::string> nimbus_valid = {
      nimbus_call([](thrift::NimbusClient& c) { c.send_getClusterInfo(); }),
      nimbus_call([&](thrift::NimbusClient& c) { c.send_getTopologyInfo(a->topology_id); }),
      nimbus_call([&](thrift::NimbusClient& c) { c.send_getPlacement(a->topology_id); }),
  };
  // Read-only calls only: garbage() also sends each one whole, and a whole
  // kill or deactivate would be carried out (authentication is another matter).
  transport::FrameEncoder hello;
  hello.add_hello(a->topology_id, "127.0.0.1", 1);  // a worker not in the assignment
  transport::FrameEncoder tuples_without_hello;
  tuples_without_hello.add_backpressure({TaskId(1), TaskId(2)}, true);
  // Hellos that claim to come from the topology's own workers (then garbage
  // where tuples should follow): the real connections between them carry on.
  transport::FrameEncoder impostor;
  for (const auto& [slot, executors] : slots) impostor.add_hello(a->topology_id, "127.0.0.1", slot.second);
  std::vector<std::string> worker_valid = {
      std::string(reinterpret_cast<const char*>(impostor.data()), impostor.size()),
      std::string(reinterpret_cast<const char*>(hello.data()), hello.size()),
      std::string(reinterpret_cast<const char*>(tuples_without_hello.data()), tuples_without_hello.size()),
  };

  const std::uint64_t acked_before = spout_counter("acked").value_or(0);
  int sent = 0;
  for (const auto& bytes : garbage(rng, nimbus_valid)) {
    EXPECT_TRUE(sv::loopback_exchange(cluster_->nimbus_port(0), bytes, 5s)) << "nimbus stopped listening";
    ++sent;
  }
  for (const auto& [slot, executors] : slots) {
    for (const auto& bytes : garbage(rng, worker_valid)) {
      EXPECT_TRUE(sv::loopback_exchange(slot.second, bytes, 5s)) << "worker " << slot.second << " stopped listening";
      ++sent;
    }
  }
  std::cout << "sent " << sent << " malformed messages\n";

  // Nimbus answers and the topology is untouched; every worker is the same
  // process and keeps acking.
  auto listed = cli({"list", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("ACTIVE"), std::string::npos) << listed.output;
  EXPECT_TRUE(eventually([&] { return spout_counter("acked").value_or(0) > acked_before + 1000; }));
  for (const auto& [slot, executors] : slots) {
    // Each worker saw the garbage: refused or rejected it, counted it.
    std::optional<wp::WorkerHeartbeatFile> beat;
    EXPECT_TRUE(eventually([&] {
      beat = heartbeat(slot.first, a->topology_id, slot.second);
      return beat && beat->data_plane["frames_rejected"] + beat->data_plane["connections_refused"] > 0;
    })) << "worker " << slot.second << " counted no rejected frame or refused connection";
    ASSERT_TRUE(beat);
    EXPECT_EQ(beat->pid, pids[slot]) << "worker " << slot.second << " restarted";
    EXPECT_EQ(beat->data_plane["undeliverable"], 0u);
    std::cout << "worker " << slot.second << ": frames rejected " << beat->data_plane["frames_rejected"]
              << ", connections refused " << beat->data_plane["connections_refused"]
              << ", connection errors " << beat->data_plane["connection_errors"] << "\n";
  }

  // Exact counts: stop the spout, let every tree finish, then stop the
  // topology in order so that the report bolt prints every word's count.
  auto off = cli({"deactivate", "wc"});
  ASSERT_EQ(off.exit_code, 0) << off.output;
  std::uint64_t emitted = 0, acked = 0;
  ASSERT_TRUE(eventually([&] {
    auto beat_emitted = spout_counter("emitted");
    auto beat_acked = spout_counter("acked");
    if (!beat_emitted || !beat_acked) return false;
    emitted = *beat_emitted;
    acked = *beat_acked;
    return emitted > 0 && acked == emitted;
  })) << "acked " << acked << " of " << emitted << " sentences";
  EXPECT_EQ(spout_counter("failed").value_or(1), 0u);
  std::pair<std::string, int> report_slot;
  for (const auto& [slot, executors] : slots) {
    for (const auto& e : executors) {
      if (std::get<0>(e) == "report") report_slot = slot;
    }
  }
  ASSERT_FALSE(report_slot.first.empty());
  auto killed = cli({"kill", "wc", "--wait", "0", "--wait-gone"});
  ASSERT_EQ(killed.exit_code, 0) << killed.output;
  const auto log = worker_dir(report_slot.first, a->topology_id, report_slot.second) / "worker.log";
  std::string line;
  ASSERT_TRUE(eventually([&] {
    auto text = wp::read_whole_file(log);
    if (!text) return false;
    const auto at = text->rfind("word count report: ");
    if (at == std::string::npos) return false;
    line = text->substr(at, text->find('\n', at) - at);
    return true;
  })) << "no report line in " << log;
  std::map<std::string, std::int64_t> reported;
  static const std::regex kPair(R"(([a-z]+)=([0-9]+))");
  const auto top = line.substr(line.find("top: "));
  for (std::sregex_iterator it(top.begin(), top.end(), kPair), end; it != end; ++it) {
    reported[(*it)[1]] = std::stoll((*it)[2]);
  }
  EXPECT_EQ(reported, true_word_counts(static_cast<std::int64_t>(acked))) << line;
  std::cout << acked << " sentences acked, none failed; " << line << "\n";
}

TEST_F(ClusterTest, ClusterRecoversFromZooKeeperRestart) {
  start_cluster();
  submit_word_count();
  std::optional<thrift::Assignment> a = running_assignment();
  ASSERT_TRUE(a);
  ASSERT_TRUE(zk_->stop());
  // Nimbus runs but cannot read the cluster's state: it says so, and the
  // CLI does not ask whether it runs.
  std::string down;
  EXPECT_TRUE(eventually([&] {
    auto r = cli({"list"});
    down = r.output;
    return r.exit_code != 0 && r.output.find("cannot answer: ZooKeeper at ") != std::string::npos;
  })) << down;
  EXPECT_EQ(down.find("is rstorm-nimbus running"), std::string::npos) << down;
  ASSERT_TRUE(zk_->restart());
  // Supervisors are registered again, the assignment is there, workers run,
  // and nimbus answers.
  EXPECT_TRUE(eventually([&] {
    for (int i = 0; i < cluster_->num_supervisors(); ++i) {
      auto found = store_->exists(paths_.supervisor(cluster_->supervisor_id(i)));
      if (!found || !*found) return false;
    }
    auto now = assignment();
    return now && every_assigned_worker_runs(*now);
  }));
  auto list = cli({"list", "--json"});
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("\"wc\""), std::string::npos) << list.output;
}

}  // namespace
}  // namespace rstorm::testing
