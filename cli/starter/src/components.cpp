#include "components.hpp"

#include <cstdio>

namespace __NAME__ {

void NumberSpout::open(const rstorm::Config& conf, const rstorm::TopologyContext&,
                       rstorm::SpoutOutputCollector& collector) {
  out_ = &collector;
  limit_ = conf.get_int("__NAME__.numbers", 1000);
}

void NumberSpout::next_tuple() {
  std::int64_t n;
  if (!replay_.empty()) {
    n = replay_.back();
    replay_.pop_back();
  } else if (next_ <= limit_) {
    n = next_++;
  } else {
    if (outstanding_ == 0) out_->finish();  // a bounded source: every number is acked
    return;
  }
  out_->emit({n}, n);  // the number is also its message id
  ++outstanding_;
}

void NumberSpout::ack(const rstorm::Value&) { --outstanding_; }

void NumberSpout::fail(const rstorm::Value& msg_id) {
  --outstanding_;
  replay_.push_back(msg_id.as_int());
}

void NumberSpout::declare_output_fields(rstorm::OutputFieldsDeclarer& declarer) {
  declarer.declare(rstorm::Fields{"n"});
}

void ParityBolt::execute(const rstorm::Tuple& input, rstorm::BasicOutputCollector& out) {
  const std::int64_t n = input.get_int("n");
  out.emit({std::string(n % 2 == 0 ? "even" : "odd"), n});
}

void ParityBolt::declare_output_fields(rstorm::OutputFieldsDeclarer& declarer) {
  declarer.declare(rstorm::Fields{"parity", "n"});
}

void TotalsBolt::execute(const rstorm::Tuple& input, rstorm::BasicOutputCollector& out) {
  const std::string& parity = input.get_string("parity");
  std::int64_t& sum = sums_[parity];
  sum += input.get_int("n");
  out.emit({parity, sum});
}

void TotalsBolt::cleanup() {
  for (const auto& [parity, sum] : sums_) std::printf("__NAME__: %s sum %lld\n", parity.c_str(), static_cast<long long>(sum));
  std::fflush(stdout);
}

void TotalsBolt::declare_output_fields(rstorm::OutputFieldsDeclarer& declarer) {
  declarer.declare(rstorm::Fields{"parity", "sum"});
}

rstorm::api::Result<rstorm::Topology> build_topology() {
  rstorm::TopologyBuilder b;
  b.set_spout("numbers", [] { return std::make_unique<NumberSpout>(); }, 1);
  b.set_bolt("parity", [] { return std::make_unique<ParityBolt>(); }, 2).shuffle_grouping("numbers");
  b.set_bolt("totals", [] { return std::make_unique<TotalsBolt>(); }, 2)
      .fields_grouping("parity", rstorm::Fields{"parity"});
  return b.build();
}

}  // namespace __NAME__
