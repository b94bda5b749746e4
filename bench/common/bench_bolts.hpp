// The bolts of the throughput benches (bench/throughput in one process,
// bench/remote_throughput across two workers): IdBolt forwards its input's
// values ({seq, value}: two int64, the shape the ring baseline and peer
// engines are measured with), NullBolt is the sink. Header-only so that the bench executable and the
// remote bench's topology library share them.
#pragma once

#include <rstorm/rstorm.hpp>

namespace rstorm_bench {

class IdBolt : public rstorm::BasicBolt {
 public:
  void execute(const rstorm::Tuple& input, rstorm::BasicOutputCollector& out) override {
    out.emit(input.values());  // copied once, into the tuple sent
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"seq", "value"});
  }
};

class NullBolt : public rstorm::BasicBolt {
 public:
  void execute(const rstorm::Tuple&, rstorm::BasicOutputCollector&) override {}
  void declare_output_fields(rstorm::OutputFieldsDeclarer&) override {}
};

}  // namespace rstorm_bench
