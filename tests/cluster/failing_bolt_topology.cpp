// A test topology whose bolt fails on known inputs: "numbers" emits 0..19
// once, "picky" reports an error for 3 and throws for 7. The cluster test
// submits it and expects both errors in `rstorm describe`.
//
// With `failing_bolt.block.file` set, "numbers" emits reliable tuples without
// end instead, and "picky" blocks in execute on its first input until that
// file exists (the stall test: trees pending, nothing completes).
//
// With `failing_bolt.prepare.throw: true`, "picky"'s prepare throws: its
// worker cannot run (the failing-worker test). With
// `failing_bolt.execute.crash: true`, it raises SIGSEGV on input 5 (the
// crashed-worker test).
#include <unistd.h>

#include <csignal>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include <rstorm/topology_builder.hpp>
#include <rstorm/topology_library.hpp>

namespace {

class NumberSpout : public rstorm::Spout {
 public:
  void open(const rstorm::Config& config, const rstorm::TopologyContext&,
            rstorm::SpoutOutputCollector& collector) override {
    out_ = &collector;
    endless_ = !config.get_string("failing_bolt.block.file", "").empty();
  }
  void next_tuple() override {
    if (endless_) {
      const std::int64_t n = next_++;
      out_->emit({n}, rstorm::Value(n));
    } else if (next_ < 20) {
      out_->emit({next_++});
    }
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& declarer) override {
    declarer.declare(rstorm::Fields{"n"});
  }

 private:
  rstorm::SpoutOutputCollector* out_ = nullptr;
  std::int64_t next_ = 0;
  bool endless_ = false;
};

class PickyBolt : public rstorm::BasicBolt {
 public:
  void prepare(const rstorm::Config& config, const rstorm::TopologyContext&) override {
    block_file_ = config.get_string("failing_bolt.block.file", "");
    crash_ = config.get_bool("failing_bolt.execute.crash", false);
    if (config.get_bool("failing_bolt.prepare.throw", false)) {
      throw std::runtime_error("cannot open the database");
    }
  }
  void execute(const rstorm::Tuple& input, rstorm::BasicOutputCollector& out) override {
    while (!block_file_.empty() && ::access(block_file_.c_str(), F_OK) != 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const std::int64_t n = input.get_int(0);
    if (n == 3) out.report_error("value 3 is unlucky");
    if (n == 5 && crash_) std::raise(SIGSEGV);
    if (n == 7) throw std::runtime_error("bad input 7");
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer&) override {}

 private:
  std::string block_file_;
  bool crash_ = false;
};

}  // namespace

RSTORM_TOPOLOGY(failing_bolt) {
  rstorm::TopologyBuilder b;
  b.set_spout("numbers", [] { return std::make_unique<NumberSpout>(); }, 1);
  b.set_bolt("picky", [] { return std::make_unique<PickyBolt>(); }, 1).shuffle_grouping("numbers");
  return b.build();
}
