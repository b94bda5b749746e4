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
// With --shape wordcount: the project's word count (sentences -> split ->
// count -> report) with its default config (acking on, one acker per worker,
// topology.max.spout.pending unset), laid out as the resource-aware scheduler
// lays it out on a dev cluster: everything in worker a but count[1] in worker
// b, so tuples and acks cross the data plane both ways. Prints each run's
// acked sentences/s and p99 complete latency (from the spout's histogram on
// worker a's /metrics over the measured window).
// With --tls-compare: the throughput runs in plaintext and with the data plane
// over mutual TLS (storm.messaging.netty.tls.*, certificates from a throw-away
// CA), alternating run by run, each printed, and the ratio of the medians.
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <thread>
#include <tuple>

#include "../common/cross_core.hpp"
#include "common/config_loader.hpp"
#include "common/security/certificates.hpp"
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

// The body of an HTTP GET of http://127.0.0.1:<port><target> ("" on any error).
std::string http_get(int port, const std::string& target) {
  namespace http = boost::beast::http;
  try {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
    http::request<http::empty_body> req{http::verb::get, target, 11};
    req.set(http::field::host, "127.0.0.1");
    http::write(socket, req);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    return res.body();
  } catch (const std::exception&) {
    return "";
  }
}

// Cumulative bucket counts (le -> count) of one histogram series in a
// Prometheus text exposition: lines `<name>_bucket{...<label>...,le="x"} n`.
std::map<double, double> histogram_buckets(const std::string& text, const std::string& name,
                                           const std::string& label) {
  std::map<double, double> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + "_bucket{", 0) != 0 || line.find(label) == std::string::npos) continue;
    const auto le = line.find("le=\"");
    const auto end = line.find('"', le + 4);
    const auto space = line.rfind(' ');
    if (le == std::string::npos || end == std::string::npos || space == std::string::npos) continue;
    const std::string bound = line.substr(le + 4, end - le - 4);
    const double b = bound == "+Inf" ? std::numeric_limits<double>::infinity() : std::stod(bound);
    out[b] += std::stod(line.substr(space + 1));
  }
  return out;
}

// The q-quantile of the observations between two scrapes of a cumulative
// histogram, interpolated linearly inside its bucket (as Prometheus's
// histogram_quantile does).
double histogram_quantile(const std::map<double, double>& before, const std::map<double, double>& after,
                          double q) {
  std::vector<std::pair<double, double>> cum;
  for (const auto& [bound, n] : after) {
    const auto it = before.find(bound);
    cum.push_back({bound, n - (it == before.end() ? 0 : it->second)});
  }
  if (cum.empty() || cum.back().second <= 0) return 0;
  const double rank = q * cum.back().second;
  double lower = 0, below = 0;
  for (const auto& [bound, n] : cum) {
    if (n >= rank) {
      if (std::isinf(bound)) return lower;
      return lower + (bound - lower) * (n > below ? (rank - below) / (n - below) : 0);
    }
    lower = bound;
    below = n;
  }
  return lower;
}

enum class Shape { kConst, kWordCount };
Shape g_shape = Shape::kConst;

// Two rstorm-worker processes: "a" runs the spout, "b" the bolts (or, for the
// word count, everything but count[1], which runs in "b").
class WorkerPair {
 public:
  WorkerPair(const std::filesystem::path& dir, bool acking, std::vector<std::string> overrides)
      : dir_(dir) {
    std::filesystem::create_directories(dir_);
    port_a_ = sv::free_loopback_port().value();
    int port_b = sv::free_loopback_port().value();
    while (port_b == port_a_) port_b = sv::free_loopback_port().value();
    const int port_a = port_a_;
    rstorm::Config config = rstorm::default_config();
    std::vector<wp::SpecExecutor> executors;
    std::string library = RSTORM_REMOTE_BENCH_LIB;
    if (g_shape == Shape::kWordCount) {
      // The word count's own defaults: acking on, one acker per worker.
      library = RSTORM_WORD_COUNT_LIB;
      config.set("wordcount.report.print", false, "bench");
      executors = {{"count", 1, 1, "a", port_a},     {"count", 2, 2, "b", port_b},
                   {"report", 3, 3, "a", port_a},    {"sentences", 4, 4, "a", port_a},
                   {"split", 5, 5, "a", port_a},     {"split", 6, 6, "a", port_a}};
    } else {
      config.set("topology.acker.executors", std::int64_t{acking ? 2 : 0}, "bench");
      config.set("bench.reliable", std::int64_t{acking ? 1 : 0}, "bench");
      // Task ids follow the components' ids in order, as nimbus numbers them.
      executors = {{"id", 1, 1, "b", port_b}, {"sink", 2, 2, "b", port_b}, {"spout", 3, 3, "a", port_a}};
      if (acking) {
        executors.push_back({"__acker", -1, -1, "a", port_a});
        executors.push_back({"__acker", -2, -2, "b", port_b});
      }
    }
    for (const auto& o : overrides) {
      auto [k, v] = rstorm::parse_config_override(o);
      config.set(k, v, "command line");
    }
    for (auto [node, port] : {std::pair<std::string, int>{"a", port_a}, {"b", port_b}}) {
      wp::WorkerSpec spec;
      spec.topology_id = "bench-1";
      spec.topology_name = "bench";
      spec.library = library;
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
        fail();
      }
      processes_.push_back(*p);
    }
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (!beat("a") || !beat("b")) {
      for (std::size_t i = 0; i < processes_.size(); ++i) {
        if (!sv::process_alive(processes_[i])) {
          const char* node = i == 0 ? "a" : "b";
          const auto how = sv::exit_status_of(processes_[i].pid);
          std::fprintf(stderr,
                       "worker %s ended (%s) before its first heartbeat; see %s/%s/worker.log\n",
                       node, how ? how->c_str() : "unknown", dir_.c_str(), node);
          fail();
        }
      }
      if (Clock::now() > deadline) {
        std::fprintf(stderr, "workers did not heartbeat; see %s/*/worker.log\n", dir_.c_str());
        fail();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  // Stops the workers started so far, then the bench: std::exit runs no
  // destructors, and a worker left running would hold its port and a core.
  [[noreturn]] void fail() {
    stop();
    std::exit(1);
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
  // (time_ms, sentences acked) from worker a's latest heartbeat (word count).
  std::pair<std::int64_t, std::uint64_t> acked_sentences() const {
    auto h = beat("a");
    if (!h || !h->components.count("sentences")) return {0, 0};
    return {h->time_ms, h->components.at("sentences").at("acked")};
  }
  // Worker a's /metrics (its slot port + worker.metrics.port.offset, 1000).
  std::string metrics_a() const { return http_get(port_a_ + 1000, "/metrics"); }
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
  int port_a_ = 0;
  std::vector<sv::ProcessId> processes_;
};

// A counter sampled as (time_ms, count) from a heartbeat.
using Sample = std::pair<std::int64_t, std::uint64_t>;

// Rates (per second) of `sample` over `windows` windows of `window_secs`;
// `*first` and `*last` get the first and last samples.
template <typename F>
std::vector<double> window_rates(F sample, int windows, double window_secs, Sample* first,
                                 Sample* last) {
  std::vector<double> rates;
  *first = *last = sample();
  for (int w = 0; w < windows; ++w) {
    std::this_thread::sleep_for(std::chrono::duration<double>(window_secs));
    const Sample now = sample();
    if (now.first > last->first) {
      rates.push_back(static_cast<double>(now.second - last->second) * 1000.0 /
                      static_cast<double>(now.first - last->first));
    }
    *last = now;
  }
  return rates;
}

// The word count across two workers, default config: each run's acked
// sentences/s (median of its windows) and p99 complete latency.
int word_count_runs(const std::filesystem::path& base, int runs, int windows, double window_secs,
                    const std::vector<std::string>& extra) {
  std::printf("word count (sentences -> split -> count -> report), default config (acking on, "
              "max.spout.pending unset), count[1] alone in worker b\n");
  std::vector<double> tput, p99s;
  for (int i = 0; i < runs; ++i) {
    WorkerPair pair(base / ("wc-" + std::to_string(i)), true, extra);
    std::this_thread::sleep_for(std::chrono::seconds(2));  // warm-up
    const auto h0 = histogram_buckets(pair.metrics_a(), "rstorm_complete_latency_seconds",
                                      "component=\"sentences\"");
    Sample first, last;
    const std::vector<double> rates =
        window_rates([&] { return pair.acked_sentences(); }, windows, window_secs, &first, &last);
    const auto h1 = histogram_buckets(pair.metrics_a(), "rstorm_complete_latency_seconds",
                                      "component=\"sentences\"");
    const double rate = median(rates);
    const double p99_ms = histogram_quantile(h0, h1, 0.99) * 1e3;
    const double min_window = rates.empty() ? 0 : *std::min_element(rates.begin(), rates.end());
    std::printf("  run %d: %.0f sentences/s acked (slowest window %.0f/s, %llu acked in all), "
                "p99 complete latency %.2f ms\n",
                i + 1, rate, min_window,
                static_cast<unsigned long long>(last.second - first.second), p99_ms);
    std::fflush(stdout);
    tput.push_back(rate);
    p99s.push_back(p99_ms);
  }
  const double m = median(tput);
  const double low = *std::min_element(tput.begin(), tput.end());
  std::printf("word count: median %.0f sentences/s acked, p99 complete latency %.2f ms (median of %d "
              "runs); slowest run %.0f/s = %.2f of the median%s\n",
              m, median(p99s), runs, low, m > 0 ? low / m : 0,
              m > 0 && low >= m / 2 ? "" : "  BELOW HALF THE MEDIAN");
  return m > 0 && low >= m / 2 ? 0 : 1;
}

struct ThroughputRun {
  double tuples_per_sec = 0;
  double cpu_secs_per_million = 0;
  double rss_a = 0, rss_b = 0;
};

ThroughputRun measure(const std::filesystem::path& dir, bool acking, int windows, double window_secs,
                      const std::vector<std::string>& overrides) {
  WorkerPair pair(dir, acking, overrides);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // warm-up
  const double cpu0 = pair.cpu();
  Sample first, last;
  const std::vector<double> rates =
      window_rates([&] { return pair.sink(); }, windows, window_secs, &first, &last);
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

// The storm.messaging.netty.tls.* overrides for a throw-away CA and a
// certificate naming 127.0.0.1, written under `dir`.
std::vector<std::string> tls_overrides(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  auto ca = rstorm::security::CertificateAuthority::create("bench CA");
  rstorm::security::CertificateRequest host;
  host.common_name = "supervisor";
  host.ip_addresses = {"127.0.0.1"};
  if (!ca || !(*ca)->write_certificate(dir / "ca.pem") ||
      !(*ca)->issue(host, dir / "host.pem", dir / "host-key.pem")) {
    std::fprintf(stderr, "cannot make certificates in %s\n", dir.c_str());
    std::exit(1);
  }
  return {"storm.messaging.netty.tls.enable=true",
          "storm.messaging.netty.tls.cert.path=" + (dir / "host.pem").string(),
          "storm.messaging.netty.tls.key.path=" + (dir / "host-key.pem").string(),
          "storm.messaging.netty.tls.ca.path=" + (dir / "ca.pem").string()};
}

int tls_runs(const std::filesystem::path& base, int runs, int windows, double window_secs,
             const std::string& modes, const std::vector<std::string>& extra) {
  std::vector<std::string> tls = extra;
  for (auto& o : tls_overrides(base / "tls")) tls.push_back(o);
  std::printf(
      "rstorm-bench-remote-throughput --tls-compare: spout in worker a, IdBolt and "
      "NullBolt in worker b, plaintext and mutual TLS runs alternating; median of %d\n",
      runs);
  for (bool acking : {false, true}) {
    if (modes != "both" && (modes == "on") != acking) continue;
    std::vector<double> plain_rates, tls_rates;
    for (int i = 0; i < runs; ++i) {
      const std::string tag = std::to_string(acking) + "-" + std::to_string(i);
      auto p = measure(base / ("plain-" + tag), acking, windows, window_secs, extra);
      auto t = measure(base / ("tls-" + tag), acking, windows, window_secs, tls);
      std::printf(
          "  run %d acking %-3s: plaintext %.3f M tuples/s, TLS %.3f M tuples/s (%.2fx); "
          "CPU s per M tuples %.2f / %.2f\n",
          i + 1, acking ? "on" : "off", p.tuples_per_sec / 1e6, t.tuples_per_sec / 1e6,
          p.tuples_per_sec > 0 ? t.tuples_per_sec / p.tuples_per_sec : 0, p.cpu_secs_per_million,
          t.cpu_secs_per_million);
      std::fflush(stdout);
      plain_rates.push_back(p.tuples_per_sec);
      tls_rates.push_back(t.tuples_per_sec);
    }
    const double mp = median(plain_rates), mt = median(tls_rates);
    std::printf("acking %-3s: plaintext %.3f M tuples/s, TLS %.3f M tuples/s, ratio %.2f\n",
                acking ? "on" : "off", mp / 1e6, mt / 1e6, mp > 0 ? mt / mp : 0);
    std::fflush(stdout);
  }
  return 0;
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
  std::string shape = "const";
  app.add_option("--shape", shape,
                 "const: ConstSpout | IdBolt -> NullBolt (default); wordcount: the word count, "
                 "default config, across two workers")
      ->check(CLI::IsMember({"const", "wordcount"}));
  app.add_option("-c", extra, "Extra config key=value for every run")->allow_extra_args(false);
  std::string wrap;
  std::string keep;
  app.add_option("--wrap", wrap,
                 "Start each worker under this command, e.g. \"/usr/bin/valgrind --tool=callgrind\"");
  app.add_option("--keep-dir", keep, "Keep the workers' directories (logs, profiles) here");
  bool tls_compare = false;
  app.add_flag("--tls-compare", tls_compare,
               "Throughput in plaintext against the data plane over mutual TLS, runs alternating");
  CLI11_PARSE(app, argc, argv);
  std::istringstream words(wrap);
  for (std::string w; words >> w;) g_wrap.push_back(w);

  const auto base = !keep.empty() ? std::filesystem::path(keep)
                                   : std::filesystem::temp_directory_path() /
                                         ("rstorm-remote-bench-" + std::to_string(::getpid()));
  if (tls_compare) {
    const int rc = tls_runs(base, runs, windows, window_secs, modes, extra);
    std::error_code ec;
    if (keep.empty()) std::filesystem::remove_all(base, ec);
    return rc;
  }
  if (shape == "wordcount") {
    g_shape = Shape::kWordCount;
    const int rc = word_count_runs(base, runs, windows, window_secs, extra);
    std::error_code ec;
    if (keep.empty()) std::filesystem::remove_all(base, ec);
    return rc;
  }
  std::printf("rstorm-bench-remote-throughput: spout in worker a, IdBolt and NullBolt in worker b "
              "(two rstorm-worker processes, TCP on 127.0.0.1), %u hardware threads; median of %d "
              "runs\n", std::thread::hardware_concurrency(), runs);
  bool below_half = false;  // a throughput run under half its median
  for (bool acking : {false, true}) {
    if (modes != "both" && (modes == "on") != acking) continue;
    std::vector<double> tput, cpu, rss_a, rss_b;
    for (int i = 0; i < runs; ++i) {
      const double trip = rstorm_bench::cross_core_round_trip_ns();
      auto r = measure(base / ("tput-" + std::to_string(acking) + "-" + std::to_string(i)), acking,
                       windows, window_secs, extra);
      std::printf("  run %d acking %-3s: %.3f M tuples/s, %.2f CPU s per M tuples, RSS a %.1f MB b %.1f MB",
                  i + 1, acking ? "on" : "off", r.tuples_per_sec / 1e6, r.cpu_secs_per_million,
                  r.rss_a, r.rss_b);
      if (trip > 0) {
        std::printf("; cross-core round trip %.0f ns before, %.0f after", trip,
                    rstorm_bench::cross_core_round_trip_ns());
      }
      std::printf("\n");
      std::fflush(stdout);
      tput.push_back(r.tuples_per_sec);
      cpu.push_back(r.cpu_secs_per_million);
      rss_a.push_back(r.rss_a);
      rss_b.push_back(r.rss_b);
    }
    const double m = median(tput);
    const double low = *std::min_element(tput.begin(), tput.end());
    std::printf("acking %-3s: %.3f M tuples/s at the sink; %.2f CPU s per M tuples (both workers); "
                "RSS worker a %.1f MB, worker b %.1f MB; slowest run %.2f of the median%s\n",
                acking ? "on" : "off", m / 1e6, median(cpu), median(rss_a), median(rss_b),
                m > 0 ? low / m : 0, m > 0 && low >= m / 2 ? "" : "  BELOW HALF THE MEDIAN");
    if (!(m > 0 && low >= m / 2)) below_half = true;
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
  return below_half ? 1 : 0;
}
