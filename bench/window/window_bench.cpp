// rstorm-bench-window: how fast a windowed bolt takes tuples, in one process.
// ConstSpout -> window (a WindowedBolt keeping the sum of its window from
// what entered and what left), beside the same topology with a plain bolt in
// place of the window, in the same run:
//  1. count window, length 10,000 sliding by 1,000 tuples, acking off and on;
//  2. processing-time window, 1 s sliding by 100 ms, acking off.
// Each figure is the median of several windows of the bolt's executed count.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <rstorm/local_cluster.hpp>
#include <rstorm/rstorm.hpp>
#include <thread>
#include <vector>

#include "../common/bench_bolts.hpp"

namespace {

using Clock = std::chrono::steady_clock;

class ConstSpout : public rstorm::Spout {
 public:
  explicit ConstSpout(bool reliable) : reliable_(reliable) {}
  void open(const rstorm::Config&, const rstorm::TopologyContext&,
            rstorm::SpoutOutputCollector& c) override {
    out_ = &c;
  }
  void next_tuple() override {
    if (reliable_) {
      out_->emit({seq_, std::int64_t{42}}, seq_);
    } else {
      out_->emit({seq_, std::int64_t{42}});
    }
    ++seq_;
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"seq", "value"});
  }

 private:
  bool reliable_;
  rstorm::SpoutOutputCollector* out_ = nullptr;
  std::int64_t seq_ = 0;
};

// The sum of the window's values, kept from what entered and what left.
class SumWindow : public rstorm::WindowedBolt {
 public:
  void prepare(const rstorm::Config&, const rstorm::TopologyContext&,
               rstorm::OutputCollector& c) override {
    out_ = &c;
  }
  void execute(const rstorm::TupleWindow& w) override {
    for (const rstorm::Tuple* t : w.get_new()) sum_ += t->get_int(1);
    for (const rstorm::Tuple* t : w.get_expired()) sum_ -= t->get_int(1);
    out_->emit(rstorm::Values{sum_, static_cast<std::int64_t>(w.get().size())});
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"sum", "size"});
  }

 private:
  rstorm::OutputCollector* out_ = nullptr;
  std::int64_t sum_ = 0;
};

enum class Shape { kCount, kCountSpilled, kDuration, kPlain };

rstorm::Topology make_topology(Shape shape, bool reliable) {
  rstorm::TopologyBuilder b;
  b.set_spout("spout", [=] { return std::make_unique<ConstSpout>(reliable); });
  if (shape == Shape::kPlain) {
    b.set_bolt("window", [] {
       return std::make_unique<rstorm_bench::IdBolt>();
     }).shuffle_grouping("spout");
  } else {
    auto d = b.set_bolt("window", [] {
                return std::make_unique<SumWindow>();
              }).shuffle_grouping("spout");
    if (shape == Shape::kCount) {
      d.with_window(rstorm::Count(10'000), rstorm::Count(1'000));
    } else if (shape == Shape::kCountSpilled) {
      // 9,000 of the window's 10,000 tuples in the task's RocksDB store.
      d.with_window(rstorm::Count(10'000), rstorm::Count(1'000)).with_max_tuples_in_memory(1'000);
    } else {
      d.with_window(rstorm::Duration(1'000), rstorm::Duration(100));
    }
  }
  b.set_bolt("sink", [] {
     return std::make_unique<rstorm_bench::NullBolt>();
   }).shuffle_grouping("window");
  auto t = b.build();
  if (!t.ok()) {
    std::fprintf(stderr, "bench topology invalid: %s\n", t.status().message().c_str());
    std::exit(1);
  }
  return std::move(t).value();
}

// Median of the window bolt's executed rate over `windows` windows.
double measure(Shape shape, bool acking, int windows, std::chrono::milliseconds window,
               std::vector<double>* all) {
  rstorm::Config conf;
  conf.set("topology.acker.executors", acking ? 1 : 0);
  std::filesystem::path state_dir;
  if (shape == Shape::kCountSpilled) {
    state_dir = std::filesystem::temp_directory_path() /
                ("rstorm-bench-window-" + std::to_string(::getpid()));
    conf.set("topology.state.provider", "rocksdb");
    conf.set("topology.state.rocksdb.dir", state_dir.string());
  }
  rstorm::LocalCluster cluster;
  if (!cluster.submit("bench", conf, make_topology(shape, acking)).is_ok()) std::exit(1);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // warm-up, windows full
  auto executed = [&] { return cluster.stats("bench")->component("window")->executed; };
  auto last = executed();
  auto last_at = Clock::now();
  std::vector<double> rates;
  for (int i = 0; i < windows; ++i) {
    std::this_thread::sleep_for(window);
    const auto n = executed();
    const auto now = Clock::now();
    rates.push_back(static_cast<double>(n - last) /
                    std::chrono::duration<double>(now - last_at).count());
    last = n;
    last_at = now;
  }
  auto stats = cluster.stats("bench");
  if (acking && stats->component("spout")->failed > 0) {
    std::printf("  (%llu trees failed)\n",
                static_cast<unsigned long long>(stats->component("spout")->failed));
  }
  (void)cluster.kill("bench");
  if (!state_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(state_dir, ec);
  }
  *all = rates;
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rstorm window bench: ConstSpout -> windowed bolt -> NullBolt"};
  int windows = 5;
  double window_secs = 1;
  app.add_option("--windows", windows, "Measurement windows per run (default 5)");
  app.add_option("--window-secs", window_secs, "Seconds per measurement window (default 1)");
  CLI11_PARSE(app, argc, argv);
  const auto window = std::chrono::milliseconds(static_cast<long long>(window_secs * 1000));
  std::printf(
      "rstorm-bench-window: ConstSpout -> window -> NullBolt, one executor each, %u "
      "hardware threads\n",
      std::thread::hardware_concurrency());
  struct Run {
    const char* name;
    Shape shape;
    bool acking;
  };
  const Run runs[] = {{"plain bolt, acking off              ", Shape::kPlain, false},
                      {"count 10,000 / 1,000, acking off    ", Shape::kCount, false},
                      {"the same, 1,000 in memory (RocksDB) ", Shape::kCountSpilled, false},
                      {"plain bolt, acking on               ", Shape::kPlain, true},
                      {"count 10,000 / 1,000, acking on     ", Shape::kCount, true},
                      {"duration 1 s / 100 ms, acking off   ", Shape::kDuration, false}};
  double plain[2] = {0, 0};
  double count_off = 0;
  for (const Run& r : runs) {
    std::vector<double> all;
    const double median = measure(r.shape, r.acking, windows, window, &all);
    if (r.shape == Shape::kPlain) plain[r.acking ? 1 : 0] = median;
    if (r.shape == Shape::kCount && !r.acking) count_off = median;
    std::printf("%s: %6.2f M tuples/s into the bolt (median of %d:", r.name, median / 1e6, windows);
    for (double x : all) std::printf(" %.2f", x / 1e6);
    std::printf(")");
    if (r.shape == Shape::kCountSpilled && count_off > 0) {
      std::printf("; %.2f of the same window in memory", median / count_off);
    } else if (r.shape != Shape::kPlain && plain[r.acking ? 1 : 0] > 0) {
      std::printf("; %.2f of the plain bolt's", median / plain[r.acking ? 1 : 0]);
    }
    std::printf("\n");
  }
  return 0;
}
