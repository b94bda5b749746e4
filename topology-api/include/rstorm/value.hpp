// Value: one field of a tuple. A tagged union of null, bool, int64, double,
// string and bytes. Values are copyable and cheap to move; small strings do not
// allocate. Thread-compatible.
#pragma once

#include <boost/container/small_vector.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace rstorm {

// Raw bytes, distinct from text.
using Bytes = std::vector<std::uint8_t>;

enum class ValueType : std::uint8_t { kNull, kBool, kInt, kDouble, kString, kBytes };

// Name of a value type as it appears in error messages: "null", "bool", "int64",
// "double", "string", "bytes".
std::string_view type_name(ValueType type);

class Value {
 public:
  Value() = default;  // null
  Value(std::nullptr_t) {}
  Value(bool v) : v_(v) {}
  // Every integral type other than bool is stored as int64.
  template <typename I>
    requires(std::is_integral_v<I> && !std::is_same_v<I, bool>)
  Value(I v) : v_(static_cast<std::int64_t>(v)) {}
  Value(double v) : v_(v) {}
  Value(float v) : v_(static_cast<double>(v)) {}
  Value(std::string v) : v_(std::move(v)) {}
  Value(std::string_view v) : v_(std::string(v)) {}
  Value(const char* v) : v_(std::string(v)) {}
  Value(Bytes v) : v_(std::move(v)) {}

  ValueType type() const { return static_cast<ValueType>(v_.index()); }
  bool is_null() const { return type() == ValueType::kNull; }

  // Unchecked access. REQUIRES: type() matches; otherwise the behaviour is the
  // std::get exception (Tuple's getters check and name the field instead).
  bool as_bool() const { return std::get<bool>(v_); }
  std::int64_t as_int() const { return std::get<std::int64_t>(v_); }
  double as_double() const { return std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const Bytes& as_bytes() const { return std::get<Bytes>(v_); }

  // A short human-readable rendering, for logs and error messages.
  std::string to_string() const;

  friend bool operator==(const Value&, const Value&) = default;

 private:
  std::variant<std::monostate, bool, std::int64_t, double, std::string, Bytes> v_;
};

// How many values a tuple holds without a heap allocation.
inline constexpr std::size_t kInlineValues = 4;

// The values of one tuple, in the order of the stream's declared fields. A
// vector whose first kInlineValues values are stored inside it: a tuple of a
// few values costs no allocation to build, copy, send to another executor or
// free (malloc and free were half of a fused chain's instructions when Values
// was a std::vector). Same interface as std::vector.
using Values = boost::container::small_vector<Value, kInlineValues>;

}  // namespace rstorm
