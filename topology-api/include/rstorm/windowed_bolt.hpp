// WindowedBolt: a bolt that processes windows of tuples instead of one tuple at
// a time, as Storm's BaseWindowedBolt: count- or time-based, tumbling or
// sliding (any mix of a length and a slide in tuples or milliseconds), in
// processing time or in event time read from a timestamp field, with
// watermarks, a lag for out-of-order input, an idleness timeout, and a stream
// for late tuples.
//
//   b.set_bolt("top", [] { return std::make_unique<TopWords>(); }, 2)
//       .fields_grouping("split", Fields{"word"})
//       .with_window(Duration(10'000), Duration(1'000))   // sliding: 10 s every 1 s
//       .with_timestamp_field("ts")                       // event time
//       .with_lag(2'000)
//       .with_late_tuple_stream("late");
//
// Semantics (DESIGN.md, "State, windows and checkpoints"):
//  - Every tuple has a timestamp in ms: the value of the timestamp field (an
//    int64; event time) or the wall clock when it arrived (processing time).
//  - A window activation hands the bolt every tuple in the window, what is new
//    since the last activation and what left the window since then.
//  - A duration slide S makes windows end at multiples of S (aligned to the
//    epoch); the window ending at T holds the tuples with T - L <= ts < T for a
//    duration length L, or the last N tuples with ts < T for a count length N.
//    A count slide N activates after every N tuples; the window ends after the
//    N-th (its last tuple's ts + 1), same lengths.
//  - Event time: the bolt tracks, per upstream task, the largest timestamp it
//    sent. Every watermark interval the watermark becomes the smallest of
//    these (less the lag); an upstream task that sent nothing for the idleness
//    timeout is left out, so an idle input does not hold the windows back. When
//    every input is idle, event time moves on with the wall clock from the
//    newest timestamp seen, so a finite input's last windows are activated and
//    its tuples acked. Windows ending at or before the
//    watermark are activated in order. A tuple whose timestamp is below the
//    watermark is late: it is emitted, with its values, on the late tuple
//    stream when one is set (anchored to it) and acked. The watermark never
//    goes back.
//  - Processing time: duration-slide windows are activated by a timer on the
//    bolt's executor thread once their end has passed; count slides as tuples
//    arrive.
//  - Acking: a tuple is acked when it leaves the window (or when it is known
//    never to enter one), not when it arrives, so its tree completes only once
//    every window that held it was processed. What the bolt emits during
//    execute() without anchors is anchored to every tuple of the window (as
//    Storm does). Keep a count window's length plus slide below
//    topology.max.spout.pending, and a time window's below the message timeout:
//    build() refuses a topology that cannot work (see below).
//  - An empty window is not activated.
//  - Checkpoints (topology.state.checkpointing): the window is part of the
//    task's state. At each checkpoint its buffered tuples, what expired since
//    the last activation, the watermark and where the next window ends are
//    written to the task's state store; a task restored from a checkpoint
//    goes on from there, so that, fed what its inputs replay, it activates
//    the same windows as a run without the restart. Restored tuples come
//    without their anchors: their tuple trees ended with the run that took
//    the checkpoint.
//  - Memory: a task keeps at most topology.bolts.window.max.tuples.in.memory
//    (1,000,000) buffered tuples in memory; older ones spill, in chunks, to
//    the task's state store (rstorm/state.hpp; RocksDB on a cluster), and are
//    read back for the activations whose windows reach them. In event time
//    only tuples below the watermark spill. A chunk that cannot be read back
//    is reported (report_error) and its tuples are left out of their windows
//    and not acked: their spouts replay them at the message timeout.
//
// Checked when the topology is built (errors name the component): one length
// and at most one slide (default: the length, a tumbling window), each > 0; a
// lag and an idleness timeout >= 0, a watermark interval >= 1; a late tuple
// stream only with a timestamp field, not "default"; and against the
// topology's config (LoadedTopology::build): a duration length plus slide must
// be below topology.message.timeout.secs, a count length plus slide at most
// topology.max.spout.pending times the spouts' tasks when that is set.
//
// Thread contract: as Bolt. prepare, execute and cleanup run on the executor's
// thread; the window and its tuples are valid during execute() only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rstorm/bolt.hpp"

namespace rstorm {

// A window length or slide: a number of tuples or a duration in ms.
struct WindowSize {
  enum class Unit { kCount, kDuration };
  Unit unit = Unit::kCount;
  std::int64_t value = 0;  // tuples, or milliseconds

  friend bool operator==(const WindowSize&, const WindowSize&) = default;
};

// Storm's spellings: Count(100), Duration(5000) (ms).
inline WindowSize Count(std::int64_t tuples) { return {WindowSize::Unit::kCount, tuples}; }
inline WindowSize Duration(std::int64_t millis) { return {WindowSize::Unit::kDuration, millis}; }
inline WindowSize Duration(std::chrono::milliseconds d) {
  return {WindowSize::Unit::kDuration, d.count()};
}

// The tuples of one window activation, in timestamp order (arrival order
// among equal timestamps).
class TupleWindow {
 public:
  TupleWindow(std::vector<const Tuple*> tuples, std::vector<const Tuple*> fresh,
              std::vector<const Tuple*> expired, std::int64_t start_ms, std::int64_t end_ms)
      : tuples_(std::move(tuples)),
        new_(std::move(fresh)),
        expired_(std::move(expired)),
        start_ms_(start_ms),
        end_ms_(end_ms) {}

  // Every tuple in the window.
  const std::vector<const Tuple*>& get() const { return tuples_; }
  // The tuples of get() that were not in the last activated window.
  const std::vector<const Tuple*>& get_new() const { return new_; }
  // The tuples of the last activated window that are not in this one.
  const std::vector<const Tuple*>& get_expired() const { return expired_; }
  // Every tuple's timestamp is below end_timestamp(). For a duration length,
  // start_timestamp() = end - length and every timestamp is at or above it;
  // for a count length it is the first tuple's timestamp.
  std::int64_t start_timestamp() const { return start_ms_; }
  std::int64_t end_timestamp() const { return end_ms_; }

 private:
  std::vector<const Tuple*> tuples_;
  std::vector<const Tuple*> new_;
  std::vector<const Tuple*> expired_;
  std::int64_t start_ms_;
  std::int64_t end_ms_;
};

class WindowedBolt {
 public:
  virtual ~WindowedBolt();

  // `collector` stays valid until cleanup() returns. Emits without anchors
  // made during execute() are anchored to the window's tuples.
  virtual void prepare([[maybe_unused]] const Config& conf,
                       [[maybe_unused]] const TopologyContext& context,
                       [[maybe_unused]] OutputCollector& collector) {}
  // One window activation. The window's tuples are acked by the runtime when
  // they leave the window; do not ack them (a tuple failed here is failed).
  virtual void execute(const TupleWindow& window) = 0;
  virtual void cleanup() {}
  // As Bolt::pre_checkpoint: called before the task's state is snapshotted,
  // after the window itself was written to it. A bolt that keeps a result
  // it updates from get_new() and get_expired() can rebuild it from get()
  // at its first activation after prepare() instead.
  virtual void pre_checkpoint([[maybe_unused]] std::int64_t checkpoint) {}
  // Do not declare the late tuple stream: the builder declares it with the
  // fields of the bolt's input.
  virtual void declare_output_fields(OutputFieldsDeclarer& declarer) = 0;
};

using WindowedBoltFactory = std::function<std::unique_ptr<WindowedBolt>()>;

// Runs a WindowedBolt as a Bolt; what TopologyBuilder does with one. The
// window settings are read from the component's config in prepare().
std::unique_ptr<Bolt> adapt_windowed_bolt(std::unique_ptr<WindowedBolt> windowed);

namespace detail {
// For tests: the same with a clock (ms) for processing time and idleness.
std::unique_ptr<Bolt> adapt_windowed_bolt(std::unique_ptr<WindowedBolt> windowed,
                                          std::function<std::int64_t()> clock_ms);
}  // namespace detail

}  // namespace rstorm
