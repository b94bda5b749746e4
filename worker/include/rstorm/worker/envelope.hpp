// Envelope: what moves between executors: a tuple for a task, or an acking
// message. Batch: the unit a producer hands to a queue (or, later, to a
// transport), so that per-message costs are paid once per batch.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "rstorm/ids.hpp"
#include "rstorm/tuple.hpp"

namespace rstorm::worker {

enum class MessageKind : std::uint8_t {
  kTuple,        // `tuple` for task `dest`
  kAckInit,      // spout -> acker: tree root() starts with XOR value(), spout task task()
  kAck,          // bolt -> acker: XOR value() into tree root()
  kFail,         // bolt -> acker: tree root() failed
  kAckComplete,  // acker -> spout: tree root() completed
  kAckFailed,    // acker -> spout: tree root() failed
  // Checkpoints (checkpoint.hpp). A barrier travels with the tuples, in
  // order, on the data path (never the control lane): root() is the
  // checkpoint, task() the task that sent it.
  kBarrier,
  // task -> coordinator: task() stored its part of checkpoint root(), of
  // value() bytes (kCheckpointPartFailed: it could not).
  kCheckpointDone,
};

// kCheckpointDone's value() when the task could not store its part.
inline constexpr std::uint64_t kCheckpointPartFailed = ~std::uint64_t{0};

// Whether envelopes of `kind` are acking messages, which one envelope may
// carry many of: each (root, value) pair is one message, all of the same
// kind from task() to dest (Transfer::send_control coalesces them, as Storm's
// acker protocol allows: the acker XORs, so their order does not matter).
inline bool is_acking(MessageKind kind) {
  return kind >= MessageKind::kAckInit && kind <= MessageKind::kAckFailed;
}

// Whether envelopes of `kind` travel in order with tuples (the data lane).
inline bool travels_with_tuples(MessageKind kind) {
  return kind == MessageKind::kTuple || kind == MessageKind::kBarrier;
}

// A control message keeps its fields inside the (otherwise empty) tuple: the
// task as its source task, (root, value) as its first anchor. That keeps an
// envelope at the size of a tuple plus a few bytes.
//
// Envelopes are written by one thread and read and cleared by others, so
// what moves between cores is cache lines: an envelope starts on a line of
// its own (4 lines in all), with its destination and kind ahead of the
// tuple's small fields and the values last (see Tuple).
struct alignas(64) Envelope {
  // User-provided, so that `Envelope()` (a batch's emplace_back) does not
  // zero the whole envelope, the values' inline storage included, before
  // the members' own initializers run.
  Envelope() {}
  Envelope(const Envelope&) = default;
  Envelope& operator=(const Envelope&) = default;
  // noexcept, so that a growing Batch moves its envelopes rather than copy
  // them (values and all): Values' move is not declared noexcept, though it
  // never throws (it steals the heap buffer or moves the inline values into
  // inline room of the same size).
  Envelope(Envelope&&) noexcept = default;
  Envelope& operator=(Envelope&&) noexcept = default;

  TaskId dest;
  MessageKind kind = MessageKind::kTuple;
  Tuple tuple;

  // Makes a used envelope a fresh one for `d` (values are assigned by the
  // caller): a fused member's envelope is reused for every tuple.
  void reuse(TaskId d) {
    dest = d;
    kind = MessageKind::kTuple;
    tuple.reset_tracking();
  }

  // REQUIRES: a fresh or reused envelope (reuse): no anchors.
  void set_control(MessageKind k, std::uint64_t root, std::uint64_t value, TaskId task) {
    kind = k;
    tuple.mutable_values().clear();  // a reused envelope's values
    tuple.set_source(nullptr, task);
    tuple.mutable_anchors().xor_in(root, value);
  }
  // REQUIRES: kind != kTuple. The first message; an acking envelope holds
  // messages() of them (is_acking), any other control envelope one.
  std::uint64_t root() const { return tuple.anchors()[0].root; }
  std::uint64_t value() const { return tuple.anchors()[0].edge; }
  std::size_t messages() const { return tuple.anchors().size(); }
  std::uint64_t root(std::size_t i) const { return tuple.anchors()[i].root; }
  std::uint64_t value(std::size_t i) const { return tuple.anchors()[i].edge; }
  TaskId task() const { return tuple.source_task(); }
};

static_assert(std::is_nothrow_move_constructible_v<Envelope>);

using Batch = std::vector<Envelope>;

}  // namespace rstorm::worker
