// Ids and reserved names shared by the API and the runtime.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <string_view>

namespace rstorm {

// A task: the unit of routing. Task ids are unique within a topology, start at 1
// and are assigned per component in component-id order (system tasks last).
struct TaskId {
  std::int32_t value = -1;

  constexpr TaskId() = default;
  constexpr explicit TaskId(std::int32_t v) : value(v) {}
  constexpr bool valid() const { return value >= 0; }
  friend constexpr auto operator<=>(TaskId, TaskId) = default;
};

// The stream a component emits to when no stream is named.
inline constexpr std::string_view kDefaultStream = "default";
// Tick tuples come from this component on this stream.
inline constexpr std::string_view kSystemComponent = "__system";
inline constexpr std::string_view kTickStream = "__tick";
// The acker's component id. Ids starting with "__" are reserved for the system.
inline constexpr std::string_view kAckerComponent = "__acker";

}  // namespace rstorm

template <>
struct std::hash<rstorm::TaskId> {
  std::size_t operator()(rstorm::TaskId t) const noexcept { return std::hash<int>()(t.value); }
};
