// Exclamation, Storm's starter topology: a spout of words and two bolts that
// each append "!!!" (word -> exclaim1 -> exclaim2). The last bolt keeps the
// latest result and prints it at cleanup.
// Config: exclamation.words.limit = emit this many words then stop (default 0: forever).
#include <cstdio>

#include <rstorm/rstorm.hpp>

namespace {

class WordSpout : public rstorm::Spout {
 public:
  void open(const rstorm::Config& conf, const rstorm::TopologyContext&,
            rstorm::SpoutOutputCollector& collector) override {
    out_ = &collector;
    limit_ = conf.get_int("exclamation.words.limit", 0);
  }
  void next_tuple() override {
    static const char* const kWords[] = {"nathan", "mike", "jackson", "golda", "bertels"};
    if (!replay_.empty()) {
      std::int64_t id = replay_.back();
      replay_.pop_back();
      out_->emit({kWords[id % 5]}, id);
      return;
    }
    if (limit_ > 0 && next_ >= limit_) return;
    out_->emit({kWords[next_ % 5]}, next_);
    ++next_;
  }
  void fail(const rstorm::Value& msg_id) override { replay_.push_back(msg_id.as_int()); }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"word"});
  }

 private:
  rstorm::SpoutOutputCollector* out_ = nullptr;
  std::int64_t limit_ = 0;
  std::int64_t next_ = 0;
  std::vector<std::int64_t> replay_;
};

class ExclamationBolt : public rstorm::Bolt {
 public:
  explicit ExclamationBolt(bool last) : last_(last) {}
  void prepare(const rstorm::Config&, const rstorm::TopologyContext&,
               rstorm::OutputCollector& collector) override {
    out_ = &collector;
  }
  void execute(const rstorm::Tuple& input) override {
    std::string word = input.get_string("word") + "!!!";
    if (last_) {
      latest_ = std::move(word);
      ++seen_;
    } else {
      out_->emit(input, {std::move(word)});
    }
    out_->ack(input);
  }
  void cleanup() override {
    if (last_ && seen_ > 0) {
      std::printf("exclamation: %lld words, latest '%s'\n", static_cast<long long>(seen_),
                  latest_.c_str());
      std::fflush(stdout);
    }
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"word"});
  }

 private:
  bool last_;
  rstorm::OutputCollector* out_ = nullptr;
  std::string latest_;
  std::int64_t seen_ = 0;
};

}  // namespace

RSTORM_TOPOLOGY(exclamation) {
  rstorm::TopologyBuilder b;
  b.set_spout("word", [] { return std::make_unique<WordSpout>(); }, 1);
  b.set_bolt("exclaim1", [] { return std::make_unique<ExclamationBolt>(false); }, 2)
      .shuffle_grouping("word");
  b.set_bolt("exclaim2", [] { return std::make_unique<ExclamationBolt>(true); }, 2)
      .shuffle_grouping("exclaim1");
  return b.build();
}
