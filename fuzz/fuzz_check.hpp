// What the fuzz targets share: fuzz_check(), which turns a broken property of a
// decoder (a round trip that changes the value, an error that leaves output
// behind) into a crash libFuzzer records, with the property printed first; and
// the split of an input into the selector byte that picks what to decode and
// the bytes to decode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace rstorm::fuzz {

inline void fuzz_check(bool holds, std::string_view property) {
  if (holds) return;
  std::fprintf(stderr, "fuzz check failed: %.*s\n", static_cast<int>(property.size()),
               property.data());
  std::abort();
}

// An input: its first byte picks among `choices` decoders, the rest is theirs.
struct Selected {
  unsigned choice = 0;
  std::string_view bytes;
};

// REQUIRES: size > 0, choices > 0.
inline Selected select(const std::uint8_t* data, std::size_t size, unsigned choices) {
  return Selected{data[0] % choices,
                  std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1)};
}

}  // namespace rstorm::fuzz
