// The supervisor library against the in-memory coordination store, with real
// rstorm-worker processes running the word count library: assignments in ->
// worker processes started, restarted, stopped; local state recovery.
#include "supervisor/supervisor.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/in_memory_coordination.hpp"
#include "common/key_value_store.hpp"
#include "supervisor/dev_cluster.hpp"
#include "supervisor_test_util.hpp"
#include "tests/common/poll.hpp"

namespace rstorm::testing {
namespace {

namespace sv = supervisor;
namespace wp = worker_process;
using namespace std::chrono_literals;

// The node's two slot ports: free loopback ports, since workers listen on
// their slot port and other suites run at the same time.
int pick_port(int other) {
  for (;;) {
    auto port = sv::free_loopback_port();
    if (port && *port != other) return *port;
  }
}
const int kPortA = pick_port(0);
const int kPortB = pick_port(kPortA);

constexpr char kTopology[] = "wc-1";
constexpr char kBlobKey[] = "wc-1-code";

class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rstorm-supervisor-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    service_ = InMemoryCoordinationService::create();
    nimbus_store_ = service_->connect();
    ASSERT_TRUE(paths_.ensure_directories(*nimbus_store_));
    code_ = read_bytes(word_count_library());
    ASSERT_FALSE(code_.empty()) << word_count_library();
    sha_ = Sha256::hex_of(code_);
    nimbus_.put_blob(kBlobKey, code_);
    Config topology_config;
    topology_config.set("topology.message.timeout.secs", std::int64_t{5});
    nimbus_.put_topology(kTopology, "wc", topology_config);
  }

  void TearDown() override {
    supervisor_.reset();
    std::filesystem::remove_all(dir_);
  }

  sv::SupervisorOptions options() const {
    sv::SupervisorOptions o;
    o.id = "node-a";
    o.rack = "r1";
    o.memory_mb = 2048;
    o.cpu = 200;
    o.ports = {kPortA, kPortB};
    o.local_dir = dir_ / "local";
    o.worker_timeout = 3s;
    o.worker_start_timeout = 60s;
    o.heartbeat_frequency = 1s;
    o.monitor_frequency = 1s;
    o.shutdown_wait = 5s;
    o.worker_heartbeat_ms = 200;
    o.worker_binary = sv::executable_dir() / "rstorm-worker";
    return o;
  }

  void start_supervisor() {
    supervisor_store_ = service_->connect();
    supervisor_ = std::make_unique<sv::Supervisor>(options(), *supervisor_store_, local_kv_,
                                                   nimbus_, Logger::to_stderr("supervisor"));
    ASSERT_TRUE(supervisor_->start());
  }

  // split and count spread over both ports of node-a; report on another node.
  std::vector<Placement> two_worker_placement() const {
    auto p = word_count_executors();
    for (auto& e : p) {
      e.node = "node-a";
      e.port = (e.task % 2 == 0) ? kPortA : kPortB;
    }
    p[2].node = "node-b";  // report
    p[2].port = kPortA;
    return p;
  }

  void write_assignment(const std::vector<Placement>& placement, std::int64_t version,
                        const std::string& sha = "") {
    const auto a = make_assignment(kTopology, placement, kBlobKey, sha.empty() ? sha_ : sha, version);
    const auto path = paths_.assignment(kTopology);
    if (nimbus_store_->exists(path).value()) {
      ASSERT_TRUE(nimbus_store_->set(path, encode_thrift(a)));
    } else {
      ASSERT_TRUE(nimbus_store_->create(path, encode_thrift(a)));
    }
  }

  void write_status(thrift::TopologyStatus::type status,
                    thrift::TopologyStatus::type resume = thrift::TopologyStatus::ACTIVE) {
    thrift::TopologyRecord record;
    record.id = kTopology;
    record.name = "wc";
    record.status = status;
    record.resume_status = resume;
    const auto path = paths_.topology(kTopology);
    if (nimbus_store_->exists(path).value()) {
      ASSERT_TRUE(nimbus_store_->set(path, encode_thrift(record)));
    } else {
      ASSERT_TRUE(nimbus_store_->create(path, encode_thrift(record)));
    }
  }

  std::filesystem::path worker_dir(int port) const {
    return dir_ / "local" / "workers" / (std::string(kTopology) + "-" + std::to_string(port));
  }

  std::optional<wp::WorkerHeartbeatFile> heartbeat(int port) const {
    auto text = wp::read_whole_file(worker_dir(port) / "heartbeat");
    if (!text) return std::nullopt;
    auto beat = wp::heartbeat_from_json(*text);
    if (!beat) return std::nullopt;
    return *beat;
  }

  static bool alive(pid_t pid) { return sv::process_alive(sv::ProcessId{pid, 0}); }

  std::map<int, pid_t> worker_pids() const {
    std::map<int, pid_t> out;
    for (const auto& w : supervisor_->workers()) out[w.port] = w.pid;
    return out;
  }

  // Both workers run and heartbeat with their current pid.
  bool both_workers_heartbeating() const {
    const auto pids = worker_pids();
    if (pids.size() != 2) return false;
    for (const auto& [port, pid] : pids) {
      auto beat = heartbeat(port);
      if (!beat || beat->pid != pid) return false;
    }
    return true;
  }

  std::filesystem::path dir_;
  ClusterPaths paths_;
  std::shared_ptr<InMemoryCoordinationService> service_;
  std::unique_ptr<InMemoryCoordinationStore> nimbus_store_;
  std::unique_ptr<InMemoryCoordinationStore> supervisor_store_;
  InMemoryKeyValueStore local_kv_;
  InProcessNimbusLink nimbus_;
  std::string code_;
  std::string sha_;
  std::unique_ptr<sv::Supervisor> supervisor_;
};

std::set<std::pair<std::string, int>> executor_set(const std::vector<wp::SpecExecutor>& list) {
  std::set<std::pair<std::string, int>> out;
  for (const auto& e : list) out.emplace(e.component, e.task_start);
  return out;
}

TEST_F(SupervisorTest, RegistersItsNodeWithCapacityRackAndSlots) {
  start_supervisor();
  auto node = nimbus_store_->get(paths_.supervisor("node-a"));
  ASSERT_TRUE(node) << node.status().to_string();
  auto info = decode_thrift<thrift::SupervisorInfo>(node->data, "SupervisorInfo");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->id, "node-a");
  EXPECT_EQ(info->host, "127.0.0.1");
  EXPECT_EQ(info->rack, "r1");
  EXPECT_EQ(info->memory_capacity_mb, 2048);
  EXPECT_EQ(info->cpu_capacity, 200);
  EXPECT_EQ(info->slots, (std::vector<int>{kPortA, kPortB}));
  EXPECT_NE(node->ephemeral_owner, 0);
}

// A slot port another process listens on (here a listener of the test's
// own) is left out of the registered slots, named with why, so that nimbus
// places no worker there; once it is free it is offered again.
TEST_F(SupervisorTest, SlotPortAnotherProcessListensOnIsOfferedOnlyOnceFree) {
  boost::asio::io_context io;
  auto squatter = std::make_unique<boost::asio::ip::tcp::acceptor>(
      io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                                         static_cast<unsigned short>(kPortB)));
  EXPECT_TRUE(sv::busy_port("127.0.0.1", kPortB).has_value());
  EXPECT_FALSE(sv::busy_port("127.0.0.1", kPortA).has_value());
  start_supervisor();
  auto registered = [&] {
    auto node = nimbus_store_->get(paths_.supervisor("node-a"));
    EXPECT_TRUE(node) << node.status().to_string();
    auto info = decode_thrift<thrift::SupervisorInfo>(node ? node->data : "", "SupervisorInfo");
    return info ? *info : thrift::SupervisorInfo();
  };
  thrift::SupervisorInfo info = registered();
  EXPECT_EQ(info.slots, (std::vector<int>{kPortA}));
  ASSERT_EQ(info.busy_slots.count(kPortB), 1u);
  EXPECT_NE(info.busy_slots.at(kPortB).find("in use"), std::string::npos)
      << info.busy_slots.at(kPortB);
  squatter.reset();
  ASSERT_TRUE(eventually([&] {
    info = registered();
    return info.slots == std::vector<int>{kPortA, kPortB} && info.busy_slots.empty();
  })) << info.slots.size();
}

TEST_F(SupervisorTest, AssignedSlotsRunOneWorkerProcessEachWithTheirExecutors) {
  start_supervisor();
  write_status(thrift::TopologyStatus::ACTIVE);
  write_assignment(two_worker_placement(), 1);
  ASSERT_TRUE(eventually([&] { return both_workers_heartbeating(); }));
  for (const auto& [port, pid] : worker_pids()) {
    EXPECT_NE(sv::process_command_line(pid).find("rstorm-worker"), std::string::npos);
    auto beat = heartbeat(port);
    ASSERT_TRUE(beat);
    // Even tasks on port A (count 2, sentences 4, split 6), odd ones on port B
    // (count 1, split 5); one acker per worker (three workers in all).
    std::set<std::pair<std::string, int>> expected =
        port == kPortA ? std::set<std::pair<std::string, int>>{{"count", 2}, {"sentences", 4}, {"split", 6}}
                     : std::set<std::pair<std::string, int>>{{"count", 1}, {"split", 5}};
    auto actual = executor_set(beat->executors);
    int ackers = 0;
    for (auto it = actual.begin(); it != actual.end();) {
      if (it->first == "__acker") {
        ++ackers;
        it = actual.erase(it);
      } else {
        ++it;
      }
    }
    EXPECT_EQ(actual, expected) << "port " << port;
    EXPECT_EQ(ackers, 1) << "port " << port;
    EXPECT_TRUE(std::filesystem::exists(worker_dir(port) / "worker.log"));
  }
  // Nimbus hears about both workers.
  ASSERT_TRUE(eventually([&] {
    for (const auto& h : nimbus_.heartbeats()) {
      if (h.info.id == "node-a" && h.workers.size() == 2) return true;
    }
    return false;
  }));
  EXPECT_EQ(nimbus_.downloads(), 1);  // code fetched once for both workers
}

// In secure mode each worker finds its topology's worker token in its
// directory, readable by its user only; a token with less than half its life
// left is replaced by a fresh one from nimbus.
TEST_F(SupervisorTest, WorkersGetTheirTokenAndTheSupervisorRenewsItAtHalfLife) {
  const std::int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  const auto token = [](std::int64_t issued, std::int64_t expires, const std::string& tag) {
    thrift::WorkerTokenInfo info;
    info.topology_id = kTopology;
    info.user = "alice";
    info.issued_ms = issued;
    info.expiration_ms = expires;
    info.key_version = 1;
    thrift::WorkerToken t;
    t.info = encode_thrift(info);
    t.signature = tag;  // the supervisor never checks it: nimbus does
    return t;
  };
  const std::int64_t hour = 3600 * 1000;
  const auto old = token(now - 2 * hour, now + hour, "old");  // two thirds spent
  const auto fresh = token(now, now + 3 * hour, "fresh");
  nimbus_.set_worker_tokens(kTopology, {old, fresh});
  start_supervisor();
  write_status(thrift::TopologyStatus::ACTIVE);
  write_assignment(two_worker_placement(), 1);
  ASSERT_TRUE(eventually([&] { return both_workers_heartbeating(); }));
  for (int port : {kPortA, kPortB}) {
    const auto file = worker_dir(port) / wp::kWorkerTokenFile;
    std::string seen;
    EXPECT_TRUE(eventually([&] {
      auto text = wp::read_whole_file(file);
      seen = text ? *text : text.status().to_string();
      return text && *text == encode_thrift(fresh);
    })) << file
        << " holds " << seen;
    const auto perms = std::filesystem::status(file).permissions();
    EXPECT_EQ(perms & (std::filesystem::perms::group_all | std::filesystem::perms::others_all),
              std::filesystem::perms::none);
  }
}

TEST_F(SupervisorTest, KilledWorkerIsRestarted) {
  start_supervisor();
  write_assignment(two_worker_placement(), 1);
  ASSERT_TRUE(eventually([&] { return both_workers_heartbeating(); }));
  const auto before = worker_pids();
  ASSERT_EQ(::kill(before.at(kPortB), SIGKILL), 0);
  ASSERT_TRUE(eventually([&] {
    auto now = worker_pids();
    return now.count(kPortB) && now.at(kPortB) != before.at(kPortB) && both_workers_heartbeating();
  }));
  EXPECT_EQ(worker_pids().at(kPortA), before.at(kPortA));  // the other one is untouched
  for (const auto& w : supervisor_->workers()) EXPECT_EQ(w.launches, w.port == kPortB ? 2 : 1);
}

TEST_F(SupervisorTest, HungWorkerWithStaleHeartbeatIsRestarted) {
  start_supervisor();
  write_assignment(two_worker_placement(), 1);
  ASSERT_TRUE(eventually([&] { return both_workers_heartbeating(); }));
  const auto before = worker_pids();
  ASSERT_EQ(::kill(before.at(kPortA), SIGSTOP), 0);  // alive, but no more heartbeats
  ASSERT_TRUE(eventually([&] {
    auto now = worker_pids();
    return now.count(kPortA) && now.at(kPortA) != before.at(kPortA) && both_workers_heartbeating();
  }));
  EXPECT_TRUE(eventually([&] { return !alive(before.at(kPortA)); }));
  // Reported to nimbus (describe shows it) as a crash would be.
  std::string reason;
  EXPECT_TRUE(eventually([&] {
    for (const auto& beat : nimbus_.heartbeats()) {
      for (const auto& f : beat.failures) {
        if (f.slot.port == kPortA) reason = f.reason + " / " + f.exit_status;
      }
    }
    return reason.find("the worker stopped heartbeating") != std::string::npos;
  })) << reason;
  EXPECT_NE(reason.find("/ hung"), std::string::npos) << reason;
}

TEST_F(SupervisorTest, WorkersNoLongerAssignedAreStopped) {
  start_supervisor();
  write_assignment(two_worker_placement(), 1);
  ASSERT_TRUE(eventually([&] { return both_workers_heartbeating(); }));
  const auto pids = worker_pids();
  ASSERT_TRUE(nimbus_store_->remove(paths_.assignment(kTopology)));
  ASSERT_TRUE(eventually([&] { return supervisor_->workers().empty(); }));
  for (const auto& [port, pid] : pids) EXPECT_FALSE(alive(pid)) << "port " << port;
  sv::LocalState state(local_kv_);
  EXPECT_TRUE(state.workers()->empty());
  // The cached code goes with the last topology that used it.
  EXPECT_TRUE(std::filesystem::is_empty(dir_ / "local" / "code"));
}

TEST_F(SupervisorTest, StopLeavesNoWorkerRunningAndUnregisters) {
  start_supervisor();
  write_assignment(two_worker_placement(), 1);
  ASSERT_TRUE(eventually([&] { return both_workers_heartbeating(); }));
  const auto pids = worker_pids();
  supervisor_->stop();
  for (const auto& [port, pid] : pids) EXPECT_FALSE(alive(pid)) << "port " << port;
  EXPECT_FALSE(nimbus_store_->exists(paths_.supervisor("node-a")).value());
}

TEST_F(SupervisorTest, RestartedSupervisorAdoptsItsRunningWorkers) {
  start_supervisor();
  write_assignment(two_worker_placement(), 1);
  ASSERT_TRUE(eventually([&] { return both_workers_heartbeating(); }));
  const auto pids = worker_pids();
  supervisor_->stop(sv::Supervisor::StopMode::kLeaveWorkersRunning);  // as a crash
  supervisor_.reset();
  supervisor_store_.reset();
  for (const auto& [port, pid] : pids) ASSERT_TRUE(alive(pid));
  start_supervisor();
  const auto first_rounds = supervisor_->rounds();
  ASSERT_TRUE(eventually([&] { return supervisor_->rounds() >= first_rounds + 3; }));
  EXPECT_EQ(worker_pids(), pids);
  for (const auto& w : supervisor_->workers()) {
    EXPECT_TRUE(w.adopted);
    EXPECT_EQ(w.launches, 1);
  }
  supervisor_->stop();
  for (const auto& [port, pid] : pids) EXPECT_FALSE(alive(pid)) << "port " << port;
}

TEST_F(SupervisorTest, RestartedSupervisorKillsWorkersNoLongerAssigned) {
  start_supervisor();
  write_assignment(two_worker_placement(), 1);
  ASSERT_TRUE(eventually([&] { return both_workers_heartbeating(); }));
  const auto pids = worker_pids();
  supervisor_->stop(sv::Supervisor::StopMode::kLeaveWorkersRunning);
  supervisor_.reset();
  supervisor_store_.reset();
  ASSERT_TRUE(nimbus_store_->remove(paths_.assignment(kTopology)));
  start_supervisor();
  ASSERT_TRUE(eventually([&] {
    for (const auto& [port, pid] : pids) {
      if (alive(pid)) return false;
    }
    return supervisor_->workers().empty();
  }));
}

TEST_F(SupervisorTest, CodeWithWrongHashIsNeverRun) {
  start_supervisor();
  const std::string wrong(64, 'a');
  write_assignment(two_worker_placement(), 1, wrong);
  const auto rounds = supervisor_->rounds();
  ASSERT_TRUE(eventually([&] { return supervisor_->rounds() >= rounds + 3; }));
  EXPECT_TRUE(supervisor_->workers().empty());
  EXPECT_GE(nimbus_.downloads(), 1);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "local" / "code" / (wrong + ".so")));
  // The right hash: the workers start.
  write_assignment(two_worker_placement(), 2);
  EXPECT_TRUE(eventually([&] { return both_workers_heartbeating(); }));
}

TEST_F(SupervisorTest, TopologyStatusReachesTheSpoutsOfItsWorkers) {
  start_supervisor();
  write_status(thrift::TopologyStatus::INACTIVE);
  write_assignment(two_worker_placement(), 1);
  ASSERT_TRUE(eventually([&] { return both_workers_heartbeating(); }));
  EXPECT_TRUE(eventually([&] {
    auto beat = heartbeat(kPortA);
    return beat && !beat->active && beat->components.count("sentences") &&
           beat->components.at("sentences").at("emitted") == 0;
  }));
  write_status(thrift::TopologyStatus::ACTIVE);
  EXPECT_TRUE(eventually([&] {
    auto beat = heartbeat(kPortA);
    return beat && beat->active && beat->components.at("sentences").at("emitted") > 0;
  }));
  // Unschedulable (its workers run on): deactivated as the user left it.
  write_status(thrift::TopologyStatus::UNSCHEDULABLE, thrift::TopologyStatus::INACTIVE);
  EXPECT_TRUE(eventually([&] {
    auto beat = heartbeat(kPortA);
    return beat && !beat->active;
  }));
  write_status(thrift::TopologyStatus::UNSCHEDULABLE, thrift::TopologyStatus::ACTIVE);
  EXPECT_TRUE(eventually([&] {
    auto beat = heartbeat(kPortA);
    return beat && beat->active;
  }));
}

TEST_F(SupervisorTest, ExpiredSessionRegistersAgain) {
  start_supervisor();
  const auto old_session = supervisor_store_->session_id();
  ASSERT_TRUE(service_->expire_session(old_session));
  ASSERT_TRUE(eventually([&] {
    auto node = nimbus_store_->get(paths_.supervisor("node-a"));
    return node && node->ephemeral_owner == supervisor_store_->session_id() &&
           node->ephemeral_owner != old_session;
  }));
}

TEST_F(SupervisorTest, ReassignmentRestartsOnlyTheWorkerWhoseExecutorsChanged) {
  start_supervisor();
  write_assignment(two_worker_placement(), 1);
  ASSERT_TRUE(eventually([&] { return both_workers_heartbeating(); }));
  const auto before = worker_pids();
  // "report" moves from node-b to node-a:port B, and count[1] the other way:
  // port B's executors change, port A's do not, and the topology keeps its
  // three workers (a change in their number changes every worker's ackers,
  // and each worker restarts for it).
  auto placement = two_worker_placement();
  placement[2].node = "node-a";
  placement[2].port = kPortB;
  for (auto& e : placement) {
    if (e.task == 1) {
      e.node = "node-b";
      e.port = kPortA;
    }
  }
  write_assignment(placement, 2);
  ASSERT_TRUE(eventually([&] {
    auto now = worker_pids();
    if (!now.count(kPortB) || now.at(kPortB) == before.at(kPortB)) return false;
    auto beat = heartbeat(kPortB);
    return beat && beat->pid == now.at(kPortB) && executor_set(beat->executors).count({"report", 3});
  }));
  // Port A's worker takes the new version without a restart: it re-routes.
  auto rerouted = [&] {
    for (const auto& f : std::filesystem::recursive_directory_iterator(dir_)) {
      if (f.path().filename() != "worker.log") continue;
      std::ifstream in(f.path());
      std::stringstream text;
      text << in.rdbuf();
      if (text.str().find("assignment version 1 -> 2 of topology") != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  ASSERT_TRUE(eventually(rerouted));
  EXPECT_EQ(worker_pids().at(kPortA), before.at(kPortA));
  for (const auto& w : supervisor_->workers()) EXPECT_EQ(w.assignment_version, 2);
}

// Ports picked for dev clusters are claimed: never picked twice while the
// claimer lives, taken over once it is gone.
TEST(PortClaims, APickedPortIsNotPickedAgainWhileItsClaimerLives) {
  // 1000 picks among the ~22,000 ports below the ephemeral range: without
  // claims two of them would almost surely be the same.
  std::set<int> picked;
  for (int i = 0; i < 1000; ++i) {
    auto port = sv::free_loopback_port();
    ASSERT_TRUE(port) << port.status().to_string();
    EXPECT_TRUE(picked.insert(*port).second) << "port " << *port << " picked twice";
  }
  const auto dir = std::filesystem::temp_directory_path() / "rstorm-port-claims";
  const int port = *picked.begin();
  std::ifstream in(dir / std::to_string(port));
  long holder = 0;
  ASSERT_TRUE(in >> holder);
  EXPECT_EQ(holder, ::getpid());
  EXPECT_FALSE(sv::claim_loopback_port(port)) << "claimed again by its own claimer";
}

TEST(PortClaims, AClaimOfAProcessThatIsGoneIsTakenOverAndOneOfALiveProcessIsNot) {
  // A pid that no process has: a child that already exited and was reaped.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  const auto dir = std::filesystem::temp_directory_path() / "rstorm-port-claims";
  std::filesystem::create_directories(dir);
  // Ports above the ephemeral range's usual start: never picked at random.
  for (const auto& [port, holder] : {std::pair{65001, static_cast<long>(child)},
                                     std::pair{65002, static_cast<long>(::getppid())}}) {
    std::filesystem::remove(dir / std::to_string(port));
    std::ofstream(dir / std::to_string(port)) << holder;
  }
  EXPECT_TRUE(sv::claim_loopback_port(65001));
  std::ifstream in(dir / "65001");
  long holder = 0;
  ASSERT_TRUE(in >> holder);
  EXPECT_EQ(holder, ::getpid());
  EXPECT_FALSE(sv::claim_loopback_port(65002)) << "the claim of our parent, which lives, was taken";
  std::filesystem::remove(dir / "65001");
  std::filesystem::remove(dir / "65002");
}

// A worker holds none of its supervisor's descriptors: a socket the
// supervisor listens on (its log viewer, say) is not inherited, so a
// supervisor restarted while its workers run can bind its ports again.
TEST(LaunchProcess, TheChildInheritsOnlyItsStandardStreams) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);  // no SOCK_CLOEXEC
  ASSERT_GE(listener, 0);
  constexpr int kHeld = 100;
  ASSERT_EQ(::dup2(listener, kHeld), kHeld);  // dup2 clears FD_CLOEXEC too
  const auto log = std::filesystem::temp_directory_path() /
                   ("rstorm-launch-fds-" + std::to_string(::getpid()) + ".log");
  std::filesystem::remove(log);
  auto child = sv::launch_process("/bin/ls", {"/proc/self/fd"}, log);
  ASSERT_TRUE(child.is_ok()) << child.status().to_string();
  std::optional<std::string> how;
  ASSERT_TRUE(eventually([&] { return (how = sv::reap_child(child->pid)).has_value(); }));
  ASSERT_EQ(*how, "exit code 0");
  std::ifstream in(log);
  std::set<std::string> fds;
  for (std::string line; std::getline(in, line);) fds.insert(line);
  ::close(kHeld);
  ::close(listener);
  std::filesystem::remove(log);
  // 0, 1 and 2, and the descriptor ls reads /proc/self/fd with.
  EXPECT_TRUE(fds.contains("0") && fds.contains("1") && fds.contains("2")) << fds.size();
  EXPECT_FALSE(fds.contains(std::to_string(kHeld)));
  EXPECT_LE(fds.size(), 4u);
}

}  // namespace
}  // namespace rstorm::testing
