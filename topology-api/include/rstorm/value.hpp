// Value: one field of a tuple. A tagged union of null, bool, int64, double,
// string and bytes. Values are copyable and cheap to move; small strings do not
// allocate. Thread-compatible.
#pragma once

#include <bit>
#include <boost/container/small_vector.hpp>
#include <cstddef>
#include <cstdint>
#include <new>
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
  Value() noexcept : bits_(0) {}  // null
  Value(std::nullptr_t) noexcept : bits_(0) {}
  Value(bool v) noexcept : bits_(v ? 1 : 0), type_(ValueType::kBool) {}
  // Every integral type other than bool is stored as int64.
  template <typename I>
  requires(std::is_integral_v<I> && !std::is_same_v<I, bool>) Value(I v)
  noexcept
      : bits_(static_cast<std::uint64_t>(static_cast<std::int64_t>(v))), type_(ValueType::kInt) {}
  Value(double v) noexcept : bits_(std::bit_cast<std::uint64_t>(v)), type_(ValueType::kDouble) {}
  Value(float v) noexcept : Value(static_cast<double>(v)) {}
  Value(std::string v) : type_(ValueType::kString) { new (&string_) std::string(std::move(v)); }
  Value(std::string_view v) : type_(ValueType::kString) { new (&string_) std::string(v); }
  Value(const char* v) : type_(ValueType::kString) { new (&string_) std::string(v); }
  Value(Bytes v) : type_(ValueType::kBytes) { new (&bytes_) Bytes(std::move(v)); }

  // Null, bool, int64 and double are 8 bytes and a tag: copied, moved and
  // destroyed inline, without a dispatch on the type (a std::variant's visit
  // was a tenth of a fused chain's instructions). Strings and bytes take
  // the out-of-line path.
  Value(const Value& o) : type_(o.type_) {
    if (o.scalar()) {
      bits_ = o.bits_;
    } else {
      copy_from(o);
    }
  }
  Value(Value&& o) noexcept : type_(o.type_) {
    if (o.scalar()) {
      bits_ = o.bits_;
    } else {
      move_from(std::move(o));
    }
  }
  Value& operator=(const Value& o) {
    if (both_scalar(o)) {
      bits_ = o.bits_;
      type_ = o.type_;
    } else if (this != &o) {
      assign_slow(o);
    }
    return *this;
  }
  Value& operator=(Value&& o) noexcept {
    if (both_scalar(o)) {
      bits_ = o.bits_;
      type_ = o.type_;
    } else if (this != &o) {
      move_assign_slow(std::move(o));
    }
    return *this;
  }
  ~Value() {
    if (!scalar()) destroy();
  }
  // For the runtime: copies `o` when both are null, bool, int64 or double
  // (a copy of 8 bytes and a tag, no call on any path); false, with nothing
  // done, otherwise.
  bool assign_if_scalar(const Value& o) {
    if (!both_scalar(o)) return false;
    bits_ = o.bits_;
    type_ = o.type_;
    return true;
  }
  // assign_if_scalar of `from[0]` and `from[1]` to `to[0]` and `to[1]`, with
  // one test of the four tags: the usual pair of a fused chain's tuple.
  static bool assign_two_if_scalar(Value* to, const Value* from) {
    if ((static_cast<unsigned>(to[0].type_) | static_cast<unsigned>(to[1].type_)) >= 4) {
      return false;
    }
    return assign_two_to_scalars(to, from);
  }
  // assign_two_if_scalar where `to[0]` and `to[1]` are known to be scalars
  // (a runtime's slot kept so): only the two tags of `from` are tested.
  static bool assign_two_to_scalars(Value* to, const Value* from) {
    if ((static_cast<unsigned>(from[0].type_) | static_cast<unsigned>(from[1].type_)) >= 4) {
      return false;
    }
    to[0].bits_ = from[0].bits_;
    to[1].bits_ = from[1].bits_;
    // A reused slot's tags are mostly those already there: tested, not
    // stored again (a store costs more than a load on this path).
    if (to[0].type_ != from[0].type_ || to[1].type_ != from[1].type_) [[unlikely]] {
      to[0].type_ = from[0].type_;
      to[1].type_ = from[1].type_;
    }
    return true;
  }

  ValueType type() const { return type_; }
  bool is_null() const { return type() == ValueType::kNull; }

  // Unchecked access. REQUIRES: type() matches; otherwise throws
  // std::bad_variant_access (Tuple's getters check and name the field
  // instead).
  bool as_bool() const {
    expect(ValueType::kBool);
    return bits_ != 0;
  }
  std::int64_t as_int() const {
    expect(ValueType::kInt);
    return static_cast<std::int64_t>(bits_);
  }
  double as_double() const {
    expect(ValueType::kDouble);
    return std::bit_cast<double>(bits_);
  }
  const std::string& as_string() const {
    expect(ValueType::kString);
    return string_;
  }
  const Bytes& as_bytes() const {
    expect(ValueType::kBytes);
    return bytes_;
  }

  // A short human-readable rendering, for logs and error messages.
  std::string to_string() const;

  // Same type and equal value (doubles compare as doubles: NaN != NaN).
  friend bool operator==(const Value& a, const Value& b);

 private:
  bool scalar() const { return type_ < ValueType::kString; }
  // scalar() && o.scalar() in one test: the scalar tags are 0 to 3.
  bool both_scalar(const Value& o) const {
    static_assert(static_cast<int>(ValueType::kString) == 4 &&
                  static_cast<int>(ValueType::kBytes) == 5);
    return (static_cast<unsigned>(type_) | static_cast<unsigned>(o.type_)) < 4;
  }
  void expect(ValueType t) const {
    if (type_ != t) [[unlikely]]
      throw std::bad_variant_access();
  }
  // REQUIRES: !o.scalar(); this holds no string or bytes (type_ set to o's).
  void copy_from(const Value& o);
  void move_from(Value&& o) noexcept;
  void assign_slow(const Value& o);
  void move_assign_slow(Value&& o) noexcept;
  void destroy() noexcept;

  union {
    std::uint64_t bits_;  // null (0), bool (0/1), int64, double (its bits)
    std::string string_;
    Bytes bytes_;
  };
  ValueType type_ = ValueType::kNull;
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
