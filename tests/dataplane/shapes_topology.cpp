// The topology shapes the deadlock matrix submits (libshapes_topology.so,
// tests/dataplane/deadlock_matrix_test.cpp): the graphs users write, where a
// data plane that waits on the wrong thing wedges.
//
// Config keys:
//   shapes.shape        "cycle"      spout -> A (shuffle); A -> B on "fwd" (shuffle);
//                                    B -> A on "back" (shuffle). A re-emits only
//                                    spout tuples, so every tree ends at A. A and B
//                                    have 2 executors each.
//                       "diamond"    spout -> left, right (shuffle) -> join (2, shuffle
//                                    from both)
//                       "fanin-slow" spout1, spout2, spout3 -> slow (1, shuffle), which
//                                    sleeps shapes.slow.micros per tuple
//                       "fanout100"  spout -> fan (2, shuffle) emitting shapes.fanout
//                                    anchored tuples per input -> sink (2, shuffle)
//   shapes.messages     messages each spout emits (ids 0..n-1), then stops;
//                       0 (default): emits forever
//   shapes.slow.micros  the slow bolt's sleep per tuple (default 1000)
//   shapes.fanout       tuples "fan" emits per input (default 100)
//   shapes.out.dir      when set and the input is finite, each spout task
//                       writes one line "<id>" per ack to
//                       acks-<component>-<task>-<pid>.log (write(2) before ack returns)
//   shapes.go.file      when set, spouts emit nothing until this file exists
//
// Every bolt is a BasicBolt: emits are anchored and inputs acked on return.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <string>
#include <thread>

#include <rstorm/rstorm.hpp>

#include "topology_support.hpp"

namespace {

using Clock = std::chrono::steady_clock;

using rstorm::testing::int_of;
using rstorm::testing::RecordFile;
using rstorm::testing::string_of;

// Emits {id} with message id `id`, 0..n-1 (or forever), replaying failures.
class NumberSpout : public rstorm::Spout {
 public:
  void open(const rstorm::Config& conf, const rstorm::TopologyContext& context,
            rstorm::SpoutOutputCollector& collector) override {
    out_ = &collector;
    limit_ = int_of(conf, "shapes.messages", 0);
    go_file_ = string_of(conf, "shapes.go.file");
    const std::string dir = string_of(conf, "shapes.out.dir");
    if (limit_ > 0 && !dir.empty()) {
      acks_.open(dir + "/acks-" + context.component_id() + "-" +
                 std::to_string(context.this_task().value) + "-" + std::to_string(::getpid()) +
                 ".log");
    }
  }
  void next_tuple() override {
    if (!go_file_.empty()) {
      const auto now = Clock::now();
      if (now < next_go_check_) return;
      next_go_check_ = now + std::chrono::milliseconds(10);
      if (::access(go_file_.c_str(), F_OK) != 0) return;
      go_file_.clear();
    }
    if (!replay_.empty()) {
      const std::int64_t id = replay_.front();
      replay_.pop_front();
      out_->emit({id}, id);
      return;
    }
    if (limit_ > 0 && next_ >= limit_) return;
    const std::int64_t id = next_++;
    out_->emit({id}, id);
  }
  void ack(const rstorm::Value& id) override {
    if (acks_.is_open()) acks_.write_line(std::to_string(id.as_int()));
  }
  void fail(const rstorm::Value& id) override { replay_.push_back(id.as_int()); }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"id"});
  }

 private:
  rstorm::SpoutOutputCollector* out_ = nullptr;
  std::int64_t limit_ = 0, next_ = 0;
  std::string go_file_;
  Clock::time_point next_go_check_;
  std::deque<std::int64_t> replay_;
  RecordFile acks_;
};

// Re-emits its input on `stream` (default stream when empty).
class PassBolt : public rstorm::BasicBolt {
 public:
  explicit PassBolt(std::string stream = "") : stream_(std::move(stream)) {}
  void execute(const rstorm::Tuple& input, rstorm::BasicOutputCollector& out) override {
    if (stream_.empty()) {
      out.emit({input.get(0)});
    } else {
      out.emit(stream_, {input.get(0)});
    }
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    if (stream_.empty()) {
      d.declare(rstorm::Fields{"id"});
    } else {
      d.declare_stream(stream_, rstorm::Fields{"id"});
    }
  }

 private:
  std::string stream_;
};

// Cycle head: spout tuples go on to B on "fwd"; "back" tuples from B end here.
class CycleA : public rstorm::BasicBolt {
 public:
  void execute(const rstorm::Tuple& input, rstorm::BasicOutputCollector& out) override {
    if (input.source_stream() == "back") return;  // acked on return, the tree ends
    out.emit("fwd", {input.get(0)});
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare_stream("fwd", rstorm::Fields{"id"});
  }
};

class SinkBolt : public rstorm::BasicBolt {
 public:
  void execute(const rstorm::Tuple&, rstorm::BasicOutputCollector&) override {}
  void declare_output_fields(rstorm::OutputFieldsDeclarer&) override {}
};

class SlowBolt : public rstorm::BasicBolt {
 public:
  void prepare(const rstorm::Config& conf, const rstorm::TopologyContext&) override {
    delay_ = std::chrono::microseconds(int_of(conf, "shapes.slow.micros", 1000));
  }
  void execute(const rstorm::Tuple&, rstorm::BasicOutputCollector&) override {
    std::this_thread::sleep_for(delay_);
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer&) override {}

 private:
  std::chrono::microseconds delay_{1000};
};

class FanBolt : public rstorm::BasicBolt {
 public:
  void prepare(const rstorm::Config& conf, const rstorm::TopologyContext&) override {
    fanout_ = int_of(conf, "shapes.fanout", 100);
  }
  void execute(const rstorm::Tuple& input, rstorm::BasicOutputCollector& out) override {
    const std::int64_t id = input.get_int(0);
    for (std::int64_t i = 0; i < fanout_; ++i) out.emit({id, i});
  }
  void declare_output_fields(rstorm::OutputFieldsDeclarer& d) override {
    d.declare(rstorm::Fields{"id", "n"});
  }

 private:
  std::int64_t fanout_ = 100;
};

std::unique_ptr<rstorm::Spout> spout() { return std::make_unique<NumberSpout>(); }

}  // namespace

RSTORM_TOPOLOGY(shapes_topology) {
  const std::string shape = string_of(config, "shapes.shape");
  rstorm::TopologyBuilder b;
  if (shape == "cycle") {
    b.set_spout("spout", spout, 1);
    b.set_bolt("A", [] { return std::make_unique<CycleA>(); }, 2)
        .shuffle_grouping("spout")
        .shuffle_grouping("B", "back");
    b.set_bolt("B", [] { return std::make_unique<PassBolt>("back"); }, 2)
        .shuffle_grouping("A", "fwd");
  } else if (shape == "diamond") {
    b.set_spout("spout", spout, 1);
    b.set_bolt("left", [] { return std::make_unique<PassBolt>(); }, 1).shuffle_grouping("spout");
    b.set_bolt("right", [] { return std::make_unique<PassBolt>(); }, 1).shuffle_grouping("spout");
    b.set_bolt("join", [] { return std::make_unique<SinkBolt>(); }, 2)
        .shuffle_grouping("left")
        .shuffle_grouping("right");
  } else if (shape == "fanin-slow") {
    b.set_spout("spout1", spout, 1);
    b.set_spout("spout2", spout, 1);
    b.set_spout("spout3", spout, 1);
    b.set_bolt("slow", [] { return std::make_unique<SlowBolt>(); }, 1)
        .shuffle_grouping("spout1")
        .shuffle_grouping("spout2")
        .shuffle_grouping("spout3");
  } else if (shape == "fanout100") {
    b.set_spout("spout", spout, 1);
    b.set_bolt("fan", [] { return std::make_unique<FanBolt>(); }, 2).shuffle_grouping("spout");
    b.set_bolt("sink", [] { return std::make_unique<SinkBolt>(); }, 2).shuffle_grouping("fan");
  } else {
    throw std::invalid_argument("shapes.shape must be cycle, diamond, fanin-slow or fanout100, not '" +
                                shape + "'");
  }
  return b.build();
}