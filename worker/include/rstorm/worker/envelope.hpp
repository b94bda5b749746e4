// Envelope: what moves between executors: a tuple for a task, or an acking
// message. Batch: the unit a producer hands to a queue (or, later, to a
// transport), so that per-message costs are paid once per batch.
#pragma once

#include <cstdint>
#include <vector>

#include "rstorm/ids.hpp"
#include "rstorm/tuple.hpp"

namespace rstorm::worker {

enum class MessageKind : std::uint8_t {
  kTuple,        // `tuple` for task `dest`
  kAckInit,      // spout -> acker: tree `root` starts with XOR `value`, spout task `task`
  kAck,          // bolt -> acker: XOR `value` into tree `root`
  kFail,         // bolt -> acker: tree `root` failed
  kAckComplete,  // acker -> spout: tree `root` completed
  kAckFailed,    // acker -> spout: tree `root` failed
};

struct Envelope {
  TaskId dest;
  MessageKind kind = MessageKind::kTuple;
  TaskId task;
  std::uint64_t root = 0;
  std::uint64_t value = 0;
  Tuple tuple;
};

using Batch = std::vector<Envelope>;

}  // namespace rstorm::worker
