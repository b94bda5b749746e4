// Strong id types of the scheduler's model: a NodeId is not a RackId, and an
// ExecutorId is not a task number. Values, thread-compatible.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace rstorm::scheduler {

// A value of type T that only compares with values of the same Tag.
template <typename T, typename Tag>
class NamedType {
 public:
  NamedType() = default;
  explicit NamedType(T value) : value_(std::move(value)) {}

  const T& value() const { return value_; }

  friend auto operator<=>(const NamedType&, const NamedType&) = default;
  friend bool operator==(const NamedType&, const NamedType&) = default;

 private:
  T value_{};
};

using NodeId = NamedType<std::string, struct NodeIdTag>;  // supervisor id
using RackId = NamedType<std::string, struct RackIdTag>;
using TopologyId = NamedType<std::string, struct TopologyIdTag>;
using ExecutorId = NamedType<std::uint32_t, struct ExecutorIdTag>;  // index in the request

// One worker process place: a node and one of its ports.
struct WorkerSlot {
  NodeId node;
  int port = 0;

  friend auto operator<=>(const WorkerSlot&, const WorkerSlot&) = default;
  friend bool operator==(const WorkerSlot&, const WorkerSlot&) = default;
};

// Orders ids as people read them: "node-2" before "node-10". Digit runs compare
// by value, everything else byte by byte; equal-valued runs fall back to length.
bool natural_less(std::string_view a, std::string_view b);

}  // namespace rstorm::scheduler
