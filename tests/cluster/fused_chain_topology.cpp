// A test topology that fuses with topology.fuse.executors: "numbers" (2)
// emits reliable tuples without end, "double" (2) and "sink" (2) follow it by
// local-or-shuffle, each with the parallelism of its producer. The cluster
// test submits it fused and expects `rstorm describe` to show the chain.
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
    const std::int64_t n = next_++;
    out_->emit({n}, rstorm::Value(n));
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& declarer) override {
    declarer.declare(rstorm::Fields{"n"});
  }

 private:
  rstorm::SpoutOutputCollector* out_ = nullptr;
  std::int64_t next_ = 0;
};

class DoubleBolt : public rstorm::BasicBolt {
 public:
  void execute(const rstorm::Tuple& input, rstorm::BasicOutputCollector& out) override {
    out.emit({2 * input.get_int(0)});
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& declarer) override {
    declarer.declare(rstorm::Fields{"n"});
  }
};

class SinkBolt : public rstorm::BasicBolt {
 public:
  void execute(const rstorm::Tuple&, rstorm::BasicOutputCollector&) override {}
  void declare_output_fields(rstorm::OutputFieldsDeclarer&) override {}
};

}  // namespace

RSTORM_TOPOLOGY(fused_chain) {
  rstorm::TopologyBuilder b;
  b.set_spout(
      "numbers", [] { return std::make_unique<NumberSpout>(); }, 2);
  b.set_bolt(
       "double", [] { return std::make_unique<DoubleBolt>(); }, 2)
      .local_or_shuffle_grouping("numbers");
  b.set_bolt(
       "sink", [] { return std::make_unique<SinkBolt>(); }, 2)
      .local_or_shuffle_grouping("double");
  return b.build();
}
