// The remote throughput bench's topology: ConstSpout -> IdBolt -> NullBolt
// (one executor each, shuffle), as bench/throughput's. Config keys:
//   bench.reliable      emit with message ids (default true)
//   bench.rate          tuples per second offered (0: as fast as asked)
//   bench.latency.file  when set, the spout records complete latencies after
//                       bench.latency.warmup.secs and writes them there (one
//                       microsecond figure per line) when it closes
#include <chrono>
#include <fstream>
#include <vector>

#include <rstorm/rstorm.hpp>

#include "../common/bench_bolts.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t int_of(const rstorm::Config& c, const char* key, std::int64_t fallback) {
  const auto* e = c.find(key);
  return e == nullptr || e->value.is_null() ? fallback : c.get_int(key);
}

class ConstSpout : public rstorm::Spout {
 public:
  void open(const rstorm::Config& conf, const rstorm::TopologyContext&,
            rstorm::SpoutOutputCollector& c) override {
    out_ = &c;
    reliable_ = int_of(conf, "bench.reliable", 1) != 0;
    rate_ = static_cast<double>(int_of(conf, "bench.rate", 0));
    const auto* f = conf.find("bench.latency.file");
    if (f != nullptr && !f->value.is_null()) latency_file_ = conf.get_string("bench.latency.file");
    start_ = Clock::now();
    record_after_ = start_ + std::chrono::seconds(int_of(conf, "bench.latency.warmup.secs", 2));
    if (!latency_file_.empty()) {
      sent_at_.resize(1 << 20);
      micros_.reserve(4 << 20);
    }
  }
  void next_tuple() override {
    if (rate_ <= 0) {
      emit_one();
      return;
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const auto due = static_cast<std::int64_t>(elapsed * rate_);
    for (int i = 0; i < 64 && seq_ < due; ++i) emit_one();
  }
  void ack(const rstorm::Value& id) override {
    if (latency_file_.empty()) return;
    const auto now = Clock::now();
    if (now < record_after_) return;
    const auto sent = sent_at_[static_cast<std::size_t>(id.as_int()) & (sent_at_.size() - 1)];
    micros_.push_back(std::chrono::duration<float, std::micro>(now - sent).count());
  }
  void close() override {
    if (latency_file_.empty()) return;
    std::ofstream out(latency_file_);
    for (float m : micros_) out << m << "\n";
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"seq", "value"});
  }

 private:
  void emit_one() {
    if (reliable_) {
      if (!latency_file_.empty()) {
        sent_at_[static_cast<std::size_t>(seq_) & (sent_at_.size() - 1)] = Clock::now();
      }
      out_->emit({seq_, std::int64_t{42}}, seq_);
    } else {
      out_->emit({seq_, std::int64_t{42}});
    }
    ++seq_;
  }

  rstorm::SpoutOutputCollector* out_ = nullptr;
  bool reliable_ = true;
  double rate_ = 0;
  std::string latency_file_;
  Clock::time_point start_, record_after_;
  std::int64_t seq_ = 0;
  std::vector<Clock::time_point> sent_at_;
  std::vector<float> micros_;
};

using rstorm_bench::IdBolt;
using rstorm_bench::NullBolt;

}  // namespace

RSTORM_TOPOLOGY(remote_bench) {
  rstorm::TopologyBuilder b;
  b.set_spout("spout", [] { return std::make_unique<ConstSpout>(); });
  b.set_bolt("id", [] { return std::make_unique<IdBolt>(); }).shuffle_grouping("spout");
  b.set_bolt("sink", [] { return std::make_unique<NullBolt>(); }).shuffle_grouping("id");
  return b.build();
}
