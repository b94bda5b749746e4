// The topology the data plane tests submit (libdataplane_topology.so). It
// records what happened in files under `dataplane.out.dir`, written with
// write(2) before the tuple is acked, so that a kill -9 loses nothing that was
// acknowledged:
//   acks-<pid>.log           one line "<message id>" per spout ack
//   count-<task>-<pid>.log   one line "<word>" per word counted
//
// Config keys:
//   dataplane.shape          "wordcount" (default): sentences -> split (2,
//                            shuffle) -> count (2, fields "word");
//                            "slow": sentences -> slow (1, shuffle), a bolt
//                            that sleeps dataplane.slow.micros per tuple
//   dataplane.sentences      messages the spout emits (ids 0..n-1), then stops
//   dataplane.rate           messages per second at most (0: as fast as asked)
//   dataplane.payload.bytes  bytes of padding carried by every sentence tuple
//   dataplane.slow.micros    the slow bolt's delay per tuple
//   dataplane.out.dir        where the files go (REQUIRED)
//   dataplane.go.file        when set, the spout emits nothing until this file
//                            exists (so a test starts the input once every
//                            worker listens)
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <sstream>
#include <string>
#include <thread>

#include <rstorm/rstorm.hpp>

#include "topology_support.hpp"

namespace {

using Clock = std::chrono::steady_clock;

const char* const kSentences[] = {
    "the cow jumped over the moon",
    "an apple a day keeps the doctor away",
    "four score and seven years ago",
    "snow white and the seven dwarfs",
    "i am at two with nature",
};
constexpr std::int64_t kNumSentences = 5;

using rstorm::testing::int_of;
using rstorm::testing::RecordFile;
using rstorm::testing::string_of;

class SentenceSpout : public rstorm::Spout {
 public:
  void open(const rstorm::Config& conf, const rstorm::TopologyContext&,
            rstorm::SpoutOutputCollector& collector) override {
    out_ = &collector;
    limit_ = int_of(conf, "dataplane.sentences", 100);
    rate_ = int_of(conf, "dataplane.rate", 0);
    padding_.assign(static_cast<std::size_t>(int_of(conf, "dataplane.payload.bytes", 0)), 'x');
    acks_.open(string_of(conf, "dataplane.out.dir") + "/acks-" + std::to_string(::getpid()) + ".log");
    go_file_ = string_of(conf, "dataplane.go.file");
    start_ = Clock::now();
  }
  void next_tuple() override {
    if (!go_file_.empty()) {
      // Checked at most every 10 ms until it appears.
      const auto now = Clock::now();
      if (now < next_go_check_) return;
      next_go_check_ = now + std::chrono::milliseconds(10);
      if (::access(go_file_.c_str(), F_OK) != 0) return;
      go_file_.clear();
      start_ = now;
    }
    if (!replay_.empty()) {
      const std::int64_t id = replay_.front();
      replay_.pop_front();
      emit(id);
      return;
    }
    if (next_ >= limit_) return;
    if (rate_ > 0) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
      if (static_cast<double>(next_) >= elapsed * static_cast<double>(rate_)) return;
    }
    emit(next_++);
  }
  void ack(const rstorm::Value& id) override { acks_.write_line(std::to_string(id.as_int())); }
  void fail(const rstorm::Value& id) override { replay_.push_back(id.as_int()); }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"sentence", "padding"});
  }

 private:
  void emit(std::int64_t id) { out_->emit({kSentences[id % kNumSentences], padding_}, id); }

  rstorm::SpoutOutputCollector* out_ = nullptr;
  std::int64_t limit_ = 0, rate_ = 0, next_ = 0;
  std::string padding_;
  std::string go_file_;
  Clock::time_point next_go_check_;
  std::deque<std::int64_t> replay_;
  RecordFile acks_;
  Clock::time_point start_;
};

class SplitBolt : public rstorm::BasicBolt {
 public:
  void execute(const rstorm::Tuple& input, rstorm::BasicOutputCollector& out) override {
    std::istringstream words(input.get_string(0));
    std::string w;
    while (words >> w) out.emit({w});
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"word"});
  }
};

class CountBolt : public rstorm::BasicBolt {
 public:
  void prepare(const rstorm::Config& conf, const rstorm::TopologyContext& context) override {
    file_.open(string_of(conf, "dataplane.out.dir") + "/count-" +
               std::to_string(context.this_task().value) + "-" + std::to_string(::getpid()) + ".log");
  }
  void execute(const rstorm::Tuple& input, rstorm::BasicOutputCollector&) override {
    file_.write_line(input.get_string(0));
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer&) override {}

 private:
  RecordFile file_;
};

class SlowBolt : public rstorm::BasicBolt {
 public:
  void prepare(const rstorm::Config& conf, const rstorm::TopologyContext&) override {
    delay_ = std::chrono::microseconds(int_of(conf, "dataplane.slow.micros", 100));
  }
  void execute(const rstorm::Tuple&, rstorm::BasicOutputCollector&) override {
    std::this_thread::sleep_for(delay_);
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer&) override {}

 private:
  std::chrono::microseconds delay_{100};
};

}  // namespace

RSTORM_TOPOLOGY(dataplane_topology) {
  rstorm::TopologyBuilder b;
  b.set_spout("sentences", [] { return std::make_unique<SentenceSpout>(); }, 1);
  if (string_of(config, "dataplane.shape") == "slow") {
    b.set_bolt("slow", [] { return std::make_unique<SlowBolt>(); }, 1).shuffle_grouping("sentences");
  } else {
    b.set_bolt("split", [] { return std::make_unique<SplitBolt>(); }, 2).shuffle_grouping("sentences");
    b.set_bolt("count", [] { return std::make_unique<CountBolt>(); }, 2)
        .fields_grouping("split", rstorm::Fields{"word"});
  }
  return b.build();
}
