// rstorm-bench-checkpoint: a stateful word count with checkpoints off and on,
// in one process, its state in memory and in RocksDB (see README.md).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <rstorm/local_cluster.hpp>
#include <rstorm/rstorm.hpp>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

const char* const kSentences[] = {"the cow jumped over the moon",
                                  "an apple a day keeps the doctor away",
                                  "four score and seven years ago",
                                  "snow white and the seven dwarfs", "i am at two with nature"};

// Reliable sentences, forever; its position is keyed state, as a replayable
// source's offset would be.
class SentenceSpout : public rstorm::Spout {
 public:
  void open(const rstorm::Config&, const rstorm::TopologyContext& context,
            rstorm::SpoutOutputCollector& c) override {
    out_ = &c;
    position_ = context.key_value_state<std::string, std::int64_t>("position");
    next_ = position_.get("next", 0);
  }
  void next_tuple() override {
    out_->emit({std::string(kSentences[next_ % 5])}, next_);
    ++next_;
    position_.put("next", next_);
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"sentence"});
  }

 private:
  rstorm::SpoutOutputCollector* out_ = nullptr;
  rstorm::KeyValueState<std::string, std::int64_t> position_;
  std::int64_t next_ = 0;
};

class Split : public rstorm::BasicBolt {
 public:
  void execute(const rstorm::Tuple& input, rstorm::BasicOutputCollector& out) override {
    const std::string& s = input.get_string(0);
    std::size_t at = 0;
    while (at <= s.size()) {
      const std::size_t end = std::min(s.find(' ', at), s.size());
      out.emit({s.substr(at, end - at)});
      at = end + 1;
    }
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"word"});
  }
};

class Count : public rstorm::BasicBolt {
 public:
  void prepare(const rstorm::Config&, const rstorm::TopologyContext& context) override {
    counts_ = context.key_value_state<std::string, std::int64_t>("counts");
  }
  void execute(const rstorm::Tuple& input, rstorm::BasicOutputCollector&) override {
    const std::string& w = input.get_string(0);
    counts_.put(w, counts_.get(w, 0) + 1);
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer&) override {}

 private:
  rstorm::KeyValueState<std::string, std::int64_t> counts_;
};

rstorm::Topology make_topology() {
  rstorm::TopologyBuilder b;
  b.set_spout("sentences", [] { return std::make_unique<SentenceSpout>(); });
  b.set_bolt("split", [] { return std::make_unique<Split>(); }, 2).shuffle_grouping("sentences");
  b.set_bolt("count", [] { return std::make_unique<Count>(); }, 2)
      .fields_grouping("split", rstorm::Fields{"word"});
  auto t = b.build();
  if (!t.ok()) {
    std::fprintf(stderr, "bench topology invalid: %s\n", t.status().message().c_str());
    std::exit(1);
  }
  return std::move(t).value();
}

struct Figure {
  double median = 0;
  std::vector<double> all;
};

Figure measure(bool rocksdb, bool checkpoints, int interval_ms, int windows) {
  rstorm::Config conf;
  conf.set("topology.max.spout.pending", std::int64_t{2000});
  conf.set("topology.state.checkpointing", checkpoints);
  conf.set("topology.state.checkpoint.interval.ms", std::int64_t{interval_ms});
  const auto dir = std::filesystem::temp_directory_path() /
                   ("rstorm-bench-checkpoint-" + std::to_string(::getpid()));
  if (rocksdb) {
    conf.set("topology.state.provider", "rocksdb");
    conf.set("topology.state.rocksdb.dir", (dir / "state").string());
  }
  rstorm::LocalCluster cluster;
  if (auto s = cluster.submit("bench", conf, make_topology()); !s.is_ok()) {
    std::fprintf(stderr, "submit: %s\n", s.message().c_str());
    std::exit(1);
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  auto executed = [&] { return cluster.stats("bench")->component("count")->executed; };
  auto last = executed();
  auto last_at = Clock::now();
  Figure f;
  for (int i = 0; i < windows; ++i) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const auto n = executed();
    const auto now = Clock::now();
    f.all.push_back(static_cast<double>(n - last) /
                    std::chrono::duration<double>(now - last_at).count());
    last = n;
    last_at = now;
  }
  (void)cluster.kill("bench");
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::vector<double> sorted = f.all;
  std::sort(sorted.begin(), sorted.end());
  f.median = sorted[sorted.size() / 2];
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rstorm checkpoint bench: a stateful word count with checkpoints off and on"};
  int windows = 5;
  int interval_ms = 1000;
  app.add_option("--windows", windows, "One-second measurement windows per run (default 5)");
  app.add_option("--interval-ms", interval_ms, "topology.state.checkpoint.interval.ms (1000)");
  CLI11_PARSE(app, argc, argv);
  std::printf("rstorm-bench-checkpoint: sentences -> split (2) -> count (2, keyed state), %u "
              "hardware threads, checkpoints every %d ms when on\n",
              std::thread::hardware_concurrency(), interval_ms);
  for (bool rocksdb : {false, true}) {
    Figure off = measure(rocksdb, false, interval_ms, windows);
    Figure on = measure(rocksdb, true, interval_ms, windows);
    for (const auto* f : {&off, &on}) {
      std::printf("%-8s checkpoints %-3s: %6.3f M words/s counted (median of %d:", rocksdb ? "rocksdb" : "memory",
                  f == &off ? "off" : "on", f->median / 1e6, windows);
      for (double x : f->all) std::printf(" %.3f", x / 1e6);
      std::printf(")");
      if (f == &on && off.median > 0) std::printf("; %.2f of the same without", on.median / off.median);
      std::printf("\n");
    }
  }
  return 0;
}
