#include "rstorm/value.hpp"

#include <cstdio>
#include <string>

namespace rstorm {

std::string_view type_name(ValueType type) {
  switch (type) {
    case ValueType::kNull: return "null";
    case ValueType::kBool: return "bool";
    case ValueType::kInt: return "int64";
    case ValueType::kDouble: return "double";
    case ValueType::kString: return "string";
    case ValueType::kBytes: return "bytes";
  }
  return "unknown";
}

std::string Value::to_string() const {
  switch (type()) {
    case ValueType::kNull: return "null";
    case ValueType::kBool: return as_bool() ? "true" : "false";
    case ValueType::kInt: return std::to_string(as_int());
    case ValueType::kDouble: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", as_double());
      return buf;
    }
    case ValueType::kString: return as_string();
    case ValueType::kBytes: {
      static constexpr char kHex[] = "0123456789abcdef";
      std::string out = "0x";
      for (std::uint8_t b : as_bytes()) {
        out += kHex[b >> 4];
        out += kHex[b & 15];
      }
      return out;
    }
  }
  return "?";
}

}  // namespace rstorm
