// Windowed bolts: the adapter driven by hand (a fake collector, a clock the
// test moves), each window checked against one computed independently from
// the definition in rstorm/windowed_bolt.hpp; and the builder's checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <rstorm/rstorm.hpp>
#include <set>

namespace rstorm {
namespace {

using Ids = std::vector<std::int64_t>;

struct Activation {
  Ids all, fresh, expired;
  std::int64_t start = 0, end = 0;
  friend bool operator==(const Activation&, const Activation&) = default;
};

std::ostream& operator<<(std::ostream& os, const Activation& a) {
  auto list = [&](const Ids& ids) {
    os << "[";
    for (auto i : ids) os << i << " ";
    os << "]";
  };
  os << "window [" << a.start << ", " << a.end << ") all ";
  list(a.all);
  os << " new ";
  list(a.fresh);
  os << " expired ";
  list(a.expired);
  return os;
}

Ids ids_of(const std::vector<const Tuple*>& tuples) {
  Ids out;
  for (const Tuple* t : tuples) out.push_back(t->get_int("id"));
  return out;
}

// Records every activation; emits the sum of the window's ids.
class Recorder : public WindowedBolt {
 public:
  explicit Recorder(std::vector<Activation>* out, bool throw_on_execute = false)
      : out_(out), throw_(throw_on_execute) {}
  void prepare(const Config&, const TopologyContext&, OutputCollector& c) override {
    collector_ = &c;
  }
  void execute(const TupleWindow& w) override {
    out_->push_back(Activation{ids_of(w.get()), ids_of(w.get_new()), ids_of(w.get_expired()),
                               w.start_timestamp(), w.end_timestamp()});
    if (throw_) throw std::runtime_error("bad window");
    std::int64_t sum = 0;
    for (const Tuple* t : w.get()) sum += t->get_int("id");
    collector_->emit(Values{sum});
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields{"sum"}); }

 private:
  std::vector<Activation>* out_;
  bool throw_;
  OutputCollector* collector_ = nullptr;
};

struct Emitted {
  std::string stream;
  Values values;
  std::size_t anchors;
};

class FakeCollector : public OutputCollector {
 public:
  void emit_to(std::string_view stream, const Tuple* const*, std::size_t num_anchors,
               Values&& values, TaskId) override {
    emitted.push_back(Emitted{std::string(stream), std::move(values), num_anchors});
  }
  void ack(const Tuple& t) override {
    if (t.completed()) return;
    t.mark_completed();
    acked.push_back(t.get_int("id"));
  }
  void fail(const Tuple& t) override {
    if (t.completed()) return;
    t.mark_completed();
    failed.push_back(t.get_int("id"));
  }
  void report_error(std::string_view m) override { errors.emplace_back(m); }

  std::vector<Emitted> emitted;
  Ids acked, failed;
  std::vector<std::string> errors;
};

// One windowed bolt instance under test, with its clock.
class Harness {
 public:
  // `state`: the task's state backend (an in-memory one by default).
  explicit Harness(Config conf, bool throw_on_execute = false,
                   std::shared_ptr<StateBackend> state = nullptr, std::int64_t start = 1'000'000)
      : now(start) {
    bolt_ = detail::adapt_windowed_bolt(std::make_unique<Recorder>(&activations, throw_on_execute),
                                        [this] { return now; });
    context_ = std::make_unique<TopologyContext>(
        "t", "win", TaskId(9), 0, std::make_shared<TaskLayout>(), nullptr, std::move(state));
    bolt_->prepare(conf, *context_, collector);
    timed_ = dynamic_cast<TimedBolt*>(bolt_.get());
  }
  // What a checkpoint of this task holds: its store after pre_checkpoint, in
  // a new backend that a restored task starts on.
  std::shared_ptr<StateBackend> checkpoint() {
    bolt_->pre_checkpoint(1);
    auto backend = std::make_shared<InMemoryStateBackend>();
    std::vector<StateWrite> writes;
    for (auto& [key, value] : store()->scan_prefix("")) writes.push_back({key, value});
    backend->open(TaskId(9), "win")->apply(writes);
    return backend;
  }

  void send(std::int64_t id, std::int64_t ts = 0, int source_task = 1) {
    bolt_->execute(Tuple(&info_, TaskId(source_task), Values{id, ts}));
  }
  void timer() { timed_->on_timer(); }
  std::shared_ptr<StateStore> store() const { return context_->state_store(); }
  // Tuples spilled to the task's state store so far.
  std::uint64_t spilled() const { return context_->counter("window_spilled_tuples").value(); }
  std::chrono::milliseconds period() const { return timed_->timer_period(); }

  std::int64_t now;
  std::vector<Activation> activations;
  FakeCollector collector;

 private:
  StreamInfo info_{"src", "default", Fields{"id", "ts"}};
  std::unique_ptr<Bolt> bolt_;
  std::unique_ptr<TopologyContext> context_;
  TimedBolt* timed_ = nullptr;
};

// The windows' definition tests run twice: every tuple in memory, and with
// at most 7 in memory (the rest spilled to the task's state store, in chunks
// that do not line up with the windows).
constexpr std::int64_t kAllInMemory = 0;
Config with_memory(Config c, std::int64_t max_in_memory) {
  if (max_in_memory > 0) {
    c.set(std::string(keys::kWindowMaxTuplesInMemory), max_in_memory);
  }
  return c;
}

Config window_config(WindowSize length, WindowSize slide) {
  Config c;
  c.set(std::string(length.unit == WindowSize::Unit::kCount ? keys::kWindowLengthCount
                                                            : keys::kWindowLengthDurationMs),
        length.value);
  c.set(
      std::string(slide.unit == WindowSize::Unit::kCount ? keys::kWindowSlidingIntervalCount
                                                         : keys::kWindowSlidingIntervalDurationMs),
      slide.value);
  return c;
}

// new = in this window, not the last; expired = in the last, not this one.
// Empty windows are not activated.
std::vector<Activation> with_deltas(const std::vector<Activation>& windows) {
  std::vector<Activation> out;
  Ids prev;
  for (Activation a : windows) {
    if (a.all.empty()) continue;
    std::set<std::int64_t> p(prev.begin(), prev.end()), cur(a.all.begin(), a.all.end());
    a.fresh.clear();
    a.expired.clear();
    for (auto id : a.all) {
      if (!p.count(id)) a.fresh.push_back(id);
    }
    for (auto id : prev) {
      if (!cur.count(id)) a.expired.push_back(id);
    }
    prev = a.all;
    out.push_back(a);
  }
  return out;
}

TEST(WindowedBolt, CountTumblingInProcessingTime) {
  Harness h(window_config(Count(3), Count(3)));
  EXPECT_EQ(h.period().count(), 0);  // no timer needed
  for (int i = 0; i < 10; ++i) h.send(i);
  std::vector<Activation> expected = {{{0, 1, 2}, {0, 1, 2}, {}, h.now, h.now + 1},
                                      {{3, 4, 5}, {3, 4, 5}, {0, 1, 2}, h.now, h.now + 1},
                                      {{6, 7, 8}, {6, 7, 8}, {3, 4, 5}, h.now, h.now + 1}};
  EXPECT_EQ(h.activations, expected);
  // A tuple is acked once no later window can hold it: a tumbling window's
  // as soon as it was processed (0-8; a finite stream's last full window
  // needs no next one), 9 not yet.
  EXPECT_EQ(h.collector.acked, (Ids{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  // The sums, each anchored to the 3 tuples of its window.
  ASSERT_EQ(h.collector.emitted.size(), 3u);
  EXPECT_EQ(h.collector.emitted[2].values[0].as_int(), 6 + 7 + 8);
  EXPECT_EQ(h.collector.emitted[2].anchors, 3u);
}

TEST(WindowedBolt, CountSlidingMatchesTheDefinition) {
  for (std::int64_t memory : {kAllInMemory, std::int64_t{7}})
    for (auto [length, slide] : {std::pair{5, 2}, {3, 5}, {4, 1}, {7, 7}, {30, 9}}) {
      SCOPED_TRACE("length " + std::to_string(length) + " slide " + std::to_string(slide) +
                   " memory " + std::to_string(memory));
      Harness h(with_memory(window_config(Count(length), Count(slide)), memory));
      const int n = 40;
      std::vector<Activation> expected;
      for (int i = 0; i < n; ++i) {
        h.send(i);
        if ((i + 1) % slide == 0) {
          Activation a;
          for (int j = std::max(0, i + 1 - length); j <= i; ++j) a.all.push_back(j);
          a.start = h.now;
          a.end = h.now + 1;
          expected.push_back(a);
        }
      }
      EXPECT_EQ(h.activations, with_deltas(expected));
      // Acked: every tuple before the next window's first, which no later
      // window holds (the next ends `slide` later and holds `length`).
      const std::int64_t last_end = h.activations.back().all.back() + 1;
      const std::int64_t next_first = std::min<std::int64_t>(last_end, last_end + slide - length);
      Ids acked;
      for (int i = 0; i < next_first; ++i) acked.push_back(i);
      EXPECT_EQ(h.collector.acked, acked);
      if (memory != kAllInMemory && length > memory) {
        EXPECT_GT(h.spilled(), 0u);
      }
    }
}

TEST(WindowedBolt, DurationSlidingInProcessingTime) {
  // Length 300 ms sliding by 100 ms; tuples arrive at random times; the timer
  // runs at random moments. Window ending at T: arrival in [T - 300, T).
  for (std::int64_t memory : {kAllInMemory, std::int64_t{7}}) {
    SCOPED_TRACE("memory " + std::to_string(memory));
    std::mt19937 rng(7);
    Harness h(with_memory(window_config(Duration(300), Duration(100)), memory));
    EXPECT_EQ(h.period().count(), 100);
    std::vector<std::pair<std::int64_t, std::int64_t>> arrivals;  // id, time
    const std::int64_t t0 = h.now;
    for (int id = 0; id < 200; ++id) {
      h.now += std::uniform_int_distribution<int>(0, 15)(rng);
      if (id % 37 == 0) h.now += 450;  // gaps: empty and repeated windows
      h.send(id);
      arrivals.emplace_back(id, h.now);
      if (std::uniform_int_distribution<int>(0, 9)(rng) == 0) h.timer();
    }
    h.now += 1000;
    h.timer();
    std::vector<Activation> expected;
    for (std::int64_t end = (t0 / 100 + 1) * 100; end <= h.now; end += 100) {
      Activation a;
      for (auto [id, at] : arrivals) {
        if (at >= end - 300 && at < end) a.all.push_back(id);
      }
      a.start = end - 300;
      a.end = end;
      expected.push_back(a);
    }
    EXPECT_EQ(h.activations, with_deltas(expected));
    // Everything left the last window: every tuple acked, each once.
    EXPECT_EQ(h.collector.acked.size(), 200u);
    EXPECT_EQ(std::set<std::int64_t>(h.collector.acked.begin(), h.collector.acked.end()).size(),
              200u);
    if (memory != kAllInMemory) {
      EXPECT_GT(h.spilled(), 0u);
    }
  }
}

struct TimedEvent {
  std::int64_t id, ts;
  int source;
};

// Event time: out-of-order tuples from two sources, the watermark computed at
// random moments; with a lag as large as the disorder nothing is late, and
// after both sources fall idle the remaining windows are activated. Windows
// are those of the definition over all tuples.
TEST(WindowedBolt, EventTimeSlidingWindowsMatchTheDefinition) {
  for (std::int64_t memory : {kAllInMemory, std::int64_t{7}})
    for (auto [length, slide] : {std::pair{1000, 250}, {500, 500}, {300, 700}}) {
      SCOPED_TRACE("length " + std::to_string(length) + " slide " + std::to_string(slide) +
                   " memory " + std::to_string(memory));
      std::mt19937 rng(11);
      Config c = with_memory(window_config(Duration(length), Duration(slide)), memory);
      c.set(std::string(keys::kTupleTimestampFieldName), "ts");
      c.set(std::string(keys::kTupleTimestampMaxLagMs), std::int64_t{200});
      c.set(std::string(keys::kWatermarkIdleTimeoutMs), std::int64_t{5000});
      Harness h(c);
      std::vector<TimedEvent> events;
      std::int64_t base = 100'000;
      for (int id = 0; id < 400; ++id) {
        base += std::uniform_int_distribution<int>(0, 20)(rng);
        // Out of order by up to 150 ms (the lag is 200).
        const std::int64_t ts = base - std::uniform_int_distribution<int>(0, 150)(rng);
        events.push_back({id, ts, 1 + id % 2});
      }
      for (const auto& e : events) {
        h.now += 1;
        h.send(e.id, e.ts, e.source);
        if (std::uniform_int_distribution<int>(0, 19)(rng) == 0) h.timer();
      }
      EXPECT_TRUE(h.collector.emitted.size() == h.activations.size());  // nothing late
      h.now += 6000;                                                    // both sources idle
      h.timer();
      std::int64_t min_ts = events[0].ts, max_ts = events[0].ts;
      for (const auto& e : events) {
        min_ts = std::min(min_ts, e.ts);
        max_ts = std::max(max_ts, e.ts);
      }
      std::vector<Activation> expected;
      for (std::int64_t end = (min_ts / slide + 1) * slide; end <= max_ts + length + slide;
           end += slide) {
        Activation a;
        std::vector<std::pair<std::int64_t, std::int64_t>> in;  // ts, id: timestamp order
        for (const auto& e : events) {
          if (e.ts >= end - length && e.ts < end) in.emplace_back(e.ts, e.id);
        }
        std::stable_sort(in.begin(), in.end(),
                         [](const auto& x, const auto& y) { return x.first < y.first; });
        for (auto [ts, id] : in) a.all.push_back(id);
        a.start = end - length;
        a.end = end;
        expected.push_back(a);
      }
      // Among equal timestamps the order is arrival order, as stable_sort of
      // the arrival sequence gives.
      EXPECT_EQ(h.activations, with_deltas(expected));
      EXPECT_EQ(h.collector.acked.size(), events.size());
      EXPECT_EQ(std::set<std::int64_t>(h.collector.acked.begin(), h.collector.acked.end()).size(),
                events.size());
      EXPECT_TRUE(h.collector.failed.empty());
      if (memory != kAllInMemory) {
        EXPECT_GT(h.spilled(), 0u);
      }
    }
}

// With checkpoints the window is part of the task's state: a task restored
// from a checkpoint taken at any point, fed what came after it, activates
// exactly the windows (all, new, expired) that the task without the restart
// did. Count and duration slides, processing and event time (out of order,
// two inputs), every tuple in memory or most of them spilled.
TEST(WindowedBolt, ARestoredWindowGoesOnAsIfNothingHappened) {
  struct Case {
    std::string name;
    Config config;
  };
  std::vector<Case> cases;
  for (std::int64_t memory : {kAllInMemory, std::int64_t{7}}) {
    const std::string m = memory == kAllInMemory ? " in memory" : " spilled";
    cases.push_back({"count 10/3 processing time" + m,
                     with_memory(window_config(Count(10), Count(3)), memory)});
    cases.push_back({"duration 1000/250 processing time" + m,
                     with_memory(window_config(Duration(1000), Duration(250)), memory)});
    for (auto [length, slide] : {std::pair{Duration(1000), Duration(250)}, {Count(20), Count(5)}}) {
      Config c = with_memory(window_config(length, slide), memory);
      c.set(std::string(keys::kTupleTimestampFieldName), "ts");
      c.set(std::string(keys::kTupleTimestampMaxLagMs), std::int64_t{200});
      c.set(std::string(keys::kWatermarkIdleTimeoutMs), std::int64_t{5000});
      cases.push_back({std::string(length.unit == WindowSize::Unit::kCount ? "count" : "duration") +
                           " event time" + m,
                       c});
    }
  }
  for (auto& [name, config] : cases) {
    config.set(std::string(keys::kTopologyStateCheckpointing), true);
    // One input: ids, out-of-order timestamps, which of two sources, and
    // whether the timer runs after it; the same for every run.
    struct Step {
      std::int64_t id, ts;
      int source;
      bool timer;
    };
    std::mt19937 rng(7);
    std::vector<Step> steps;
    std::int64_t base = 100'000;
    for (int id = 0; id < 300; ++id) {
      base += std::uniform_int_distribution<int>(0, 20)(rng);
      steps.push_back({id, base - std::uniform_int_distribution<int>(0, 150)(rng), 1 + id % 2,
                       std::uniform_int_distribution<int>(0, 9)(rng) == 0});
    }
    auto run = [&](Harness& h, std::size_t from, std::size_t to) {
      for (std::size_t i = from; i < to; ++i) {
        h.now += 7;
        h.send(steps[i].id, steps[i].ts, steps[i].source);
        if (steps[i].timer) h.timer();
      }
    };
    auto finish = [](Harness& h) {
      for (int i = 0; i < 3; ++i) {
        h.now += 6000;  // every input idle: the last windows close
        h.timer();
      }
    };
    Harness whole(config);
    run(whole, 0, steps.size());
    finish(whole);
    ASSERT_GT(whole.activations.size(), 5u) << name;
    for (std::size_t cut : {std::size_t{1}, std::size_t{37}, std::size_t{150}, std::size_t{299}}) {
      SCOPED_TRACE(name + ", checkpoint after " + std::to_string(cut) + " tuples");
      Harness before(config);
      run(before, 0, cut);
      Harness after(config, false, before.checkpoint(), before.now);
      run(after, cut, steps.size());
      finish(after);
      std::vector<Activation> both = before.activations;
      both.insert(both.end(), after.activations.begin(), after.activations.end());
      EXPECT_EQ(both, whole.activations);
      EXPECT_TRUE(after.collector.errors.empty()) << after.collector.errors.front();
      // Each tuple the run without a restart acked was acked once, in one
      // run or the other (a restored tuple's ack is a no-op for the
      // runtime: it has no anchors).
      std::multiset<std::int64_t> acked(before.collector.acked.begin(),
                                        before.collector.acked.end());
      acked.insert(after.collector.acked.begin(), after.collector.acked.end());
      EXPECT_EQ(acked, std::multiset<std::int64_t>(whole.collector.acked.begin(),
                                                   whole.collector.acked.end()));
    }
  }
}

// A window in a checkpoint that cannot be decoded stops the task's prepare
// with an error saying so (the runtime reports it naming the task).
TEST(WindowedBolt, AWindowThatCannotBeRestoredIsAnErrorOfPrepare) {
  Config c = window_config(Count(3), Count(3));
  c.set(std::string(keys::kTopologyStateCheckpointing), true);
  auto backend = std::make_shared<InMemoryStateBackend>();
  backend->open(TaskId(9), "win")->put(std::string("__window_checkpoint\0", 20), "garbage");
  try {
    Harness h(c, false, backend);
    FAIL() << "prepare accepted a damaged window";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("window restored from the checkpoint cannot be decoded"),
              std::string::npos)
        << e.what();
  }
}

// A spilled chunk that cannot be read back is reported, naming the tuples;
// the window goes on without them (they are not acked: their spouts replay
// them at the message timeout), and later windows are whole.
TEST(WindowedBolt, ASpilledChunkThatCannotBeReadIsReportedAndLeftOut) {
  Harness h(with_memory(window_config(Count(6), Count(6)), 3));
  for (int i = 0; i < 4; ++i) h.send(i);  // the 4th spills tuple 0 alone
  ASSERT_EQ(h.spilled(), 1u);
  auto store = h.store();
  const std::string key = std::string("__window\0", 9) + std::string(8, '\0');
  ASSERT_TRUE(store->get(key).has_value());
  store->put(key, "garbage");
  for (int i = 4; i < 12; ++i) h.send(i);
  ASSERT_EQ(h.activations.size(), 2u);
  EXPECT_EQ(h.activations[0].all, (Ids{1, 2, 3, 4, 5}));
  EXPECT_EQ(h.activations[1].all, (Ids{6, 7, 8, 9, 10, 11}));
  ASSERT_FALSE(h.collector.errors.empty());
  EXPECT_NE(h.collector.errors[0].find("spilled window tuples 0..0 cannot be read back from the "
                                       "state store"),
            std::string::npos)
      << h.collector.errors[0];
  // Both tumbling windows' tuples once processed; tuple 0 is not.
  EXPECT_EQ(h.collector.acked, (Ids{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_FALSE(store->get(key).has_value());           // gone once evicted
}

TEST(WindowedBolt, LateTuplesGoToTheLateStreamAndAreAcked) {
  Config c = window_config(Duration(100), Duration(100));
  c.set(std::string(keys::kTupleTimestampFieldName), "ts");
  c.set(std::string(keys::kLateTupleStream), "late");
  Harness h(c);
  h.send(1, 1000);
  h.send(2, 1150);
  h.send(3, 1250);
  h.timer();  // watermark 1250: window [1100, 1200) is complete, [1000, 1100) too
  ASSERT_EQ(h.activations.size(), 2u);
  EXPECT_EQ(h.activations[0].all, (Ids{1}));
  EXPECT_EQ(h.activations[1].all, (Ids{2}));
  h.send(4, 1249);  // below the watermark: late
  h.send(5, 1250);  // at it: on time
  ASSERT_EQ(h.collector.emitted.size(), 3u);
  const Emitted& late = h.collector.emitted.back();
  EXPECT_EQ(late.stream, "late");
  EXPECT_EQ(late.values, (Values{4, 1249}));
  EXPECT_EQ(late.anchors, 1u);
  EXPECT_NE(std::find(h.collector.acked.begin(), h.collector.acked.end(), 4),
            h.collector.acked.end());
  h.send(6, 1400);
  h.timer();  // watermark 1400: [1200, 1300) holds 3 and 5, not 4
  ASSERT_EQ(h.activations.size(), 3u);
  EXPECT_EQ(h.activations[2].all, (Ids{3, 5}));
}

TEST(WindowedBolt, WatermarkFollowsTheSlowestInputAndIgnoresAnIdleOne) {
  Config c = window_config(Duration(100), Duration(100));
  c.set(std::string(keys::kTupleTimestampFieldName), "ts");
  c.set(std::string(keys::kWatermarkIdleTimeoutMs), std::int64_t{1000});
  Harness h(c);
  h.send(1, 1000, /*source=*/1);
  h.send(2, 1050, /*source=*/2);
  h.send(3, 1500, /*source=*/1);
  h.timer();  // watermark min(1500, 1050) = 1050: window [1000, 1100) not complete
  EXPECT_TRUE(h.activations.empty());
  h.now += 600;
  h.send(4, 1600, 1);
  h.now += 600;  // source 2 silent for 1200 ms: idle; source 1 is not
  h.timer();     // watermark 1600
  ASSERT_EQ(h.activations.size(), 2u);
  EXPECT_EQ(h.activations[0].all, (Ids{1, 2}));
  EXPECT_EQ(h.activations[1].all, (Ids{3}));
  h.send(5, 1550, 2);  // source 2 is back but behind the watermark: late, acked
  EXPECT_EQ(h.collector.acked.back(), 5);
}

TEST(WindowedBolt, CountSlideInEventTimeFollowsTimestampOrder) {
  Config c = window_config(Count(3), Count(2));
  c.set(std::string(keys::kTupleTimestampFieldName), "ts");
  c.set(std::string(keys::kTupleTimestampMaxLagMs), std::int64_t{100});
  Harness h(c);
  // Arrive out of order; in timestamp order the ids are 0..6.
  for (auto [id, ts] : std::vector<std::pair<int, int>>{
           {1, 110}, {0, 100}, {3, 130}, {2, 120}, {5, 150}, {4, 140}, {6, 160}, {7, 300}}) {
    h.send(id, ts);
  }
  h.timer();  // watermark 300 - 100 = 200: ids 0..6 below it
  std::vector<Activation> expected = {
      {{0, 1}, {}, {}, 100, 111}, {{1, 2, 3}, {}, {}, 110, 131}, {{3, 4, 5}, {}, {}, 130, 151}};
  EXPECT_EQ(h.activations, with_deltas(expected));
}

TEST(WindowedBolt, AnExceptionFailsTheWindowsTuplesAndIsReported) {
  Harness h(window_config(Count(2), Count(2)), /*throw_on_execute=*/true);
  h.send(1);
  h.send(2);
  EXPECT_EQ(h.collector.failed, (Ids{1, 2}));
  ASSERT_EQ(h.collector.errors.size(), 1u);
  EXPECT_NE(h.collector.errors[0].find("bad window"), std::string::npos);
  h.send(3);
  h.send(4);  // evicting 1 and 2 does not ack them again
  EXPECT_TRUE(h.collector.acked.empty());
}

TEST(WindowedBolt, AMissingTimestampFieldNamesTheField) {
  Config c = window_config(Count(2), Count(2));
  c.set(std::string(keys::kTupleTimestampFieldName), "event_time");
  Harness h(c);
  try {
    h.send(1, 5);
    FAIL() << "no error";
  } catch (const TupleError& e) {
    EXPECT_NE(std::string(e.what()).find("event_time"), std::string::npos) << e.what();
  }
}

// --- The builder -----------------------------------------------------------

class PairSpout : public Spout {
 public:
  void open(const Config&, const TopologyContext&, SpoutOutputCollector&) override {}
  void next_tuple() override {}
  void declare_output_fields(OutputFieldsDeclarer& d) override {
    d.declare(Fields{"id", "ts"});
    d.declare_stream("other", Fields{"x"});
  }
};

SpoutFactory pairs() {
  return [] { return std::make_unique<PairSpout>(); };
}
WindowedBoltFactory recorder() {
  return [] { return std::make_unique<Recorder>(nullptr); };
}

std::string all_problems(const api::Result<Topology>& t) {
  std::string out;
  if (t.ok()) return out;
  for (const auto& m : t.status().messages()) out += m + "\n";
  return out;
}

TEST(WindowedBoltBuilder, SetsStormKeysAndDeclaresTheLateStream) {
  TopologyBuilder b;
  b.set_spout("pairs", pairs());
  b.set_bolt("win", recorder(), 2)
      .shuffle_grouping("pairs")
      .with_window(Duration(10'000), Count(5))
      .with_timestamp_field("ts")
      .with_lag(500)
      .with_late_tuple_stream("late");
  auto t = b.build();
  ASSERT_TRUE(t.ok()) << all_problems(t);
  const ComponentSpec* win = t->component("win");
  EXPECT_EQ(win->config.get_int(keys::kWindowLengthDurationMs), 10'000);
  EXPECT_EQ(win->config.get_int(keys::kWindowSlidingIntervalCount), 5);
  EXPECT_EQ(win->config.get_string(keys::kTupleTimestampFieldName), "ts");
  EXPECT_EQ(win->config.get_int(keys::kTupleTimestampMaxLagMs), 500);
  const StreamSpec* late = win->find_stream("late");
  ASSERT_NE(late, nullptr);
  EXPECT_EQ(late->fields, (Fields{"id", "ts"}));
  ASSERT_NE(win->find_stream("default"), nullptr);
}

TEST(WindowedBoltBuilder, RefusesBadWindowsNamingTheComponent) {
  {
    TopologyBuilder b;
    b.set_spout("pairs", pairs());
    b.set_bolt("nolength", recorder()).shuffle_grouping("pairs");
    EXPECT_NE(all_problems(b.build()).find("windowed bolt 'nolength' has no window length"),
              std::string::npos);
  }
  {
    TopologyBuilder b;
    b.set_spout("pairs", pairs());
    b.set_bolt("zero", recorder()).shuffle_grouping("pairs").with_tumbling_window(Count(0));
    EXPECT_NE(
        all_problems(b.build()).find("windowed bolt 'zero': its window length must be above 0"),
        std::string::npos);
  }
  {
    TopologyBuilder b;
    b.set_spout("pairs", pairs());
    b.set_bolt("both", recorder())
        .shuffle_grouping("pairs")
        .with_tumbling_window(Count(3))
        .add_configuration(std::string(keys::kWindowLengthDurationMs), 100);
    EXPECT_NE(all_problems(b.build()).find("both as a count"), std::string::npos);
  }
  {
    TopologyBuilder b;
    b.set_spout("pairs", pairs());
    b.set_bolt("nots", recorder())
        .shuffle_grouping("pairs")
        .with_tumbling_window(Count(3))
        .with_late_tuple_stream("late");
    EXPECT_NE(all_problems(b.build()).find("'nots': a late tuple stream ('late') needs event time"),
              std::string::npos);
  }
  {
    TopologyBuilder b;
    b.set_spout("pairs", pairs());
    b.set_bolt("mixed", recorder())
        .shuffle_grouping("pairs")
        .shuffle_grouping("pairs", "other")
        .with_tumbling_window(Count(3))
        .with_timestamp_field("ts")
        .with_late_tuple_stream("late");
    EXPECT_NE(all_problems(b.build()).find("have different fields"), std::string::npos);
  }
  {
    TopologyBuilder b;
    b.set_spout("pairs", pairs());
    b.set_bolt("typed", recorder())
        .shuffle_grouping("pairs")
        .with_tumbling_window(Count(3))
        .add_configuration(std::string(keys::kTupleTimestampMaxLagMs), "soon");
    EXPECT_NE(all_problems(b.build()).find(
                  "'typed': topology.bolts.tuple.timestamp.max.lag.ms must be an integer"),
              std::string::npos);
  }
}

// A count window fills in each task of the bolt: with tuples spread over 2
// tasks, a tumbling window of 100 (200 unacked at most, the next window
// filling while one is processed) needs room for 400 in flight.
TEST(WindowedBoltBuilder, ACountWindowInEachTaskMustFitWhatMaxSpoutPendingLetsInFlight) {
  auto lib = load_topology_library(RSTORM_TEST_WINDOWED_LIB);
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  Config c;
  c.set("test.spouts", std::int64_t{2});
  c.set("test.count.window", std::int64_t{100});
  c.set("test.count.tasks", std::int64_t{2});
  c.set(std::string(keys::kTopologyMaxSpoutPending), std::int64_t{150});
  auto t = lib->build(c);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(all_problems(t).find("windowed bolt 'counted': its window holds up to 200 tuples "
                                 "unacked in each of its 2 tasks (400 in all), more than "
                                 "topology.max.spout.pending (150) x 2 spout tasks"),
            std::string::npos)
      << all_problems(t);
  c.set(std::string(keys::kTopologyMaxSpoutPending), std::int64_t{200});
  auto fits = lib->build(c);
  EXPECT_TRUE(fits.ok()) << all_problems(fits);
}

TEST(WindowedBoltBuilder, AWindowLongerThanTheMessageTimeoutIsRefusedWithTheConfig) {
  auto lib = load_topology_library(RSTORM_TEST_WINDOWED_LIB);
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  Config fits;
  EXPECT_TRUE(lib->build(fits).ok());  // 20 s + 5 s + 1 s watermark interval < 30 s
  Config slow;
  slow.set("test.slide.ms", std::int64_t{10'000});
  auto t = lib->build(slow);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(all_problems(t).find("windowed bolt 'sum': its window (length 20000 ms + slide 10000 "
                                 "ms + lag 0 ms + watermark interval 1000 ms) does not fit in "
                                 "topology.message.timeout.secs (30 s)"),
            std::string::npos)
      << all_problems(t);
  slow.set(std::string(keys::kTopologyMessageTimeoutSecs), std::int64_t{60});
  EXPECT_TRUE(lib->build(slow).ok());
}

}  // namespace
}  // namespace rstorm
