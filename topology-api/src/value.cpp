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

void Value::copy_from(const Value& o) {
  if (o.type_ == ValueType::kString) {
    new (&string_) std::string(o.string_);
  } else {
    new (&bytes_) Bytes(o.bytes_);
  }
}

void Value::move_from(Value&& o) noexcept {
  if (o.type_ == ValueType::kString) {
    new (&string_) std::string(std::move(o.string_));
  } else {
    new (&bytes_) Bytes(std::move(o.bytes_));
  }
}

void Value::assign_slow(const Value& o) {
  if (type_ == o.type_ && type_ == ValueType::kString) {
    string_ = o.string_;
    return;
  }
  if (type_ == o.type_ && type_ == ValueType::kBytes) {
    bytes_ = o.bytes_;
    return;
  }
  Value copy(o);  // may throw (allocation): *this unchanged if it does
  move_assign_slow(std::move(copy));
}

void Value::move_assign_slow(Value&& o) noexcept {
  if (!scalar()) destroy();
  type_ = o.type_;
  if (o.scalar()) {
    bits_ = o.bits_;
  } else {
    move_from(std::move(o));
  }
}

void Value::destroy() noexcept {
  if (type_ == ValueType::kString) {
    string_.~basic_string();
  } else {
    bytes_.~Bytes();
  }
  bits_ = 0;
  type_ = ValueType::kNull;
}

bool operator==(const Value& a, const Value& b) {
  if (a.type_ != b.type_) return false;
  switch (a.type_) {
    case ValueType::kNull:
      return true;
    case ValueType::kBool:
    case ValueType::kInt:
      return a.bits_ == b.bits_;
    case ValueType::kDouble:
      return a.as_double() == b.as_double();
    case ValueType::kString:
      return a.string_ == b.string_;
    case ValueType::kBytes:
      return a.bytes_ == b.bytes_;
  }
  return false;
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
