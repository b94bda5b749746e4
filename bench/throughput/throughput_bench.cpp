// rstorm-bench-throughput: the single-worker figures Storm quotes, measured on
// this machine. ConstSpout -> IdBolt -> NullBolt, one executor each (or
// --parallelism of each in the throughput runs):
//  1. sink throughput with acking off and on, each with executors fused
//     (topology.fuse.executors: the three run on the spout's thread) and not
//     (median of several windows), beside a three-thread ring's;
//  2. complete latency percentiles at a fixed offered rate, acking on;
//  3. process CPU seconds and peak resident memory.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <rstorm/local_cluster.hpp>
#include <rstorm/rstorm.hpp>
#include <thread>
#include <vector>

#include "../common/bench_bolts.hpp"
#include "../common/cross_core.hpp"
#include "ring_baseline.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Complete latencies seen by the paced spout, in microseconds. Written on the
// spout's thread, read after the topology is killed (thread joined).
struct LatencyLog {
  std::vector<float> micros;
  Clock::time_point record_after;
};

// Emits a small constant tuple as fast as it is asked, one per next_tuple
// call as Storm's perf ConstSpout does, with a message id when `reliable`.
class ConstSpout : public rstorm::Spout {
 public:
  explicit ConstSpout(bool reliable) : reliable_(reliable) {}

  void open(const rstorm::Config&, const rstorm::TopologyContext&,
            rstorm::SpoutOutputCollector& c) override {
    out_ = &c;
  }
  void next_tuple() override {
    if (reliable_) [[unlikely]] {
      emit_reliable();
      return;
    }
    out_->emit({seq_++, std::int64_t{42}});
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"seq", "value"});
  }

 private:
  [[gnu::noinline]] void emit_reliable() {
    out_->emit({seq_, std::int64_t{42}}, seq_);
    ++seq_;
  }

  bool reliable_;
  rstorm::SpoutOutputCollector* out_ = nullptr;
  std::int64_t seq_ = 0;
};

// ConstSpout's tuples, `burst` per next_tuple call: a spout reading a
// batched source.
class BurstSpout final : public ConstSpout {
 public:
  BurstSpout(bool reliable, int burst) : ConstSpout(reliable), burst_(burst) {}
  void next_tuple() override {
    for (int i = 0; i < burst_; ++i) ConstSpout::next_tuple();
  }

 private:
  int burst_;
};

std::unique_ptr<rstorm::Spout> const_spout(bool reliable, int burst) {
  if (burst == 1) return std::make_unique<ConstSpout>(reliable);
  return std::make_unique<BurstSpout>(reliable, burst);
}

// Emits the same tuples, reliably, at `rate` per second, and logs the
// complete latency of each acked one.
class PacedSpout : public rstorm::Spout {
 public:
  PacedSpout(double rate, std::shared_ptr<LatencyLog> log) : rate_(rate), log_(std::move(log)) {}

  void open(const rstorm::Config&, const rstorm::TopologyContext&,
            rstorm::SpoutOutputCollector& c) override {
    out_ = &c;
    start_ = Clock::now();
    sent_at_.resize(1 << 20);
  }
  void next_tuple() override {
    // Emit what is due by now, at most a small burst per call.
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const auto due = static_cast<std::int64_t>(elapsed * rate_);
    for (int i = 0; i < 64 && seq_ < due; ++i) {
      sent_at_[static_cast<std::size_t>(seq_) & (sent_at_.size() - 1)] = Clock::now();
      out_->emit({seq_, std::int64_t{42}}, seq_);
      ++seq_;
    }
  }
  void ack(const rstorm::Value& id) override {
    const auto now = Clock::now();
    if (now < log_->record_after) return;
    const auto sent = sent_at_[static_cast<std::size_t>(id.as_int()) & (sent_at_.size() - 1)];
    log_->micros.push_back(std::chrono::duration<float, std::micro>(now - sent).count());
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"seq", "value"});
  }

 private:
  double rate_;
  std::shared_ptr<LatencyLog> log_;
  rstorm::SpoutOutputCollector* out_ = nullptr;
  Clock::time_point start_;
  std::int64_t seq_ = 0;
  std::vector<Clock::time_point> sent_at_;
};

using rstorm_bench::IdBolt;
using rstorm_bench::NullBolt;

// `spout`: makes the spout; `parallelism`: executors of each component (the
// latency run, whose spouts share one log, has one).
rstorm::Topology make_topology(std::function<std::unique_ptr<rstorm::Spout>()> spout,
                               int parallelism = 1) {
  rstorm::TopologyBuilder b;
  b.set_spout(
      "spout", std::move(spout), parallelism);
  b.set_bolt(
       "id", [] { return std::make_unique<IdBolt>(); }, parallelism)
      .local_or_shuffle_grouping("spout");
  b.set_bolt(
       "sink", [] { return std::make_unique<NullBolt>(); }, parallelism)
      .local_or_shuffle_grouping("id");
  auto t = b.build();
  if (!t.ok()) {
    std::fprintf(stderr, "bench topology invalid: %s\n", t.status().message().c_str());
    std::exit(1);
  }
  return std::move(t).value();
}

std::uint64_t sink_executed(rstorm::LocalCluster& cluster) {
  return cluster.stats("bench")->component("sink")->executed;
}

// Median sink throughput over `windows` windows of `window` each, after a warm-up.
// What a throughput run saw besides its rate: trees in flight at the end of
// the last window, and the spout's mean complete latency since submit.
struct RunShape {
  std::uint64_t in_flight = 0;
  double complete_latency_ms = 0;
};

double measure_throughput(bool acking, bool fuse, int parallelism, int burst, int windows,
                          std::chrono::milliseconds window, const std::vector<std::string>& extra,
                          std::vector<double>* all, RunShape* shape) {
  rstorm::Config conf;
  conf.set("topology.acker.executors", acking ? 1 : 0);
  conf.set("topology.fuse.executors", fuse);
  for (const auto& e : extra) {
    auto [k, v] = rstorm::parse_config_override(e);
    conf.set(k, v, "command line");
  }
  rstorm::LocalCluster cluster;
  if (!cluster.submit("bench", conf, make_topology([=] { return const_spout(acking, burst); }, parallelism)).is_ok())
    std::exit(1);
  std::this_thread::sleep_for(std::chrono::seconds(1));  // warm-up
  std::vector<double> rates;
  auto last = sink_executed(cluster);
  auto last_at = Clock::now();
  for (int i = 0; i < windows; ++i) {
    std::this_thread::sleep_for(window);
    const auto now_count = sink_executed(cluster);
    const auto now = Clock::now();
    rates.push_back(static_cast<double>(now_count - last) /
                    std::chrono::duration<double>(now - last_at).count());
    last = now_count;
    last_at = now;
  }
  if (auto stats = cluster.stats("bench"); stats.ok()) {
    shape->in_flight = stats->in_flight;
    shape->complete_latency_ms = stats->component("spout")->complete_latency_ms;
  }
  (void)cluster.kill("bench");
  *all = rates;
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

double percentile(std::vector<float>& v, double p) {
  if (v.empty()) return 0;
  std::size_t k =
      std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rstorm throughput and latency bench: ConstSpout -> IdBolt -> NullBolt"};
  int windows = 5;
  double window_secs = 1;
  double rate = 100000;
  double latency_secs = 10;
  std::vector<std::string> extra;
  std::string modes = "both";
  app.add_option("--acking", modes, "Throughput runs: off, on, both or none (default both)")
      ->check(CLI::IsMember({"off", "on", "both", "none"}));
  std::string fuse_modes = "both";
  app.add_option("--fuse", fuse_modes, "Throughput runs with executors fused: off, on or both (default both)")
      ->check(CLI::IsMember({"off", "on", "both"}));
  bool skip_latency = false;
  app.add_flag("--no-latency", skip_latency, "Skip the fixed-rate latency run");
  bool skip_ring = false;
  app.add_flag("--no-ring", skip_ring,
               "Skip the ring baseline (for profiling rstorm alone; no ratios printed)");
  app.add_option("--windows", windows, "Throughput windows per mode (default 5)");
  app.add_option("--window-secs", window_secs, "Seconds per window (default 1)");
  app.add_option("--rate", rate, "Offered rate for the latency run, tuples/s (default 100000)");
  app.add_option("--latency-secs", latency_secs, "Seconds of the latency run (default 10)");
  int parallelism = 1;
  app.add_option("--parallelism", parallelism,
                 "Executors of each component in the throughput runs (default 1; 2 runs a fused "
                 "chain per core)")
      ->check(CLI::Range(1, 64));
  int burst = 1;
  app.add_option("--spout-burst", burst,
                 "Tuples the spout emits per next_tuple call in the throughput runs (default 1)")
      ->check(CLI::Range(1, 1024));
  app.add_option("-c", extra, "Extra config key=value for every run")->allow_extra_args(false);
  CLI11_PARSE(app, argc, argv);

  const auto window = std::chrono::milliseconds(static_cast<long long>(window_secs * 1000));
  std::printf(
      "rstorm-bench-throughput: ConstSpout -> IdBolt -> NullBolt, %d executor%s each, "
      "%d tuple%s per next_tuple call, %u hardware threads\n",
      parallelism, parallelism == 1 ? "" : "s", burst, burst == 1 ? "" : "s",
      std::thread::hardware_concurrency());
  double ring = 0;
  if (modes != "none" && !skip_ring) {
    std::vector<double> all;
    const double trip_before = rstorm_bench::cross_core_round_trip_ns();
    ring = rstorm_bench::ring_baseline(windows, window, &all);
    const double trip_after = rstorm_bench::cross_core_round_trip_ns();
    std::printf(
        "ring      : %6.2f M tuples/s at the sink: the machine's limit for this shape "
        "(3 threads, 2 SPSC rings, batches of 256, {uint64, uint64}; windows:",
        ring / 1e6);
    for (double r : all) std::printf(" %.2f", r / 1e6);
    std::printf(")");
    if (trip_before > 0) {
      std::printf("; cross-core round trip %.0f ns before, %.0f after", trip_before, trip_after);
    }
    std::printf("\n");
  }
  for (bool acking : {false, true}) {
    for (bool fuse : {false, true}) {
      if (modes == "none" || (modes != "both" && (modes == "on") != acking)) continue;
      if (fuse_modes != "both" && (fuse_modes == "on") != fuse) continue;
      const double trip_before = rstorm_bench::cross_core_round_trip_ns();
      const double cpu0 = cpu_seconds();
      std::vector<double> all;
      RunShape shape;
      const double median =
          measure_throughput(acking, fuse, parallelism, burst, windows, window, extra, &all, &shape);
      const double cpu = cpu_seconds() - cpu0;
      const double trip_after = rstorm_bench::cross_core_round_trip_ns();
      double total = 0;
      for (double r : all) total += r * window_secs;
      std::printf("acking %-3s%s: %6.2f M tuples/s at the sink (median of %d windows of %.1f s:",
                  acking ? "on" : "off", fuse ? ", fused" : "       ", median / 1e6, windows,
                  window_secs);
      for (double r : all) std::printf(" %.2f", r / 1e6);
      // Tuples per CPU second: how much work a tuple costs, whatever else runs.
      std::printf("); CPU %.1f s, %.2f M tuples per CPU second", cpu,
                  total / (cpu * windows * window_secs / (windows * window_secs + 1)) / 1e6);
      if (ring > 0) std::printf("; %.3f of the ring", median / ring);
      if (trip_before > 0) {
        std::printf("; cross-core round trip %.0f ns before, %.0f after", trip_before, trip_after);
      }
      std::printf("\n");
      if (acking) {
        std::printf(
            "                   trees in flight at the end %llu, mean complete latency %.2f ms\n",
            static_cast<unsigned long long>(shape.in_flight), shape.complete_latency_ms);
      }
    }
  }

  auto log = std::make_shared<LatencyLog>();
  if (skip_latency) rate = 0;
  log->micros.reserve(static_cast<std::size_t>(rate * latency_secs) + 1024);
  log->record_after = Clock::now() + std::chrono::seconds(2);  // skip start-up
  if (rate > 0) {
    rstorm::Config conf;
    for (const auto& e : extra) {
      auto [k, v] = rstorm::parse_config_override(e);
      conf.set(k, v, "command line");
    }
    rstorm::LocalCluster cluster;
    const double cpu0 = cpu_seconds();
    if (!cluster.submit("bench", conf, make_topology([=] { return std::make_unique<PacedSpout>(rate, log); })).is_ok()) return 1;
    std::this_thread::sleep_for(std::chrono::duration<double>(2 + latency_secs));
    auto stats = cluster.stats("bench");
    (void)cluster.kill("bench", std::chrono::seconds(5));
    const double cpu = cpu_seconds() - cpu0;
    // topology.fuse.executors as the defaults or -c set it: say which ran.
    const bool fused = stats.ok() && stats->component("id") != nullptr &&
                       !stats->component("id")->fused_into.empty();
    std::printf(
        "latency at %.0f tuples/s offered, acking on, %s (%zu samples): p50 %.3f ms  "
        "p99 %.3f ms  p99.9 %.3f ms  max %.3f ms; sink %.0f tuples/s; CPU %.2f s/s\n",
        rate, fused ? "fused" : "not fused", log->micros.size(), percentile(log->micros, 0.5) / 1e3,
        percentile(log->micros, 0.99) / 1e3, percentile(log->micros, 0.999) / 1e3,
        log->micros.empty() ? 0.0 : *std::max_element(log->micros.begin(), log->micros.end()) / 1e3,
        stats.ok() ? stats->component("sink")->throughput : 0.0, cpu / (2 + latency_secs));
  }
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  std::printf("process CPU %.1f s; peak RSS %.1f MB\n", cpu_seconds(),
              static_cast<double>(u.ru_maxrss) / 1024.0);
  return 0;
}
