// A topology whose bolt keeps keyed state (libkeyed_state_topology.so), built
// as users build theirs (rstorm_add_topology: hidden visibility), for the
// worker process's state test: "words" emits keyedstate.words words
// "w<i mod 7>" once, reliably; "count" (2 tasks, fields grouping on "word")
// counts them in its keyed state "counts".
#include <rstorm/rstorm.hpp>

namespace {

std::string word(std::int64_t i) { return "w" + std::to_string(i % 7); }

class WordSpout : public rstorm::Spout {
 public:
  void open(const rstorm::Config& config, const rstorm::TopologyContext&,
            rstorm::SpoutOutputCollector& collector) override {
    limit_ = config.get_int("keyedstate.words", 1000);
    out_ = &collector;
  }
  void next_tuple() override {
    if (next_ >= limit_) return;
    out_->emit({word(next_)}, next_);
    ++next_;
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"word"});
  }

 private:
  rstorm::SpoutOutputCollector* out_ = nullptr;
  std::int64_t limit_ = 0;
  std::int64_t next_ = 0;
};

class CountBolt : public rstorm::BasicBolt {
 public:
  void prepare(const rstorm::Config&, const rstorm::TopologyContext& context) override {
    counts_ = context.key_value_state<std::string, std::int64_t>("counts");
  }
  void execute(const rstorm::Tuple& input, rstorm::BasicOutputCollector&) override {
    const std::string& w = input.get_string("word");
    counts_.put(w, counts_.get(w, 0) + 1);
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer&) override {}

 private:
  rstorm::KeyValueState<std::string, std::int64_t> counts_;
};

}  // namespace

RSTORM_TOPOLOGY(keyed_state) {
  rstorm::TopologyBuilder b;
  b.set_spout("words", [] { return std::make_unique<WordSpout>(); });
  b.set_bolt(
       "count", [] { return std::make_unique<CountBolt>(); }, 2)
      .fields_grouping("words", rstorm::Fields{"word"});
  return b.build();
}
