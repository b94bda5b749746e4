// A test topology whose bolt fails on known inputs: "numbers" emits 0..19
// once, "picky" reports an error for 3 and throws for 7. The cluster test
// submits it and expects both errors in `rstorm describe`.
#include <stdexcept>
#include <string>

#include <rstorm/topology_builder.hpp>
#include <rstorm/topology_library.hpp>

namespace {

class NumberSpout : public rstorm::Spout {
 public:
  void open(const rstorm::Config&, const rstorm::TopologyContext&,
            rstorm::SpoutOutputCollector& collector) override {
    out_ = &collector;
  }
  void next_tuple() override {
    if (next_ < 20) out_->emit({next_++});
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& declarer) override {
    declarer.declare(rstorm::Fields{"n"});
  }

 private:
  rstorm::SpoutOutputCollector* out_ = nullptr;
  std::int64_t next_ = 0;
};

class PickyBolt : public rstorm::BasicBolt {
 public:
  void execute(const rstorm::Tuple& input, rstorm::BasicOutputCollector& out) override {
    const std::int64_t n = input.get_int(0);
    if (n == 3) out.report_error("value 3 is unlucky");
    if (n == 7) throw std::runtime_error("bad input 7");
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer&) override {}
};

}  // namespace

RSTORM_TOPOLOGY(failing_bolt) {
  rstorm::TopologyBuilder b;
  b.set_spout("numbers", [] { return std::make_unique<NumberSpout>(); }, 1);
  b.set_bolt("picky", [] { return std::make_unique<PickyBolt>(); }, 1).shuffle_grouping("numbers");
  return b.build();
}
