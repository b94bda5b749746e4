// The windowed bolt adapter: buffers tuples in timestamp order, decides when a
// window is activated (count or time slides, processing or event time), hands
// the bolt the window with what is new and what expired, acks tuples as they
// leave, and handles late tuples. Semantics: rstorm/windowed_bolt.hpp.
#include "rstorm/windowed_bolt.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "rstorm/state.hpp"
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

// --- Spilled tuples -----------------------------------------------------
//
// A chunk of consecutive buffered tuples in the task's state store, under
// "__window\0" + the big-endian global index of its first tuple: a u32
// count, then per tuple its source (an index into the adapter's table of
// streams), source task, values (StateCodec<Value>) and anchors. What changes
// while a tuple is spilled (its ack value, whether it was failed) and its
// timestamp stay in memory.

constexpr std::string_view kSpillPrefix{"__window\0", 9};

std::string spill_key(std::uint64_t first) {
  std::string key(kSpillPrefix);
  for (int shift = 56; shift >= 0; shift -= 8) key.push_back(static_cast<char>(first >> shift));
  return key;
}

template <typename T>
void put_raw(std::string& out, T v) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  out.append(bytes, sizeof(T));
}

void put_string(std::string& out, std::string_view v) {
  put_raw<std::uint32_t>(out, static_cast<std::uint32_t>(v.size()));
  out.append(v);
}

// With checkpoints, what a restore needs that is not in the spilled chunks
// (the tuples in memory, the bookkeeping, the watermark) is written under
// this key right before each snapshot (pre_checkpoint) and read back in
// prepare() after a restore.
constexpr std::string_view kCheckpointKey{"__window_checkpoint\0", 20};
constexpr std::uint32_t kCheckpointVersion = 1;

class SpillReader {
 public:
  explicit SpillReader(std::string_view bytes) : bytes_(bytes) {}
  template <typename T>
  T raw() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  std::string_view take(std::size_t n) {
    need(n);
    std::string_view out = bytes_.substr(at_, n);
    at_ += n;
    return out;
  }
  std::string_view string() { return take(raw<std::uint32_t>()); }
  bool done() const { return at_ == bytes_.size(); }

 private:
  void need(std::size_t n) const {
    if (bytes_.size() - at_ < n) {
      throw std::runtime_error("truncated at byte " + std::to_string(at_) + " of " +
                               std::to_string(bytes_.size()));
    }
  }
  std::string_view bytes_;
  std::size_t at_ = 0;
};

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
    context_.emplace(context);
    spilled_counter_ = &context.counter("window_spilled_tuples",
                                        "buffered tuples written to the task's state store "
                                        "(topology.bolts.window.max.tuples.in.memory)");
    late_counter_ = &context.counter("window_late_tuples",
                                     "tuples behind the watermark, sent to the late stream or "
                                     "dropped (acked)");
    activations_ = &context.counter("window_activations", "windows handed to the bolt");
    if (!s_.event_time() && s_.slide.unit == WindowSize::Unit::kDuration) {
      next_end_ = boundary_above(clock_(), s_.slide.value);
    }
    if (conf.get_bool(keys::kTopologyStateCheckpointing, false)) {
      // The window is part of the task's checkpoints: what a restore put in
      // the store is this task's window at the checkpoint.
      store_ = context.state_store();
      auto saved = store_->get(kCheckpointKey);
      if (saved) {
        try {
          restore(*saved);
        } catch (const std::exception& e) {
          throw std::runtime_error("the window restored from the checkpoint cannot be decoded (" +
                                   std::string(e.what()) + ")");
        }
      } else {
        remove_spilled_leftovers();
      }
    }
    bolt_->prepare(conf, context, *collector_);
  }

  void pre_checkpoint(std::int64_t checkpoint) override {
    if (!store_) open_store();
    std::string body;
    put_raw<std::uint32_t>(body, static_cast<std::uint32_t>(events_.size()));
    for (const Event& e : events_) {
      put_raw<std::int64_t>(body, e.ts);
      encode_tuple(e.tuple, body);
    }
    put_raw<std::uint32_t>(body, static_cast<std::uint32_t>(expired_.size()));
    for (const Tuple& t : expired_) encode_tuple(t, body);

    std::string out;
    put_raw<std::uint32_t>(out, kCheckpointVersion);
    for (std::uint64_t v : {base_, mem_base_, prev_begin_, prev_end_, released_}) {
      put_raw<std::uint64_t>(out, v);
    }
    put_raw<std::uint8_t>(out, activated_ ? 1 : 0);
    put_raw<std::uint8_t>(out, spill_broken_ ? 1 : 0);
    for (std::int64_t v : {since_trigger_, next_end_, watermark_}) put_raw<std::int64_t>(out, v);
    put_raw<std::uint32_t>(out, static_cast<std::uint32_t>(sources_seen_.size()));
    for (const StreamInfo* info : sources_seen_) {
      put_string(out, info->component);
      put_string(out, info->stream);
      put_raw<std::uint32_t>(out, static_cast<std::uint32_t>(info->fields.size()));
      for (const auto& f : info->fields) put_string(out, f);
      put_raw<std::uint8_t>(out, info->tick ? 1 : 0);
    }
    put_raw<std::uint32_t>(out, static_cast<std::uint32_t>(sources_.size()));
    for (const auto& [task, src] : sources_) {
      put_raw<std::int32_t>(out, task);
      put_raw<std::int64_t>(out, src.max_ts);
    }
    put_raw<std::uint32_t>(out, static_cast<std::uint32_t>(chunks_.size()));
    for (const Chunk& c : chunks_) {
      put_raw<std::uint64_t>(out, c.first);
      put_raw<std::uint32_t>(out, c.count);
    }
    put_raw<std::uint32_t>(out, static_cast<std::uint32_t>(spilled_.size()));
    for (const Spilled& e : spilled_) put_raw<std::int64_t>(out, e.ts);
    out += body;
    store_->put(kCheckpointKey, out);
    bolt_->pre_checkpoint(checkpoint);
  }

  void execute(const Tuple& input) override {
    if (input.is_tick()) return;
    if (s_.event_time()) {
      add_event_time(input);
    } else {
      add_processing_time(input);
    }
    maybe_spill();
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
      maybe_spill();  // what the new watermark passed may spill now
    } else if (s_.slide.unit == WindowSize::Unit::kDuration) {
      fire_time_windows(clock_());
    }
  }

  void cleanup() override {
    bolt_->cleanup();
    if (store_) {  // what is still spilled is not needed by anyone
      std::vector<StateWrite> writes;
      for (const Chunk& c : chunks_) writes.push_back({spill_key(c.first), std::nullopt});
      try {
        store_->apply(writes);
      } catch (const std::exception&) {
        // Removed by the next run of this task (open_store).
      }
    }
  }
  void declare_output_fields(OutputFieldsDeclarer& declarer) override {
    bolt_->declare_output_fields(declarer);
  }

 private:
  struct Event {
    Tuple tuple;
    std::int64_t ts;
  };
  // What stays in memory of a spilled tuple.
  struct Spilled {
    std::int64_t ts;
    std::uint64_t ack_val;
    bool completed;
  };
  struct Chunk {
    std::uint64_t first;  // global index of its first tuple
    std::uint32_t count;
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
    if (!events_.empty()) {
      ts = std::max(ts, events_.back().ts);
    } else if (!spilled_.empty()) {
      ts = std::max(ts, spilled_.back().ts);
    }
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
    while (released_ < end_index() && ts_at(released_) < watermark_) {
      ++released_;
      if (++since_trigger_ >= s_.slide.value) {
        since_trigger_ = 0;
        activate_count(released_, ts_at(released_ - 1) + 1);
      }
    }
  }

  // --- Activation -------------------------------------------------------

  // Activates every window ending at a multiple of the slide up to `limit`.
  void fire_time_windows(std::int64_t limit) {
    const std::int64_t slide = s_.slide.value;
    if (next_end_ == kUnset) {
      if (base_ == end_index()) return;
      next_end_ = boundary_above(ts_at(base_), slide);
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
        next_end_ = std::max(next_end_, boundary_above(ts_at(end), slide));
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
    // A count length: the next window ends `slide` tuples later and holds
    // the `length` before that, so what is before its start is in no later
    // window and is acked now (a tumbling window's tuples all), not when the
    // next window comes, which never comes after a finite stream's last
    // full window: its trees would time out and replay into another.
    if (s_.length.unit == WindowSize::Unit::kCount) {
      const std::uint64_t next_end = end + static_cast<std::uint64_t>(s_.slide.value);
      const auto length = static_cast<std::uint64_t>(s_.length.value);
      evict_before(std::min(end, next_end > length ? next_end - length : 0));
    }
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
    for (std::uint64_t i = begin; i < end; ++i) {
      if (const Tuple* t = tuple_at(i)) tuples.push_back(t);
    }
    std::vector<const Tuple*> fresh;
    const std::uint64_t new_from = activated_ ? std::max(begin, prev_end_) : begin;
    for (std::uint64_t i = new_from; i < end; ++i) {
      if (const Tuple* t = tuple_at(i)) fresh.push_back(t);
    }
    std::vector<const Tuple*> expired;
    expired.reserve(expired_.size());
    for (const auto& t : expired_) expired.push_back(&t);
    const std::int64_t start_ts =
        s_.length.unit == WindowSize::Unit::kDuration ? end_ts - s_.length.value : ts_at(begin);
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
    release_loaded();  // spilled tuples keep what the activation changed
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
    while (base_ < index && base_ < mem_base_) {  // spilled tuples first
      Tuple* t = tuple_at(base_);
      if (t != nullptr) {
        out_->ack(*t);
        if (activated_ && base_ >= prev_begin_ && base_ < prev_end_) {
          expired_.push_back(std::move(*t));
        }
      }
      spilled_.pop_front();
      ++base_;
      if (!chunks_.empty() && base_ >= chunks_.front().first + chunks_.front().count) {
        drop_chunk(chunks_.front());
        chunks_.pop_front();
      }
    }
    while (base_ < index && !events_.empty()) {
      Event& e = events_.front();
      out_->ack(e.tuple);
      if (activated_ && base_ >= prev_begin_ && base_ < prev_end_) {
        expired_.push_back(std::move(e.tuple));
      }
      events_.pop_front();
      ++base_;
      ++mem_base_;
    }
    released_ = std::max(released_, base_);
    loaded_.clear();  // evicted: nothing to keep
  }

  // --- Spilling: the oldest buffered tuples go to the state store --------

  // Spills the oldest tuples in memory beyond s_.max_in_memory, in chunks,
  // as far as none of them can still be preceded by a tuple yet to come (in
  // event time: below the watermark; in processing time: all).
  void maybe_spill() {
    if (spill_broken_ || static_cast<std::int64_t>(events_.size()) <= s_.max_in_memory) return;
    if (s_.event_time() && watermark_ == kUnset) return;
    // Chunks of up to 256 tuples (half the limit when it is small), so that
    // one store write and one read carry many tuples.
    const std::size_t chunk =
        static_cast<std::size_t>(std::clamp<std::int64_t>(s_.max_in_memory / 2, 1, kChunkTuples));
    while (static_cast<std::int64_t>(events_.size()) > s_.max_in_memory) {
      std::size_t n =
          std::min(events_.size(),
                   std::max(chunk, events_.size() - static_cast<std::size_t>(s_.max_in_memory)));
      if (s_.event_time()) {
        std::size_t below = 0;
        while (below < n && events_[below].ts < watermark_) ++below;
        n = below;
      }
      if (n == 0) return;
      if (!spill_front(n)) return;
    }
  }

  bool spill_front(std::size_t n) {
    std::string chunk;
    put_raw<std::uint32_t>(chunk, static_cast<std::uint32_t>(n));
    for (std::size_t i = 0; i < n; ++i) encode_tuple(events_[i].tuple, chunk);
    const std::uint64_t first = mem_base_;
    try {
      if (!store_) open_store();
      store_->put(spill_key(first), chunk);
    } catch (const std::exception& e) {
      spill_broken_ = true;
      out_->report_error(std::string("cannot spill window tuples to the state store, keeping them "
                                     "in memory from now on: ") +
                         e.what());
      return false;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const Tuple& t = events_.front().tuple;
      spilled_.push_back(Spilled{events_.front().ts, t.ack_val(), t.completed()});
      events_.pop_front();
    }
    chunks_.push_back(Chunk{first, static_cast<std::uint32_t>(n)});
    mem_base_ += n;
    spilled_counter_->inc(n);
    return true;
  }

  // Opens the task's store and removes what an earlier run of the task left.
  void open_store() {
    store_ = context_->state_store();
    remove_spilled_leftovers();
  }

  void remove_spilled_leftovers() {
    std::vector<StateWrite> stale;
    for (auto& [key, value] : store_->scan_prefix(kSpillPrefix)) {
      stale.push_back({std::move(key), std::nullopt});
    }
    stale.push_back({std::string(kCheckpointKey), std::nullopt});
    store_->apply(stale);
  }

  // The window as pre_checkpoint wrote it. Restored tuples lose their
  // anchors: their tuple trees ended with the run that took the checkpoint
  // (the spouts replay what came after it), so acking them is a no-op and
  // what a window emits is anchored to its new tuples only.
  void restore(std::string_view bytes) {
    SpillReader in(bytes);
    if (const auto version = in.raw<std::uint32_t>(); version != kCheckpointVersion) {
      throw std::runtime_error("version " + std::to_string(version) + ", expected " +
                               std::to_string(kCheckpointVersion));
    }
    base_ = in.raw<std::uint64_t>();
    mem_base_ = in.raw<std::uint64_t>();
    prev_begin_ = in.raw<std::uint64_t>();
    prev_end_ = in.raw<std::uint64_t>();
    released_ = in.raw<std::uint64_t>();
    activated_ = in.raw<std::uint8_t>() != 0;
    spill_broken_ = in.raw<std::uint8_t>() != 0;
    since_trigger_ = in.raw<std::int64_t>();
    next_end_ = in.raw<std::int64_t>();
    watermark_ = in.raw<std::int64_t>();
    const auto streams = in.raw<std::uint32_t>();
    for (std::uint32_t i = 0; i < streams; ++i) {
      StreamInfo info;
      info.component = std::string(in.string());
      info.stream = std::string(in.string());
      std::vector<std::string> fields(in.raw<std::uint32_t>());
      if (fields.size() > bytes.size()) throw std::runtime_error("a stream's fields miscounted");
      for (auto& f : fields) f = std::string(in.string());
      info.fields = Fields(std::move(fields));
      info.tick = in.raw<std::uint8_t>() != 0;
      restored_streams_.push_back(std::move(info));
      sources_seen_.push_back(&restored_streams_.back());
    }
    const std::int64_t now = clock_();
    for (auto n = in.raw<std::uint32_t>(); n > 0; --n) {
      const auto task = in.raw<std::int32_t>();
      sources_[task] = Source{in.raw<std::int64_t>(), now};
    }
    for (auto n = in.raw<std::uint32_t>(); n > 0; --n) {
      const auto first = in.raw<std::uint64_t>();
      chunks_.push_back(Chunk{first, in.raw<std::uint32_t>()});
    }
    for (auto n = in.raw<std::uint32_t>(); n > 0; --n) {
      spilled_.push_back(Spilled{in.raw<std::int64_t>(), 0, false});
    }
    for (auto n = in.raw<std::uint32_t>(); n > 0; --n) {
      const auto ts = in.raw<std::int64_t>();
      events_.push_back(Event{decode_tuple(in), ts});
    }
    for (auto n = in.raw<std::uint32_t>(); n > 0; --n) expired_.push_back(decode_tuple(in));
    if (!in.done()) throw std::runtime_error("trailing bytes");
    if (spilled_.size() != mem_base_ - base_ || base_ > mem_base_) {
      throw std::runtime_error(std::to_string(spilled_.size()) + " spilled tuples for indices " +
                               std::to_string(base_) + ".." + std::to_string(mem_base_));
    }
    restored_end_ = end_index();
  }

  void encode_tuple(const Tuple& t, std::string& out) {
    put_raw<std::uint32_t>(out, source_index(t.source()));
    put_raw<std::int32_t>(out, t.source_task().value);
    put_raw<std::uint32_t>(out, static_cast<std::uint32_t>(t.values().size()));
    for (const Value& v : t.values()) {
      const std::string bytes = StateCodec<Value>::encode(v);
      put_raw<std::uint32_t>(out, static_cast<std::uint32_t>(bytes.size()));
      out += bytes;
    }
    const MessageAnchors& anchors = t.anchors();
    put_raw<std::uint32_t>(out, static_cast<std::uint32_t>(anchors.size()));
    for (std::size_t i = 0; i < anchors.size(); ++i) {
      put_raw<std::uint64_t>(out, anchors[i].root);
      put_raw<std::uint64_t>(out, anchors[i].edge);
    }
  }

  std::uint32_t source_index(const StreamInfo* source) {
    for (std::size_t i = 0; i < sources_seen_.size(); ++i) {
      if (sources_seen_[i] == source) return static_cast<std::uint32_t>(i);
    }
    sources_seen_.push_back(source);
    return static_cast<std::uint32_t>(sources_seen_.size() - 1);
  }

  std::vector<Tuple> decode_chunk(std::string_view bytes, bool anchored) {
    SpillReader in(bytes);
    const auto n = in.raw<std::uint32_t>();
    // A tuple takes at least 16 bytes: a count that says more is damage, not
    // a reason to allocate.
    if (n > bytes.size() / 16) {
      throw std::runtime_error("claims " + std::to_string(n) + " tuples in " +
                               std::to_string(bytes.size()) + " bytes");
    }
    std::vector<Tuple> out;
    out.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) out.push_back(decode_tuple(in, anchored));
    if (!in.done()) throw std::runtime_error("trailing bytes");
    return out;
  }

  // One tuple as encode_tuple wrote it; without its anchors unless `anchored`.
  Tuple decode_tuple(SpillReader& in, bool anchored = false) {
    const auto source = in.raw<std::uint32_t>();
    const auto task = in.raw<std::int32_t>();
    if (source >= sources_seen_.size()) {
      throw std::runtime_error("unknown source stream " + std::to_string(source));
    }
    Values values;
    const auto count = in.raw<std::uint32_t>();
    for (std::uint32_t k = 0; k < count; ++k) {
      const auto size = in.raw<std::uint32_t>();
      values.push_back(StateCodec<Value>::decode(in.take(size)));
    }
    Tuple t(sources_seen_[source], TaskId(task), std::move(values));
    const auto anchors = in.raw<std::uint32_t>();
    for (std::uint32_t k = 0; k < anchors; ++k) {
      const auto root = in.raw<std::uint64_t>();
      const auto edge = in.raw<std::uint64_t>();
      if (anchored) t.mutable_anchors().xor_in(root, edge);
    }
    return t;
  }

  // The tuples of `chunk` (one of chunks_), read back and kept until
  // release_loaded(); nullptr when they cannot be read (reported each time:
  // they are then neither in a window nor acked, and their spouts replay
  // them at the message timeout).
  std::vector<Tuple>* load_chunk(const Chunk* chunk) {
    if (auto it = loaded_.find(chunk->first); it != loaded_.end()) {
      return it->second.empty() ? nullptr : &it->second;
    }
    std::vector<Tuple> tuples;
    try {
      auto bytes = store_->get(spill_key(chunk->first));
      if (!bytes) throw std::runtime_error("missing");
      // Chunks spilled before a restore hold tuples of the run before it.
      tuples = decode_chunk(*bytes, chunk->first >= restored_end_);
      if (tuples.size() != chunk->count) {
        throw std::runtime_error("holds " + std::to_string(tuples.size()) + " tuples, expected " +
                                 std::to_string(chunk->count));
      }
    } catch (const std::exception& e) {
      out_->report_error("spilled window tuples " + std::to_string(chunk->first) + ".." +
                         std::to_string(chunk->first + chunk->count - 1) +
                         " cannot be read back from the state store (" + e.what() +
                         "): left out of their windows; their spouts replay them");
      tuples.clear();
    }
    // What changed while they were spilled.
    for (std::size_t i = 0; i < tuples.size(); ++i) {
      if (chunk->first + i < base_) continue;  // evicted already
      const Spilled& meta = spilled_[static_cast<std::size_t>(chunk->first + i - base_)];
      tuples[i].xor_ack_val(meta.ack_val);
      if (meta.completed) tuples[i].mark_completed();
    }
    auto& slot = loaded_[chunk->first];
    slot = std::move(tuples);
    return slot.empty() ? nullptr : &slot;
  }

  // Writes back what an activation changed in loaded spilled tuples (their
  // ack values, failures) and lets them go.
  void release_loaded() {
    for (auto& [first, tuples] : loaded_) {
      for (std::size_t i = 0; i < tuples.size(); ++i) {
        if (first + i < base_) continue;
        Spilled& meta = spilled_[static_cast<std::size_t>(first + i - base_)];
        meta.ack_val = tuples[i].ack_val();
        meta.completed = tuples[i].completed();
      }
    }
    loaded_.clear();
  }

  void drop_chunk(const Chunk& chunk) {
    loaded_.erase(chunk.first);
    try {
      store_->remove(spill_key(chunk.first));
    } catch (const std::exception& e) {
      out_->report_error(std::string("cannot remove spilled window tuples: ") + e.what());
    }
  }

  // --- Indexing: global indices [base_, mem_base_) are spilled (spilled_),
  // [mem_base_, end_index()) in memory (events_) -------------------------

  std::uint64_t end_index() const { return mem_base_ + events_.size(); }
  std::int64_t ts_at(std::uint64_t index) const {
    if (index < mem_base_) return spilled_[static_cast<std::size_t>(index - base_)].ts;
    return events_[static_cast<std::size_t>(index - mem_base_)].ts;
  }
  // The tuple at `index`; a spilled one is loaded (see load_chunk).
  Tuple* tuple_at(std::uint64_t index) {
    if (index >= mem_base_) return &events_[static_cast<std::size_t>(index - mem_base_)].tuple;
    // The chunk holding it: the last one starting at or before it.
    const Chunk& chunk =
        *std::prev(std::upper_bound(chunks_.begin(), chunks_.end(), index,
                                    [](std::uint64_t i, const Chunk& c) { return i < c.first; }));
    std::vector<Tuple>* tuples = load_chunk(&chunk);
    if (tuples == nullptr) return nullptr;
    return &(*tuples)[static_cast<std::size_t>(index - chunk.first)];
  }
  // The first index whose timestamp is at or after `ts`.
  std::uint64_t first_at_or_after(std::int64_t ts) const {
    if (!spilled_.empty() && spilled_.back().ts >= ts) {
      auto it = std::lower_bound(spilled_.begin(), spilled_.end(), ts,
                                 [](const Spilled& e, std::int64_t t) { return e.ts < t; });
      return base_ + static_cast<std::uint64_t>(it - spilled_.begin());
    }
    auto it = std::lower_bound(events_.begin(), events_.end(), ts,
                               [](const Event& e, std::int64_t t) { return e.ts < t; });
    return mem_base_ + static_cast<std::uint64_t>(it - events_.begin());
  }

  std::unique_ptr<WindowedBolt> bolt_;
  std::function<std::int64_t()> clock_;
  WindowSettings s_;
  OutputCollector* out_ = nullptr;
  std::unique_ptr<WindowCollector> collector_;
  CounterMetric* late_counter_ = nullptr;
  CounterMetric* activations_ = nullptr;

  static constexpr std::int64_t kChunkTuples = 256;

  std::deque<Event> events_;    // timestamp order, then arrival order
  std::uint64_t base_ = 0;      // global index of the oldest buffered tuple
  std::uint64_t mem_base_ = 0;  // global index of events_.front()
  std::deque<Spilled> spilled_;                         // [base_, mem_base_): in the state store
  std::deque<Chunk> chunks_;                            // how they are stored, oldest first
  std::map<std::uint64_t, std::vector<Tuple>> loaded_;  // chunks read back, by first index
  std::vector<const StreamInfo*> sources_seen_;         // spilled tuples' sources
  std::shared_ptr<StateStore> store_;  // opened on the first spill (in prepare with checkpoints)
  std::deque<StreamInfo> restored_streams_;  // the restored tuples' sources
  std::uint64_t restored_end_ = 0;           // indices below it were restored
  std::optional<TopologyContext> context_;
  bool spill_broken_ = false;
  CounterMetric* spilled_counter_ = nullptr;
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
