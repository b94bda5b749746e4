// The stable hash behind fields grouping: XXH3-64 over the canonical bytes of
// the grouping fields' values (a type tag, then little-endian integers, IEEE
// doubles, or length-prefixed bytes). The same values map to the same task in
// every process, run and machine. Thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "rstorm/value.hpp"

namespace rstorm::worker {

// Appends the canonical bytes of `value` to `out`.
void append_canonical_bytes(const Value& value, std::string& out);

// Hash of values[indices[0]], values[indices[1]], ...
std::uint64_t fields_hash(std::span<const Value> values, std::span<const int> indices);
inline std::uint64_t fields_hash(const Values& values, std::span<const int> indices) {
  return fields_hash(std::span<const Value>(values.data(), values.size()), indices);
}

}  // namespace rstorm::worker
