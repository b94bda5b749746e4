#include "rstorm/worker/field_hash.hpp"

#include <xxhash.h>

#include <bit>
#include <cstring>

namespace rstorm::worker {
namespace {

void append_u64(std::uint64_t v, std::string& out) {
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out.append(bytes, 8);
}

}  // namespace

void append_canonical_bytes(const Value& value, std::string& out) {
  out.push_back(static_cast<char>(value.type()));
  switch (value.type()) {
    case ValueType::kNull: break;
    case ValueType::kBool: out.push_back(value.as_bool() ? 1 : 0); break;
    case ValueType::kInt: append_u64(static_cast<std::uint64_t>(value.as_int()), out); break;
    case ValueType::kDouble: append_u64(std::bit_cast<std::uint64_t>(value.as_double()), out); break;
    case ValueType::kString:
      append_u64(value.as_string().size(), out);
      out.append(value.as_string());
      break;
    case ValueType::kBytes:
      append_u64(value.as_bytes().size(), out);
      out.append(reinterpret_cast<const char*>(value.as_bytes().data()), value.as_bytes().size());
      break;
  }
}

std::uint64_t fields_hash(const Values& values, std::span<const int> indices) {
  thread_local std::string buffer;  // reused: no allocation once warm
  buffer.clear();
  for (int i : indices) append_canonical_bytes(values[static_cast<std::size_t>(i)], buffer);
  return XXH3_64bits(buffer.data(), buffer.size());
}

}  // namespace rstorm::worker
