// A minimal topology library for the loader tests.
#include <rstorm/rstorm.hpp>

namespace {
class NumberSpout : public rstorm::Spout {
 public:
  void open(const rstorm::Config&, const rstorm::TopologyContext&,
            rstorm::SpoutOutputCollector& c) override {
    out_ = &c;
  }
  void next_tuple() override { out_->emit({n_++}); }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"n"});
  }

 private:
  rstorm::SpoutOutputCollector* out_ = nullptr;
  std::int64_t n_ = 0;
};

class Sink : public rstorm::BasicBolt {
 public:
  void execute(const rstorm::Tuple&, rstorm::BasicOutputCollector&) override {}
  void declare_output_fields(rstorm::OutputFieldsDeclarer&) override {}
};
}  // namespace

RSTORM_TOPOLOGY(good) {
  rstorm::TopologyBuilder b;
  int sinks = static_cast<int>(config.get_int("test.sinks", 2));
  b.set_spout("numbers", [] { return std::make_unique<NumberSpout>(); });
  b.set_bolt("sink", [] { return std::make_unique<Sink>(); }, sinks).shuffle_grouping("numbers");
  return b.build();
}
