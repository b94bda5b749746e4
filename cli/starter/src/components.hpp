// The spout and bolts of __NAME__.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <rstorm/rstorm.hpp>

namespace __NAME__ {

// Emits the numbers 1..N (config __NAME__.numbers) as reliable tuples, replays
// the ones that fail, and says it is finished once every one is acked.
class NumberSpout : public rstorm::Spout {
 public:
  void open(const rstorm::Config& conf, const rstorm::TopologyContext& context,
            rstorm::SpoutOutputCollector& collector) override;
  void next_tuple() override;
  void ack(const rstorm::Value& msg_id) override;
  void fail(const rstorm::Value& msg_id) override;
  void declare_output_fields(rstorm::OutputFieldsDeclarer& declarer) override;

 private:
  rstorm::SpoutOutputCollector* out_ = nullptr;
  std::int64_t limit_ = 1000;
  std::int64_t next_ = 1;
  std::int64_t outstanding_ = 0;
  std::vector<std::int64_t> replay_;
};

// ("n") -> ("parity", "n"): parity is "odd" or "even".
class ParityBolt : public rstorm::BasicBolt {
 public:
  void execute(const rstorm::Tuple& input, rstorm::BasicOutputCollector& out) override;
  void declare_output_fields(rstorm::OutputFieldsDeclarer& declarer) override;
};

// ("parity", "n") -> ("parity", "sum"): the running sum of its parity.
class TotalsBolt : public rstorm::BasicBolt {
 public:
  void execute(const rstorm::Tuple& input, rstorm::BasicOutputCollector& out) override;
  void cleanup() override;
  void declare_output_fields(rstorm::OutputFieldsDeclarer& declarer) override;

 private:
  std::map<std::string, std::int64_t> sums_;
};

rstorm::api::Result<rstorm::Topology> build_topology();

}  // namespace __NAME__
