#include "rstorm/worker/field_hash.hpp"

#include <xxhash.h>

#include <bit>
#include <cstring>

namespace rstorm::worker {
namespace {

// `v`'s eight bytes, little-endian, at `p`; returns the byte after them.
char* put_u64(std::uint64_t v, char* p) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return p + 8;
}

// The number of canonical bytes of `value`.
std::size_t canonical_size(const Value& value) {
  switch (value.type()) {
    case ValueType::kNull:
      return 1;
    case ValueType::kBool:
      return 2;
    case ValueType::kInt:
    case ValueType::kDouble:
      return 9;
    case ValueType::kString:
      return 9 + value.as_string().size();
    case ValueType::kBytes:
      return 9 + value.as_bytes().size();
  }
  return 1;
}

// Writes the canonical_size(value) bytes of `value` at `p`.
void put_canonical(const Value& value, char* p) {
  *p++ = static_cast<char>(value.type());
  switch (value.type()) {
    case ValueType::kNull: break;
    case ValueType::kBool:
      *p = value.as_bool() ? 1 : 0;
      break;
    case ValueType::kInt:
      put_u64(static_cast<std::uint64_t>(value.as_int()), p);
      break;
    case ValueType::kDouble:
      put_u64(std::bit_cast<std::uint64_t>(value.as_double()), p);
      break;
    case ValueType::kString: {
      const std::string& s = value.as_string();
      p = put_u64(s.size(), p);
      if (!s.empty()) std::memcpy(p, s.data(), s.size());
      break;
    }
    case ValueType::kBytes: {
      const Bytes& b = value.as_bytes();
      p = put_u64(b.size(), p);
      if (!b.empty()) std::memcpy(p, b.data(), b.size());
      break;
    }
  }
}

[[gnu::noinline]] std::uint64_t fields_hash_long(std::span<const Value> values,
                                                 std::span<const int> indices) {
  thread_local std::string buffer;  // reused: no allocation once warm
  buffer.clear();
  for (int i : indices) append_canonical_bytes(values[static_cast<std::size_t>(i)], buffer);
  return XXH3_64bits(buffer.data(), buffer.size());
}

}  // namespace

void append_canonical_bytes(const Value& value, std::string& out) {
  const std::size_t at = out.size();
  out.resize(at + canonical_size(value));
  put_canonical(value, out.data() + at);
}

std::uint64_t fields_hash(std::span<const Value> values, std::span<const int> indices) {
  // The bytes on the stack when they fit (a word, a few keys): written in
  // place, where appending them to a string checked its room at every
  // piece (a fifth of a word count's split).
  char local[256];
  std::size_t n = 0;
  for (int i : indices) {
    const Value& v = values[static_cast<std::size_t>(i)];
    const std::size_t size = canonical_size(v);
    if (size > sizeof(local) - n) return fields_hash_long(values, indices);
    put_canonical(v, local + n);
    n += size;
  }
  return XXH3_64bits(local, n);
}

}  // namespace rstorm::worker
