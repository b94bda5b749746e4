// The paper's Linear topology, network-bound version, built with the topology
// API into a shared library: `rstorm schedule` loads it like a user's topology.
#include <rstorm/rstorm.hpp>

namespace {

class ConstSpout : public rstorm::Spout {
 public:
  void open(const rstorm::Config&, const rstorm::TopologyContext&,
            rstorm::SpoutOutputCollector&) override {}
  void next_tuple() override {}
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override { d.declare({"text"}); }
};

class ForwardBolt : public rstorm::BasicBolt {
 public:
  void execute(const rstorm::Tuple&, rstorm::BasicOutputCollector&) override {}
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override { d.declare({"text"}); }
};

}  // namespace

RSTORM_TOPOLOGY(linear) {
  rstorm::TopologyBuilder b;
  b.set_spout(
       "spout", [] { return std::make_unique<ConstSpout>(); }, 8)
      .set_cpu_load(40);
  std::string previous = "spout";
  for (const char* id : {"b1", "b2", "b3"}) {
    b.set_bolt(id, rstorm::BasicBoltFactory([] { return std::make_unique<ForwardBolt>(); }), 4)
        .set_cpu_load(20)
        .shuffle_grouping(previous);
    previous = id;
  }
  return b.build();
}
