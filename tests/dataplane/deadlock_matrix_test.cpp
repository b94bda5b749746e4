// The deadlock matrix: the topology shapes users write (a cycle, a diamond, a
// slow fan-in, a 100x fan-out, the project's word count), each run on a real
// dev cluster (ZooKeeper, rstorm-nimbus, rstorm-supervisor, rstorm-worker
// processes talking over TCP on loopback), submitted with the `rstorm` CLI.
//
// Progress cases: once the topology runs, the workers' /metrics are read once
// a second for RSTORM_MATRIX_SECS seconds (default 8); the case fails as soon
// as its progress counter (spout acks with acking on; executions of the sink
// components with acking off) has not grown for 5 consecutive samples. The
// failure message holds every worker's queue depths, backpressure and
// transport metrics and its heartbeat's data plane counters.
// Finite cases: a fixed number of messages, then exact counts (every message
// acked exactly once at its spout, each bolt executed exactly as many tuples
// as the shape implies).
//
// CI (default): every shape with the defaults users get (acking on,
// topology.max.spout.pending unset) on one supervisor running several workers,
// the cycle and the word count with acking off, and the finite cycle, diamond
// and word count. RSTORM_MATRIX_FULL=1: every shape x acking on/off x
// max.spout.pending unset/1000 x several workers on one node / one worker per
// node, and every shape finite x acking on/off x both layouts.
//
// Each case prints one line "MATRIX case=... secs=... acked=... min_growth=...
// result=..." (bench/deadlock_matrix/run.sh makes a table of them).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "common/cluster_paths.hpp"
#include "common/logger.hpp"
#include "common/metrics/http_get.hpp"
#include "common/thrift/codec.hpp"
#include "common/zookeeper_store.hpp"
#include "supervisor/dev_cluster.hpp"
#include "supervisor/process_control.hpp"
#include "tests/cluster/cli_runner.hpp"
#include "tests/common/zookeeper_server.hpp"
#include "worker/process/worker_spec.hpp"

namespace rstorm::testing {
namespace {

namespace sv = supervisor;
namespace wp = worker_process;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Slot = std::pair<std::string, int>;  // (supervisor id, port)

// ---------------------------------------------------------------- the cases

// kShared: one supervisor, the topology's workers all on it.
// kSpread: one slot per supervisor, so every worker is on its own node.
enum class Layout { kShared, kSpread };

struct Case {
  std::string shape;  // cycle, diamond, fanin-slow, fanout100, wordcount
  bool acking = true;
  int pending = 0;  // topology.max.spout.pending; 0: unset
  Layout layout = Layout::kShared;
  std::int64_t messages = 0;  // per spout; 0: endless input (a progress case)

  std::string name() const {
    std::string n = shape + (acking ? "/ack" : "/noack") +
                    (pending ? "/pending" + std::to_string(pending) : "/unbounded") +
                    (layout == Layout::kShared ? "/shared-node" : "/node-per-worker");
    if (messages) n += "/finite" + std::to_string(messages);
    return n;
  }
};

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::atoi(v);
}
bool full_matrix() { return env_int("RSTORM_MATRIX_FULL", 0) != 0; }
int matrix_secs() { return std::max(env_int("RSTORM_MATRIX_SECS", 8), 6); }

const std::vector<std::string> kShapes = {"cycle", "diamond", "fanin-slow", "fanout100",
                                          "wordcount"};

std::vector<Case> progress_cases() {
  std::vector<Case> out;
  if (!full_matrix()) {
    for (const auto& s : kShapes) out.push_back({s, true, 0, Layout::kShared, 0});
    out.push_back({"cycle", false, 0, Layout::kShared, 0});
    out.push_back({"wordcount", false, 0, Layout::kShared, 0});
    return out;
  }
  for (Layout layout : {Layout::kShared, Layout::kSpread}) {
    for (const auto& s : kShapes) {
      for (bool acking : {true, false}) {
        for (int pending : {0, 1000}) out.push_back({s, acking, pending, layout, 0});
      }
    }
  }
  return out;
}

// Messages per spout of a finite case: enough to fill every queue, few enough
// for the 1 ms bolt and the 100x fan-out to finish in seconds.
std::int64_t finite_messages(const std::string& shape) {
  if (shape == "fanin-slow") return 1000;
  if (shape == "fanout100") return 1000;
  return 20000;
}

std::vector<Case> finite_cases() {
  std::vector<Case> out;
  if (!full_matrix()) {
    for (const std::string s : {"cycle", "diamond", "wordcount"}) {
      out.push_back({s, true, 0, Layout::kShared, finite_messages(s)});
    }
    return out;
  }
  // The progress cases end on the one-worker-per-node cluster: start there.
  for (Layout layout : {Layout::kSpread, Layout::kShared}) {
    for (const auto& s : kShapes) {
      for (bool acking : {true, false}) out.push_back({s, acking, 0, layout, finite_messages(s)});
    }
  }
  return out;
}

std::vector<std::string> spouts_of(const std::string& shape) {
  if (shape == "wordcount") return {"sentences"};
  if (shape == "fanin-slow") return {"spout1", "spout2", "spout3"};
  return {"spout"};
}

// With acking off, spout acks prove nothing: these components' executions
// must each keep growing.
std::vector<std::string> sinks_of(const std::string& shape) {
  if (shape == "cycle") return {"A", "B"};
  if (shape == "diamond") return {"join"};
  if (shape == "fanin-slow") return {"slow"};
  if (shape == "fanout100") return {"sink"};
  return {"report"};
}

const char* const kSentences[] = {
    "the cow jumped over the moon",   "an apple a day keeps the doctor away",
    "four score and seven years ago", "snow white and the seven dwarfs",
    "i am at two with nature",
};

// Executions each bolt must have seen after `n` messages per spout.
std::map<std::string, std::int64_t> expected_executions(const std::string& shape, std::int64_t n) {
  if (shape == "cycle") return {{"A", 2 * n}, {"B", n}};
  if (shape == "diamond") return {{"left", n}, {"right", n}, {"join", 2 * n}};
  if (shape == "fanin-slow") return {{"slow", 3 * n}};
  if (shape == "fanout100") return {{"fan", n}, {"sink", 100 * n}};
  std::int64_t words = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    std::istringstream in(kSentences[i % 5]);
    std::string w;
    while (in >> w) ++words;
  }
  return {{"split", n}, {"count", words}, {"report", words}};
}

// ------------------------------------------------------------ metrics text

// Sum of `family{...component="<component>"...} value` over the text's lines.
double sum_of(const std::string& text, const std::string& family, const std::string& component) {
  const std::string prefix = family + "{";
  const std::string label = "component=\"" + component + "\"";
  double sum = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    const auto close = line.rfind('}');
    if (close == std::string::npos || line.find(label) > close) continue;
    try {
      sum += std::stod(line.substr(close + 1));
    } catch (const std::exception&) {
    }
  }
  return sum;
}

// The lines that tell why a worker is not moving: queues, backpressure, the
// transport, stalls, tuple counters. No histograms, no process metrics.
std::string diagnostic_lines(const std::string& text) {
  static const std::vector<std::string> kFamilies = {
      "rstorm_receive_queue_depth_batches", "rstorm_receive_queue_capacity_batches",
      "rstorm_backpressure_",               "rstorm_spout_pending_tuples",
      "rstorm_topology_stalled",            "rstorm_transport_",
      "rstorm_tuples_",                     "rstorm_task_errors_total"};
  std::string out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    for (const auto& f : kFamilies) {
      if (line.rfind(f, 0) == 0) {
        out += "    " + line + "\n";
        break;
      }
    }
  }
  return out;
}

// ------------------------------------------------------------ the fixture

class DeadlockMatrix : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { stop_cluster(); }

  void SetUp() override {
    out_dir_ = std::filesystem::temp_directory_path() /
               ("rstorm-matrix-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(out_dir_);
    std::filesystem::create_directories(out_dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!HasFailure()) std::filesystem::remove_all(out_dir_, ec);
  }

  static void stop_cluster() {
    store_.reset();
    if (cluster_) cluster_->stop();
    cluster_.reset();
    zk_.reset();
  }

  // The cluster of `layout`, started (and the other one stopped) when needed.
  static ::testing::AssertionResult use_layout(Layout layout) {
    if (cluster_ && layout_ == layout) return ::testing::AssertionSuccess();
    stop_cluster();
    auto zk = ZooKeeperServer::start();
    if (!zk) return ::testing::AssertionFailure() << zk.status().to_string();
    zk_ = std::move(zk).value();
    sv::DevClusterOptions o;
    o.supervisors = layout == Layout::kShared ? 1 : 3;
    o.racks = layout == Layout::kShared ? 1 : 2;
    o.slots = layout == Layout::kShared ? 4 : 1;
    o.nimbuses = 1;
    o.zookeeper_connect = zk_->connect_string();
    o.overrides = kFastConfig;
    auto cluster = sv::DevCluster::start(o, Logger::to_stderr("deadlock-matrix"));
    if (!cluster) return ::testing::AssertionFailure() << cluster.status().to_string();
    cluster_ = std::move(cluster).value();
    ZooKeeperOptions zo;
    zo.servers = zk_->connect_string();
    zo.session_timeout = 6s;
    zo.retry_interval = 200ms;
    zo.retry_interval_ceiling = 1000ms;
    auto store = ZooKeeperStore::connect(zo, Logger::null());
    if (!store) return ::testing::AssertionFailure() << store.status().to_string();
    store_ = std::move(store).value();
    layout_ = layout;
    return ::testing::AssertionSuccess();
  }

  // Calls `condition` every `interval` until it holds or `timeout` passes.
  template <typename F>
  static bool poll_until(F&& condition, std::chrono::milliseconds timeout,
                         std::chrono::milliseconds interval = 200ms) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      if (condition()) return true;
      if (Clock::now() > deadline) return false;
      std::this_thread::sleep_for(interval);
    }
  }

  // ---- submitting and stopping

  // Submits the case's topology under `name`; on success `topology_id_`,
  // `assignment_` and `slots_` describe it and every worker heartbeats.
  ::testing::AssertionResult submit(const Case& c, const std::string& name) {
    std::vector<std::string> config;
    std::string library;
    if (c.shape == "wordcount") {
      // The word count with its default config: the resource-aware scheduler
      // places it (two workers here), one acker per worker.
      library = RSTORM_WORD_COUNT_LIB;
      if (c.messages) config.push_back("wordcount.sentences.limit=" + std::to_string(c.messages));
      // Without ackers its six executors (6 x 128 MB) fit one 768 MB worker
      // and nothing would cross workers: a smaller worker heap makes the
      // scheduler use two, as the ackers do with the defaults.
      if (!c.acking) config.push_back("topology.worker.max.heap.size.mb=640");
    } else {
      library = RSTORM_SHAPES_LIB;
      const int workers = c.shape == "fanin-slow" ? 3 : 2;
      config = {"shapes.shape=" + c.shape, "topology.scheduler.strategy=round-robin",
                "topology.workers=" + std::to_string(workers)};
      if (c.messages) {
        config.push_back("shapes.messages=" + std::to_string(c.messages));
        config.push_back("shapes.out.dir=" + out_dir_.string());
        config.push_back("shapes.go.file=" + (out_dir_ / "go").string());
      }
    }
    if (!c.acking) config.push_back("topology.acker.executors=0");
    if (c.pending) config.push_back("topology.max.spout.pending=" + std::to_string(c.pending));
    std::vector<std::string> args = {"submit", library, "--name", name, "--wait"};
    for (const auto& kv : config) {
      args.push_back("-c");
      args.push_back(kv);
    }
    for (const auto& a : cluster_->client_overrides(0)) args.push_back(a);
    auto r = run_cli(args);
    if (r.exit_code != 0) {
      return ::testing::AssertionFailure() << "rstorm submit exited " << r.exit_code << ":\n" << r.output;
    }
    std::smatch m;
    if (!std::regex_search(r.output, m, std::regex("submitted topology '[^']*' as (\\S+)"))) {
      return ::testing::AssertionFailure() << "no topology id in:\n" << r.output;
    }
    topology_id_ = m[1];
    const bool up = poll_until([&] {
      assignment_ = assignment();
      return assignment_ && every_worker_heartbeats();
    }, 90s);
    if (!up) return ::testing::AssertionFailure() << "the workers of '" << name << "' did not all start";
    slots_.clear();
    for (const auto& e : assignment_->executors) slots_[{e.slot.node_id, e.slot.port}].insert(e.executor.component);
    return ::testing::AssertionSuccess();
  }

  // The placement spans several workers, laid out as the case asks; in the
  // cycle both workers run an A and a B, so "fwd" and "back" both cross.
  ::testing::AssertionResult placement_fits(const Case& c) const {
    std::set<std::string> nodes;
    for (const auto& [slot, components] : slots_) nodes.insert(slot.first);
    std::ostringstream where;
    for (const auto& [slot, components] : slots_) {
      where << " " << slot.first << ":" << slot.second << "{";
      for (const auto& comp : components) where << comp << " ";
      where << "}";
    }
    if (slots_.size() < 2) return ::testing::AssertionFailure() << "one worker only:" << where.str();
    if (c.layout == Layout::kShared && nodes.size() != 1) {
      return ::testing::AssertionFailure() << "workers on several nodes:" << where.str();
    }
    if (c.layout == Layout::kSpread && nodes.size() != slots_.size()) {
      return ::testing::AssertionFailure() << "two workers on one node:" << where.str();
    }
    if (c.shape == "cycle") {
      for (const auto& [slot, components] : slots_) {
        if (!components.count("A") || !components.count("B")) {
          return ::testing::AssertionFailure() << "a worker lacks A or B:" << where.str();
        }
      }
    }
    return ::testing::AssertionSuccess();
  }

  // Kills the topology and waits until its workers have exited, so the next
  // case finds its slots free.
  void kill(const std::string& name) {
    std::vector<int64_t> pids;
    for (const auto& [slot, components] : slots_) {
      if (auto beat = heartbeat(slot)) pids.push_back(beat->pid);
    }
    std::vector<std::string> args = {"kill", name, "--wait", "0"};
    for (const auto& a : cluster_->client_overrides(0)) args.push_back(a);
    auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(poll_until([&] {
      for (auto pid : pids) {
        if (sv::process_alive(sv::ProcessId{static_cast<pid_t>(pid), 0})) return false;
      }
      return true;
    }, 60s)) << "the workers of '" << name << "' did not exit";
    assignment_.reset();
    slots_.clear();
  }

  std::optional<thrift::Assignment> assignment() const {
    auto node = store_->get(paths_.assignment(topology_id_));
    if (!node) return std::nullopt;
    auto a = decode_thrift<thrift::Assignment>(node->data, "Assignment");
    if (!a) return std::nullopt;
    return *a;
  }

  int supervisor_index(const std::string& id) const {
    for (int i = 0; i < cluster_->num_supervisors(); ++i) {
      if (cluster_->supervisor_id(i) == id) return i;
    }
    return -1;
  }

  std::filesystem::path worker_dir(const Slot& slot) const {
    return cluster_->supervisor_dir(supervisor_index(slot.first)) / "workers" /
           (topology_id_ + "-" + std::to_string(slot.second));
  }

  std::optional<wp::WorkerHeartbeatFile> heartbeat(const Slot& slot) const {
    auto text = wp::read_whole_file(worker_dir(slot) / "heartbeat");
    if (!text) return std::nullopt;
    auto beat = wp::heartbeat_from_json(*text);
    if (!beat) return std::nullopt;
    return *beat;
  }

  bool every_worker_heartbeats() const {
    for (const auto& e : assignment_->executors) {
      auto beat = heartbeat({e.slot.node_id, e.slot.port});
      if (!beat || !sv::process_alive(sv::ProcessId{static_cast<pid_t>(beat->pid), 0})) return false;
    }
    return true;
  }

  // ---- reading the workers' /metrics

  std::optional<std::string> scrape(const Slot& slot) const {
    auto r = metrics::http_get("127.0.0.1", slot.second + 1000, "/metrics", 5s);
    if (!r.ok() || r->status != 200) return std::nullopt;
    return r->body;
  }

  // Last text scraped from each worker (kept when a scrape fails).
  struct Scrape {
    std::map<Slot, std::string> text;
    int failures = 0;
  };
  void scrape_all(Scrape& s) const {
    for (const auto& [slot, components] : slots_) {
      if (auto text = scrape(slot)) {
        s.text[slot] = std::move(*text);
      } else {
        ++s.failures;
      }
    }
  }
  static double total(const Scrape& s, const std::string& family, const std::string& component) {
    double sum = 0;
    for (const auto& [slot, text] : s.text) sum += sum_of(text, family, component);
    return sum;
  }

  // The progress series of a case: the spouts' acks together (acking on), or
  // each sink's executions (acking off).
  static std::vector<std::string> series_names(const Case& c) {
    if (c.acking) return {"acked"};
    return sinks_of(c.shape);
  }
  static std::vector<double> series(const Case& c, const Scrape& s) {
    std::vector<double> out;
    if (c.acking) {
      double acked = 0;
      for (const auto& spout : spouts_of(c.shape)) acked += total(s, "rstorm_tuples_acked_total", spout);
      out.push_back(acked);
    } else {
      for (const auto& sink : sinks_of(c.shape)) out.push_back(total(s, "rstorm_tuples_executed_total", sink));
    }
    return out;
  }

  // Every worker's queue, backpressure and transport metrics and data plane
  // counters, for a failure message.
  std::string diagnostics() const {
    std::ostringstream out;
    for (const auto& [slot, components] : slots_) {
      out << "  worker " << slot.first << ":" << slot.second << " (";
      for (const auto& comp : components) out << comp << " ";
      out << ")\n";
      if (auto text = scrape(slot)) {
        out << diagnostic_lines(*text);
      } else {
        out << "    /metrics unreachable on port " << slot.second + 1000 << "\n";
      }
      if (auto beat = heartbeat(slot)) {
        out << "    heartbeat data_plane:";
        for (const auto& [k, v] : beat->data_plane) out << " " << k << "=" << v;
        out << "\n    heartbeat stalled_ms=" << beat->stalled_ms << " stall_pending=" << beat->stall_pending
            << " full_queues=";
        for (const auto& q : beat->full_queues) out << q << ",";
        out << "\n";
        for (const auto& e : beat->errors) out << "    error: " << e.component << ": " << e.message << "\n";
      }
    }
    return out.str();
  }

  void report(const Case& c, double secs, double acked, double min_growth, const std::string& result) {
    std::cout << "MATRIX case=" << c.name() << " secs=" << static_cast<int>(secs + 0.5)
              << " acked=" << static_cast<std::int64_t>(acked)
              << " min_growth=" << static_cast<std::int64_t>(min_growth) << " result=" << result
              << std::endl;
  }

  // ---- the two kinds of case

  void run_progress_case(const Case& c, int index) {
    SCOPED_TRACE(c.name());
    ASSERT_TRUE(use_layout(c.layout));
    const std::string name = "m" + std::to_string(index) + "-" + c.shape;
    ASSERT_TRUE(submit(c, name));
    struct Killer {
      DeadlockMatrix* self;
      std::string name;
      ~Killer() { self->kill(name); }
    } killer{this, name};
    ASSERT_TRUE(placement_fits(c));
    const auto names = series_names(c);
    Scrape s;
    // Startup: every worker serves /metrics and every series has moved.
    const bool started = poll_until([&] {
      s.failures = 0;
      scrape_all(s);
      if (s.failures) return false;
      for (double v : series(c, s)) {
        if (v <= 0) return false;
      }
      return true;
    }, 60s, 500ms);
    if (!started) {
      report(c, 0, 0, 0, "NO-START");
      FAIL() << c.name() << ": no progress within 60 s of start\n" << diagnostics();
    }
    // The measurement: one sample a second, RSTORM_MATRIX_SECS seconds.
    const int secs = matrix_secs();
    std::vector<double> prev = series(c, s);
    std::vector<int> flat(prev.size(), 0);
    double min_rate = -1;
    std::ostringstream history;
    const auto start = Clock::now();
    auto last = start;
    for (int t = 1; t <= secs; ++t) {
      std::this_thread::sleep_until(start + std::chrono::seconds(t));
      s.failures = 0;
      scrape_all(s);
      const auto now = Clock::now();
      const double dt = std::chrono::duration<double>(now - last).count();
      last = now;
      const std::vector<double> cur = series(c, s);
      history << " t=" << t;
      for (std::size_t i = 0; i < cur.size(); ++i) {
        const double grew = cur[i] - prev[i];
        history << " " << names[i] << "=" << static_cast<std::int64_t>(cur[i]);
        flat[i] = grew > 0 ? 0 : flat[i] + 1;
        const double rate = grew / dt;
        if (min_rate < 0 || rate < min_rate) min_rate = rate;
      }
      if (s.failures) history << " (" << s.failures << " scrapes failed)";
      history << "\n";
      prev = cur;
      for (std::size_t i = 0; i < cur.size(); ++i) {
        if (flat[i] >= 5) {
          report(c, std::chrono::duration<double>(now - start).count(), cur[0], 0, "STALL");
          FAIL() << c.name() << ": " << names[i] << " did not grow for " << flat[i]
                 << " consecutive seconds\nsamples:\n" << history.str() << "workers now:\n"
                 << diagnostics();
        }
      }
    }
    report(c, std::chrono::duration<double>(Clock::now() - start).count(), prev[0], min_rate, "ok");
  }

  // Acks from the files the shapes' spouts write: (spout, id) -> times acked.
  std::map<std::pair<std::string, std::int64_t>, std::int64_t> acks() const {
    std::map<std::pair<std::string, std::int64_t>, std::int64_t> out;
    for (const auto& entry : std::filesystem::directory_iterator(out_dir_)) {
      const std::string file = entry.path().filename().string();
      if (file.rfind("acks-", 0) != 0) continue;
      const std::string spout = file.substr(5, file.find('-', 5) - 5);
      std::ifstream in(entry.path());
      std::string line;
      while (std::getline(in, line)) {
        if (!line.empty()) ++out[{spout, std::stoll(line)}];
      }
    }
    return out;
  }

  void run_finite_case(const Case& c, int index) {
    SCOPED_TRACE(c.name());
    ASSERT_TRUE(use_layout(c.layout));
    for (const auto& entry : std::filesystem::directory_iterator(out_dir_)) {
      std::filesystem::remove(entry.path());
    }
    const std::string name = "f" + std::to_string(index) + "-" + c.shape;
    ASSERT_TRUE(submit(c, name));
    struct Killer {
      DeadlockMatrix* self;
      std::string name;
      ~Killer() { self->kill(name); }
    } killer{this, name};
    ASSERT_TRUE(placement_fits(c));
    if (c.shape != "wordcount") std::ofstream(out_dir_ / "go") << "go\n";
    const auto spouts = spouts_of(c.shape);
    const auto expected = expected_executions(c.shape, c.messages);
    const auto start = Clock::now();
    // Done when every spout emitted and had acked all its messages and every
    // bolt executed at least what it must; a bounded wait, then exact checks.
    Scrape s;
    const bool done = poll_until([&] {
      s.failures = 0;
      scrape_all(s);
      for (const auto& spout : spouts) {
        if (total(s, "rstorm_tuples_acked_total", spout) < static_cast<double>(c.messages)) return false;
      }
      for (const auto& [bolt, n] : expected) {
        if (total(s, "rstorm_tuples_executed_total", bolt) < static_cast<double>(n)) return false;
      }
      return true;
    }, 180s, 500ms);
    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    double acked = 0;
    for (const auto& spout : spouts) acked += total(s, "rstorm_tuples_acked_total", spout);
    report(c, secs, acked, 0, done ? "done" : "INCOMPLETE");
    ASSERT_TRUE(done) << c.name() << ": not finished within 180 s\n" << diagnostics();
    // Counters settle: nothing more happens once everything is acked; read
    // again after the spouts' emitted counters are final.
    s.failures = 0;
    scrape_all(s);
    ASSERT_EQ(s.failures, 0);
    for (const auto& spout : spouts) {
      EXPECT_EQ(total(s, "rstorm_tuples_acked_total", spout), static_cast<double>(c.messages)) << spout;
      EXPECT_EQ(total(s, "rstorm_tuples_failed_total", spout), 0.0) << spout;
      EXPECT_EQ(total(s, "rstorm_tuples_emitted_total", spout), static_cast<double>(c.messages)) << spout;
    }
    for (const auto& [bolt, n] : expected) {
      EXPECT_EQ(total(s, "rstorm_tuples_executed_total", bolt), static_cast<double>(n)) << bolt;
      EXPECT_EQ(total(s, "rstorm_tuples_failed_total", bolt), 0.0) << bolt;
    }
    if (c.shape != "wordcount") {
      // The spouts' own record: every message acked exactly once.
      const auto a = acks();
      EXPECT_EQ(a.size(), spouts.size() * static_cast<std::size_t>(c.messages));
      for (const auto& spout : spouts) {
        for (std::int64_t id = 0; id < c.messages; ++id) {
          auto it = a.find({spout, id});
          if (it == a.end() || it->second != 1) {
            ADD_FAILURE() << spout << " message " << id << " acked "
                          << (it == a.end() ? 0 : it->second) << " times";
            break;
          }
        }
      }
    }
    if (HasFailure()) std::cout << "workers:\n" << diagnostics();
  }

  static inline std::unique_ptr<ZooKeeperServer> zk_;
  static inline std::unique_ptr<sv::DevCluster> cluster_;
  static inline std::unique_ptr<ZooKeeperStore> store_;
  static inline Layout layout_ = Layout::kShared;

  ClusterPaths paths_;
  std::filesystem::path out_dir_;
  std::string topology_id_;
  std::optional<thrift::Assignment> assignment_;
  std::map<Slot, std::multiset<std::string>> slots_;
};

// Cases run in order, one cluster per layout; a case that fails is reported
// and the next one runs.
TEST_F(DeadlockMatrix, EveryShapeKeepsAckingOnARealCluster) {
  const auto cases = progress_cases();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    run_progress_case(cases[i], static_cast<int>(i));
    if (!cluster_) break;  // the cluster did not start: nothing else can run
  }
}

TEST_F(DeadlockMatrix, FiniteInputIsAckedOnceAndCountedExactly) {
  const auto cases = finite_cases();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    run_finite_case(cases[i], static_cast<int>(i));
    if (!cluster_) break;
  }
}

}  // namespace
}  // namespace rstorm::testing
