// The windowed bolt adapter: buffers tuples in timestamp order, decides when a
// window is activated (count or time slides, processing or event time), hands
// the bolt the window with what is new and what expired, acks tuples as they
// leave, and handles late tuples. Semantics: rstorm/windowed_bolt.hpp.
#include "rstorm/windowed_bolt.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <limits>
#include <stdexcept>
#include <unordered_map>

#include "window_settings.hpp"

namespace rstorm {

WindowedBolt::~WindowedBolt() = default;

namespace {

constexpr std::int64_t kUnset = std::numeric_limits<std::int64_t>::min();

std::int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The smallest multiple of `step` above `t`.
std::int64_t boundary_above(std::int64_t t, std::int64_t step) {
  std::int64_t q = t / step;
  if (t % step != 0 && t < 0) --q;  // floor division
  return (q + 1) * step;
}

// Anchors what the bolt emits without anchors, during an activation, to the
// window's tuples; everything else goes through unchanged.
class WindowCollector final : public OutputCollector {
 public:
  explicit WindowCollector(OutputCollector& out) : out_(out) {}

  void emit_to(std::string_view stream, const Tuple* const* anchors, std::size_t num_anchors,
               Values&& values, TaskId direct_task) override {
    if (num_anchors == 0 && window_ != nullptr && !window_->empty()) {
      out_.emit_to(stream, window_->data(), window_->size(), std::move(values), direct_task);
      return;
    }
    out_.emit_to(stream, anchors, num_anchors, std::move(values), direct_task);
  }
  void ack(const Tuple& input) override { out_.ack(input); }
  void fail(const Tuple& input) override { out_.fail(input); }
  void report_error(std::string_view message) override { out_.report_error(message); }

  void set_window(const std::vector<const Tuple*>* window) { window_ = window; }

 private:
  OutputCollector& out_;
  const std::vector<const Tuple*>* window_ = nullptr;
};

class WindowedBoltAdapter final : public TimedBolt {
 public:
  WindowedBoltAdapter(std::unique_ptr<WindowedBolt> bolt, std::function<std::int64_t()> clock)
      : bolt_(std::move(bolt)), clock_(std::move(clock)) {}

  void prepare(const Config& conf, const TopologyContext& context,
               OutputCollector& collector) override {
    std::vector<std::string> problems;
    auto settings = read_window_settings(conf, context.component_id(), problems);
    if (!settings) {
      std::string message;
      for (const auto& p : problems) message += (message.empty() ? "" : "; ") + p;
      throw std::invalid_argument(message);
    }
    s_ = *settings;
    out_ = &collector;
    collector_ = std::make_unique<WindowCollector>(collector);
    late_counter_ = &context.counter("window_late_tuples",
                                     "tuples behind the watermark, sent to the late stream or "
                                     "dropped (acked)");
    activations_ = &context.counter("window_activations", "windows handed to the bolt");
    if (!s_.event_time() && s_.slide.unit == WindowSize::Unit::kDuration) {
      next_end_ = boundary_above(clock_(), s_.slide.value);
    }
    bolt_->prepare(conf, context, *collector_);
  }

  void execute(const Tuple& input) override {
    if (input.is_tick()) return;
    if (s_.event_time()) {
      add_event_time(input);
    } else {
      add_processing_time(input);
    }
  }

  std::chrono::milliseconds timer_period() const override {
    if (s_.event_time()) return std::chrono::milliseconds(s_.watermark_interval_ms);
    if (s_.slide.unit == WindowSize::Unit::kDuration) {
      return std::chrono::milliseconds(std::clamp<std::int64_t>(s_.slide.value, 1, 100));
    }
    return std::chrono::milliseconds(0);
  }

  void on_timer() override {
    if (s_.event_time()) {
      advance_watermark();
    } else if (s_.slide.unit == WindowSize::Unit::kDuration) {
      fire_time_windows(clock_());
    }
  }

  void cleanup() override { bolt_->cleanup(); }
  void declare_output_fields(OutputFieldsDeclarer& declarer) override {
    bolt_->declare_output_fields(declarer);
  }

 private:
  struct Event {
    Tuple tuple;
    std::int64_t ts;
  };
  // An upstream task, for the watermark.
  struct Source {
    std::int64_t max_ts = kUnset;
    std::int64_t last_seen_ms = 0;
  };

  // --- Processing time ---------------------------------------------------

  void add_processing_time(const Tuple& input) {
    // Arrival order is timestamp order even if the wall clock steps back.
    std::int64_t ts = clock_();
    if (!events_.empty()) ts = std::max(ts, events_.back().ts);
    events_.push_back(Event{input, ts});
    if (s_.slide.unit == WindowSize::Unit::kCount && ++since_trigger_ >= s_.slide.value) {
      since_trigger_ = 0;
      activate_count(end_index(), ts + 1);
    }
  }

  // --- Event time -------------------------------------------------------

  void add_event_time(const Tuple& input) {
    const std::int64_t ts = input.get_int(s_.timestamp_field);  // TupleError names the field
    Source& src = sources_[input.source_task().value];
    src.max_ts = std::max(src.max_ts, ts);
    src.last_seen_ms = clock_();
    if (watermark_ != kUnset && ts < watermark_) {
      late(input);
      return;
    }
    // Usually in order: find the place from the back.
    auto pos = events_.end();
    while (pos != events_.begin() && std::prev(pos)->ts > ts) --pos;
    events_.insert(pos, Event{input, ts});
  }

  void late(const Tuple& input) {
    late_counter_->inc();
    if (!s_.late_stream.empty()) {
      const Tuple* anchor = &input;
      Values values = input.values();
      out_->emit_to(s_.late_stream, &anchor, 1, std::move(values), TaskId());
    }
    out_->ack(input);
  }

  // Recomputes the watermark from the inputs' largest timestamps and
  // activates the windows it completes.
  void advance_watermark() {
    if (sources_.empty()) return;
    const std::int64_t now = clock_();
    std::int64_t min_active = std::numeric_limits<std::int64_t>::max();
    std::int64_t max_all = kUnset;
    std::int64_t last_seen = kUnset;
    bool any_active = false;
    for (const auto& [task, src] : sources_) {
      max_all = std::max(max_all, src.max_ts);
      last_seen = std::max(last_seen, src.last_seen_ms);
      if (s_.idle_timeout_ms == 0 || now - src.last_seen_ms < s_.idle_timeout_ms) {
        min_active = std::min(min_active, src.max_ts);
        any_active = true;
      }
    }
    // Every input idle: event time moves on with the wall clock from the
    // newest timestamp seen, so the windows holding what came are activated
    // and its tuples acked (a finite input's last windows).
    const std::int64_t candidate =
        any_active ? min_active - s_.lag_ms : max_all - s_.lag_ms + (now - last_seen);
    if (watermark_ != kUnset && candidate <= watermark_) return;
    watermark_ = candidate;
    if (s_.slide.unit == WindowSize::Unit::kDuration) {
      fire_time_windows(watermark_);
      return;
    }
    // Count slides: every slide-th tuple below the watermark ends a window.
    while (released_ < end_index() && at(released_).ts < watermark_) {
      ++released_;
      if (++since_trigger_ >= s_.slide.value) {
        since_trigger_ = 0;
        activate_count(released_, at(released_ - 1).ts + 1);
      }
    }
  }

  // --- Activation -------------------------------------------------------

  // Activates every window ending at a multiple of the slide up to `limit`.
  void fire_time_windows(std::int64_t limit) {
    const std::int64_t slide = s_.slide.value;
    if (next_end_ == kUnset) {
      if (events_.empty()) return;
      next_end_ = boundary_above(events_.front().ts, slide);
    }
    while (next_end_ <= limit) {
      const std::int64_t end_ts = next_end_;
      const std::uint64_t end = first_at_or_after(end_ts);
      const std::uint64_t begin = s_.length.unit == WindowSize::Unit::kCount
                                      ? end - std::min<std::uint64_t>(end - base_, s_.length.value)
                                      : first_at_or_after(end_ts - s_.length.value);
      activate(begin, end, end_ts);
      next_end_ = end_ts + slide;
      if (begin < end) continue;
      // An empty window: skip to the first one the next tuple enters.
      if (end < end_index()) {
        next_end_ = std::max(next_end_, boundary_above(at(end).ts, slide));
      } else {
        next_end_ = s_.event_time() ? kUnset : std::max(next_end_, boundary_above(limit, slide));
        return;
      }
    }
  }

  // A window ending after index `end` (exclusive) at `end_ts`, by count slide.
  void activate_count(std::uint64_t end, std::int64_t end_ts) {
    const std::uint64_t begin = s_.length.unit == WindowSize::Unit::kCount
                                    ? end - std::min<std::uint64_t>(end - base_, s_.length.value)
                                    : first_at_or_after(end_ts - s_.length.value);
    activate(begin, end, end_ts);
  }

  // Evicts (acks) what is before `begin`, then hands the bolt the window
  // [begin, end) unless it is empty.
  void activate(std::uint64_t begin, std::uint64_t end, std::int64_t end_ts) {
    begin = std::max(begin, base_);
    end = std::max(end, begin);
    evict_before(begin);
    if (begin == end) return;
    std::vector<const Tuple*> tuples;
    tuples.reserve(end - begin);
    for (std::uint64_t i = begin; i < end; ++i) tuples.push_back(&at(i).tuple);
    std::vector<const Tuple*> fresh;
    const std::uint64_t new_from = activated_ ? std::max(begin, prev_end_) : begin;
    for (std::uint64_t i = new_from; i < end; ++i) fresh.push_back(&at(i).tuple);
    std::vector<const Tuple*> expired;
    expired.reserve(expired_.size());
    for (const auto& t : expired_) expired.push_back(&t);
    const std::int64_t start_ts =
        s_.length.unit == WindowSize::Unit::kDuration ? end_ts - s_.length.value : at(begin).ts;
    TupleWindow window(std::move(tuples), std::move(fresh), std::move(expired), start_ts, end_ts);
    collector_->set_window(&window.get());
    activations_->inc();
    try {
      bolt_->execute(window);
    } catch (const std::exception& e) {
      window_failed(window, e.what());
    } catch (...) {
      window_failed(window, "a non-standard exception");
    }
    collector_->set_window(nullptr);
    expired_.clear();
    prev_begin_ = begin;
    prev_end_ = end;
    activated_ = true;
  }

  // As a bolt's execute that throws fails its input: the window's tuples are
  // failed (their spouts replay them) and the error is counted and logged.
  void window_failed(const TupleWindow& window, const std::string& what) {
    collector_->set_window(nullptr);
    out_->report_error("execute threw on the window [" + std::to_string(window.start_timestamp()) +
                       ", " + std::to_string(window.end_timestamp()) + ") of " +
                       std::to_string(window.get().size()) + " tuples: " + what +
                       "; its tuples failed");
    for (const Tuple* t : window.get()) out_->fail(*t);
  }

  // Acks every tuple before `index`; those of the last activated window are
  // kept for the next activation's get_expired().
  void evict_before(std::uint64_t index) {
    while (base_ < index && !events_.empty()) {
      Event& e = events_.front();
      out_->ack(e.tuple);
      if (activated_ && base_ >= prev_begin_ && base_ < prev_end_) {
        expired_.push_back(std::move(e.tuple));
      }
      events_.pop_front();
      ++base_;
    }
    released_ = std::max(released_, base_);
  }

  // --- Indexing: events_ holds global indices [base_, base_ + size) -------

  std::uint64_t end_index() const { return base_ + events_.size(); }
  Event& at(std::uint64_t index) { return events_[static_cast<std::size_t>(index - base_)]; }
  // The first index whose timestamp is at or after `ts`.
  std::uint64_t first_at_or_after(std::int64_t ts) const {
    auto it = std::lower_bound(events_.begin(), events_.end(), ts,
                               [](const Event& e, std::int64_t t) { return e.ts < t; });
    return base_ + static_cast<std::uint64_t>(it - events_.begin());
  }

  std::unique_ptr<WindowedBolt> bolt_;
  std::function<std::int64_t()> clock_;
  WindowSettings s_;
  OutputCollector* out_ = nullptr;
  std::unique_ptr<WindowCollector> collector_;
  CounterMetric* late_counter_ = nullptr;
  CounterMetric* activations_ = nullptr;

  std::deque<Event> events_;    // timestamp order, then arrival order
  std::uint64_t base_ = 0;      // global index of events_.front()
  std::vector<Tuple> expired_;  // left the last activated window since it ran
  bool activated_ = false;
  std::uint64_t prev_begin_ = 0;  // the last activated window, global indices
  std::uint64_t prev_end_ = 0;
  std::int64_t since_trigger_ = 0;  // count slides: tuples since the last window
  std::int64_t next_end_ = kUnset;  // duration slides: the next window's end

  std::unordered_map<std::int32_t, Source> sources_;  // event time, by upstream task
  std::int64_t watermark_ = kUnset;
  std::uint64_t released_ = 0;  // count slides in event time: tuples below the watermark
};

}  // namespace

std::unique_ptr<Bolt> adapt_windowed_bolt(std::unique_ptr<WindowedBolt> windowed) {
  return detail::adapt_windowed_bolt(std::move(windowed), wall_clock_ms);
}

namespace detail {
std::unique_ptr<Bolt> adapt_windowed_bolt(std::unique_ptr<WindowedBolt> windowed,
                                          std::function<std::int64_t()> clock_ms) {
  if (!windowed) return nullptr;
  return std::make_unique<WindowedBoltAdapter>(std::move(windowed), std::move(clock_ms));
}
}  // namespace detail

}  // namespace rstorm
