// A small topology library for the nimbus tests: sentences -> split -> count,
// with a resource request set from config (test.count.memory.mb).
#include <rstorm/rstorm.hpp>

namespace {
class Sentences : public rstorm::Spout {
 public:
  void open(const rstorm::Config&, const rstorm::TopologyContext&,
            rstorm::SpoutOutputCollector& c) override {
    out_ = &c;
  }
  void next_tuple() override { out_->emit({std::string("the cow jumped")}); }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"sentence"});
  }

 private:
  rstorm::SpoutOutputCollector* out_ = nullptr;
};

class Split : public rstorm::BasicBolt {
 public:
  void execute(const rstorm::Tuple&, rstorm::BasicOutputCollector&) override {}
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"word"});
  }
};

class Count : public rstorm::BasicBolt {
 public:
  void execute(const rstorm::Tuple&, rstorm::BasicOutputCollector&) override {}
  void declare_output_fields(rstorm::OutputFieldsDeclarer&) override {}
};
}  // namespace

RSTORM_TOPOLOGY(nimbus_test) {
  rstorm::TopologyBuilder b;
  b.set_spout(
      "sentences", [] { return std::make_unique<Sentences>(); }, 2);
  b.set_bolt(
       "split", [] { return std::make_unique<Split>(); }, 3)
      .shuffle_grouping("sentences");
  b.set_bolt(
       "count", [] { return std::make_unique<Count>(); }, 2)
      .fields_grouping("split", rstorm::Fields{"word"})
      .set_memory_load(static_cast<double>(config.get_int("test.count.memory.mb", 128)));
  return b.build();
}
