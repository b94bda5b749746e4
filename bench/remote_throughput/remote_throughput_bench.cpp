// rstorm-bench-remote-throughput: bench/throughput's ConstSpout -> IdBolt ->
// NullBolt with the spout in one rstorm-worker process and the two bolts in
// another, on loopback, so every tuple crosses the data plane (and, with
// acking, every ack too: one acker per worker, as Storm places them).
//
// No nimbus or supervisor: the bench writes the two workers' spec files by
// hand (the same spec.json a supervisor writes), starts `rstorm-worker --spec`
// (next to this binary) for each, and reads their heartbeat files (sink
// counters), /proc/<pid>/stat (CPU) and /proc/<pid>/status (RSS).
//  1. sink throughput with acking off and on (median of windows, median of runs);
//  2. complete latency p50/p99/p99.9 at a fixed offered rate with acking on;
//  3. CPU seconds per million tuples and resident memory per worker.
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <tuple>
#include <sstream>
#include <thread>

#include "common/config_loader.hpp"
#include "supervisor/dev_cluster.hpp"
#include "supervisor/process_control.hpp"
#include "supervisor/supervisor_options.hpp"
#include "worker/process/worker_spec.hpp"

namespace {

namespace sv = rstorm::supervisor;
namespace wp = rstorm::worker_process;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double cpu_secs(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string f;
  double utime = 0, stime = 0;
  for (int i = 3; fields >> f; ++i) {
    if (i == 14) utime = std::stod(f);
    if (i == 15) {
      stime = std::stod(f);
      break;
    }
  }
  return (utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// Seconds the threads of `pid` have spent runnable but waiting for a CPU
// (/proc/<pid>/task/*/schedstat, second field): how much the machine's other
// load delays this process.
double runqueue_wait_secs(pid_t pid) {
  double total = 0;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(
           "/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "schedstat");
    double run = 0, wait = 0;
    if (in >> run >> wait) total += wait / 1e9;
  }
  return total;
}

// CPU seconds per thread of `pid`, by "<comm>#<tid>".
std::map<std::string, double> thread_cpu(pid_t pid) {
  std::map<std::string, double> out;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(
           "/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto open = text.find('('), close = text.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream fields(text.substr(close + 2));
    std::string f;
    double ticks = 0;
    for (int i = 3; fields >> f; ++i) {
      if (i == 14 || i == 15) ticks += std::stod(f);
      if (i == 15) break;
    }
    out[text.substr(open + 1, close - open - 1) + "#" + task.path().filename().string()] =
        ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }
  return out;
}

double rss_mb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

// A command that each worker is started under (e.g. "valgrind --tool=callgrind"),
// split on spaces; empty: none.
std::vector<std::string> g_wrap;

// Two rstorm-worker processes: "a" runs the spout, "b" the bolts.
class WorkerPair {
 public:
  WorkerPair(const std::filesystem::path& dir, bool acking, std::vector<std::string> overrides)
      : dir_(dir) {
    std::filesystem::create_directories(dir_);
    const int port_a = sv::free_loopback_port().value();
    int port_b = sv::free_loopback_port().value();
    while (port_b == port_a) port_b = sv::free_loopback_port().value();
    rstorm::Config config = rstorm::default_config();
    config.set("topology.acker.executors", std::int64_t{acking ? 2 : 0}, "bench");
    config.set("bench.reliable", std::int64_t{acking ? 1 : 0}, "bench");
    for (const auto& o : overrides) {
      auto [k, v] = rstorm::parse_config_override(o);
      config.set(k, v, "command line");
    }
    std::vector<wp::SpecExecutor> executors = {
        {"spout", 1, 1, "a", port_a}, {"id", 2, 2, "b", port_b}, {"sink", 3, 3, "b", port_b}};
    if (acking) {
      executors.push_back({"__acker", -1, -1, "a", port_a});
      executors.push_back({"__acker", -2, -2, "b", port_b});
    }
    for (auto [node, port] : {std::pair<std::string, int>{"a", port_a}, {"b", port_b}}) {
      wp::WorkerSpec spec;
      spec.topology_id = "bench-1";
      spec.topology_name = "bench";
      spec.library = RSTORM_REMOTE_BENCH_LIB;
      spec.supervisor_id = node;
      spec.host = "127.0.0.1";
      spec.port = port;
      spec.node_hosts = {{"a", "127.0.0.1"}, {"b", "127.0.0.1"}};
      spec.worker_dir = dir_ / node;
      spec.assignment_version = 1;
      spec.executors = executors;
      spec.config = config;
      spec.heartbeat_interval_ms = 200;
      std::filesystem::create_directories(spec.worker_dir);
      (void)wp::write_file_atomically(spec.spec_file(), wp::spec_to_json(spec));
      (void)wp::write_file_atomically(spec.status_file(), wp::kStatusActive);
      std::filesystem::path binary = sv::executable_dir() / "rstorm-worker";
      std::vector<std::string> args = {"--spec", spec.spec_file().string()};
      if (!g_wrap.empty()) {
        args.insert(args.begin(), binary.string());
        args.insert(args.begin(), g_wrap.begin() + 1, g_wrap.end());
        binary = g_wrap.front();
      }
      auto p = sv::launch_process(binary, args, spec.worker_dir / "worker.log");
      if (!p) {
        std::fprintf(stderr, "cannot start rstorm-worker: %s\n", p.status().to_string().c_str());
        std::exit(1);
      }
      processes_.push_back(*p);
    }
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (!beat("a") || !beat("b")) {
      if (Clock::now() > deadline) {
        std::fprintf(stderr, "workers did not heartbeat; see %s/*/worker.log\n", dir_.c_str());
        std::exit(1);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~WorkerPair() { stop(); }

  void stop() {
    if (!processes_.empty()) sv::terminate_processes(processes_, std::chrono::seconds(20));
    processes_.clear();
  }
  std::optional<wp::WorkerHeartbeatFile> beat(const std::string& node) const {
    auto text = wp::read_whole_file(dir_ / node / "heartbeat");
    if (!text) return std::nullopt;
    auto h = wp::heartbeat_from_json(*text);
    if (!h) return std::nullopt;
    return *h;
  }
  // (time_ms, sink executed) from worker b's latest heartbeat.
  std::pair<std::int64_t, std::uint64_t> sink() const {
    auto h = beat("b");
    if (!h || !h->components.count("sink")) return {0, 0};
    return {h->time_ms, h->components.at("sink").at("executed")};
  }
  pid_t pid(int i) const { return processes_.at(static_cast<std::size_t>(i)).pid; }
  double cpu() const { return cpu_secs(pid(0)) + cpu_secs(pid(1)); }
  double runqueue_wait() const { return runqueue_wait_secs(pid(0)) + runqueue_wait_secs(pid(1)); }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::vector<sv::ProcessId> processes_;
};

struct ThroughputRun {
  double tuples_per_sec = 0;
  double cpu_secs_per_million = 0;
  double rss_a = 0, rss_b = 0;
};

ThroughputRun measure(const std::filesystem::path& dir, bool acking, int windows, double window_secs,
                      const std::vector<std::string>& overrides) {
  WorkerPair pair(dir, acking, overrides);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // warm-up
  std::vector<double> rates;
  auto last = pair.sink();
  const double cpu0 = pair.cpu();
  const auto first = last;
  for (int i = 0; i < windows; ++i) {
    std::this_thread::sleep_for(std::chrono::duration<double>(window_secs));
    auto now = pair.sink();
    if (now.first > last.first) {
      rates.push_back(static_cast<double>(now.second - last.second) * 1000.0 /
                      static_cast<double>(now.first - last.first));
    }
    last = now;
  }
  ThroughputRun r;
  const double cpu = pair.cpu() - cpu0;
  r.tuples_per_sec = median(rates);
  const double tuples = static_cast<double>(last.second - first.second);
  r.cpu_secs_per_million = tuples > 0 ? cpu / tuples * 1e6 : 0;
  r.rss_a = rss_mb(pair.pid(0));
  r.rss_b = rss_mb(pair.pid(1));
  return r;
}

double percentile(std::vector<float>& v, double p) {
  if (v.empty()) return 0;
  std::size_t k = std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rstorm remote throughput bench: ConstSpout | IdBolt -> NullBolt over two workers"};
  int runs = 3, windows = 3;
  double window_secs = 2, rate = 100000, latency_secs = 10;
  std::string modes = "both";
  bool skip_latency = false;
  std::vector<std::string> extra;
  app.add_option("--runs", runs, "Runs per figure; the median is printed (default 3)");
  app.add_option("--acking", modes, "Throughput runs: off, on or both (default both)")
      ->check(CLI::IsMember({"off", "on", "both"}));
  app.add_option("--windows", windows, "Throughput windows per run (default 3)");
  app.add_option("--window-secs", window_secs, "Seconds per window (default 2)");
  app.add_option("--rate", rate, "Offered rate for the latency run, tuples/s (default 100000)");
  app.add_option("--latency-secs", latency_secs, "Seconds recorded in the latency run (default 10)");
  app.add_flag("--no-latency", skip_latency, "Skip the fixed-rate latency run");
  app.add_option("-c", extra, "Extra config key=value for every run")->allow_extra_args(false);
  std::string wrap;
  std::string keep;
  app.add_option("--wrap", wrap,
                 "Start each worker under this command, e.g. \"/usr/bin/valgrind --tool=callgrind\"");
  app.add_option("--keep-dir", keep, "Keep the workers' directories (logs, profiles) here");
  CLI11_PARSE(app, argc, argv);
  std::istringstream words(wrap);
  for (std::string w; words >> w;) g_wrap.push_back(w);

  const auto base = !keep.empty() ? std::filesystem::path(keep)
                                   : std::filesystem::temp_directory_path() /
                                         ("rstorm-remote-bench-" + std::to_string(::getpid()));
  std::printf("rstorm-bench-remote-throughput: spout in worker a, IdBolt and NullBolt in worker b "
              "(two rstorm-worker processes, TCP on 127.0.0.1), %u hardware threads; median of %d "
              "runs\n", std::thread::hardware_concurrency(), runs);
  for (bool acking : {false, true}) {
    if (modes != "both" && (modes == "on") != acking) continue;
    std::vector<double> tput, cpu, rss_a, rss_b;
    for (int i = 0; i < runs; ++i) {
      auto r = measure(base / ("tput-" + std::to_string(acking) + "-" + std::to_string(i)), acking,
                       windows, window_secs, extra);
      std::printf("  run %d acking %-3s: %.3f M tuples/s, %.2f CPU s per M tuples, RSS a %.1f MB b %.1f MB\n",
                  i + 1, acking ? "on" : "off", r.tuples_per_sec / 1e6, r.cpu_secs_per_million,
                  r.rss_a, r.rss_b);
      std::fflush(stdout);
      tput.push_back(r.tuples_per_sec);
      cpu.push_back(r.cpu_secs_per_million);
      rss_a.push_back(r.rss_a);
      rss_b.push_back(r.rss_b);
    }
    std::printf("acking %-3s: %.3f M tuples/s at the sink; %.2f CPU s per M tuples (both workers); "
                "RSS worker a %.1f MB, worker b %.1f MB\n",
                acking ? "on" : "off", median(tput) / 1e6, median(cpu), median(rss_a), median(rss_b));
    std::fflush(stdout);
  }
  if (!skip_latency) {
    std::vector<double> p50, p99, p999;
    for (int i = 0; i < runs; ++i) {
      const auto dir = base / ("latency-" + std::to_string(i));
      const auto file = dir / "latency.txt";
      std::vector<std::string> overrides = extra;
      overrides.push_back("bench.rate=" + std::to_string(static_cast<long long>(rate)));
      overrides.push_back("bench.latency.file=" + file.string());
      overrides.push_back("bench.latency.warmup.secs=2");
      double sink_rate = 0, wait_per_sec = 0, cpu_per_sec = 0;
      {
        WorkerPair pair(dir, true, overrides);
        std::this_thread::sleep_for(std::chrono::seconds(2));
        auto s0 = pair.sink();
        const double w0 = pair.runqueue_wait(), c0 = pair.cpu();
        const auto t0a = thread_cpu(pair.pid(0)), t0b = thread_cpu(pair.pid(1));
        std::this_thread::sleep_for(std::chrono::duration<double>(latency_secs));
        auto s1 = pair.sink();
        wait_per_sec = (pair.runqueue_wait() - w0) / latency_secs;
        cpu_per_sec = (pair.cpu() - c0) / latency_secs;
        std::printf("  run %d CPU s/s per thread:", i + 1);
        for (auto [name, t0, pid] : {std::tuple{"a", &t0a, pair.pid(0)}, {"b", &t0b, pair.pid(1)}}) {
          for (const auto& [thread, secs] : thread_cpu(pid)) {
            const double before = t0->count(thread) ? t0->at(thread) : 0;
            const double rate = (secs - before) / latency_secs;
            if (rate >= 0.01) std::printf(" %s:%s %.2f", name, thread.substr(0, thread.find('#')).c_str(), rate);
          }
        }
        std::printf("\n");
        if (s1.first > s0.first) {
          sink_rate = static_cast<double>(s1.second - s0.second) * 1000.0 /
                      static_cast<double>(s1.first - s0.first);
        }
        pair.stop();  // the spout writes its latencies when it closes
      }
      std::vector<float> micros;
      std::ifstream in(file);
      for (float m; in >> m;) micros.push_back(m);
      const double a = percentile(micros, 0.5) / 1e3, b = percentile(micros, 0.99) / 1e3,
                   c = percentile(micros, 0.999) / 1e3;
      double load[3] = {0, 0, 0};
      (void)::getloadavg(load, 3);
      std::printf("  run %d latency at %.0f tuples/s offered, acking on (%zu samples): p50 %.3f ms "
                  "p99 %.3f ms p99.9 %.3f ms; sink %.0f tuples/s; workers' CPU %.2f s/s, their "
                  "threads waited %.3f s/s for a CPU; load average %.1f\n",
                  i + 1, rate, micros.size(), a, b, c, sink_rate, cpu_per_sec, wait_per_sec, load[0]);
      std::fflush(stdout);
      p50.push_back(a);
      p99.push_back(b);
      p999.push_back(c);
    }
    std::printf("complete latency at %.0f tuples/s, acking on: p50 %.3f ms  p99 %.3f ms  p99.9 %.3f ms\n",
                rate, median(p50), median(p99), median(p999));
  }
  std::error_code ec;
  if (keep.empty()) std::filesystem::remove_all(base, ec);
  return 0;
}
