// StateCodec<T>: how keyed state (rstorm/state.hpp) stores a T as bytes, as a
// key or as a value. Specialised here for bool, every integral type, double,
// std::string, Bytes and Value.
//
// Encodings, chosen so that the byte order of keys (how a store sorts them and
// the order scans visit them in) is the natural order of the values:
//   integral  sizeof(T) bytes, big-endian, sign bit flipped for signed types
//             (-2 < -1 < 0 < 1 as keys)
//   double    8 bytes, big-endian IEEE 754, negatives with every bit flipped,
//             others with the sign bit flipped (-1.5 < -0.0 < 0.0 < 2.5)
//   bool      1 byte, 0 or 1
//   string    its bytes, unchanged (a string prefix is a key prefix)
//   Bytes     its bytes, unchanged
//   Value     one byte of ValueType, then the payload in the encoding above
//             (null has none): values of one type sort by value
//
// A type of your own: specialise StateCodec for it in namespace rstorm, with a
// static encode and a static decode, before the state that uses it:
//
//   struct Point { std::int32_t x, y; };
//
//   namespace rstorm {
//   template <>
//   struct StateCodec<Point> {
//     static std::string encode(const Point& p) {
//       return StateCodec<std::int32_t>::encode(p.x) + StateCodec<std::int32_t>::encode(p.y);
//     }
//     static Point decode(std::string_view bytes) {
//       if (bytes.size() != 8) throw StateCodecError("Point", std::to_string(bytes.size()) + "
//       bytes, expected 8"); return {StateCodec<std::int32_t>::decode(bytes.substr(0, 4)),
//               StateCodec<std::int32_t>::decode(bytes.substr(4))};
//     }
//   };
//   }  // namespace rstorm
//
// encode must be deterministic (equal values, equal bytes), else a key put
// once is not found again. decode throws StateCodecError when the bytes are
// not a T (they were written with another codec, or by another version of the
// type); KeyValueState reports it as a StateError naming the state and the key.
// Codecs are stateless: thread-safe.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "rstorm/value.hpp"

namespace rstorm {

// Thrown by StateCodec<T>::decode: what() is "cannot be decoded as <type>:
// <why>", e.g. "cannot be decoded as int64: 3 bytes, expected 8".
class StateCodecError : public std::runtime_error {
 public:
  StateCodecError(std::string type, std::string why);
  ~StateCodecError() override;

  const std::string& type() const { return type_; }
  const std::string& why() const { return why_; }

 private:
  std::string type_;
  std::string why_;
};

template <typename T>
struct StateCodec;  // no encoding unless specialised

namespace detail {

// "int8" ... "int64", "uint8" ... "uint64".
template <typename T>
constexpr std::string_view integer_type_name() {
  constexpr bool s = std::is_signed_v<T>;
  switch (sizeof(T)) {
    case 1:
      return s ? "int8" : "uint8";
    case 2:
      return s ? "int16" : "uint16";
    case 4:
      return s ? "int32" : "uint32";
    default:
      return s ? "int64" : "uint64";
  }
}

// Throws StateCodecError(type, "<size> bytes, expected <expected>") ("1 byte").
[[noreturn]] void throw_size_error(std::string_view type, std::size_t size, std::size_t expected);

}  // namespace detail

template <typename T>
requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) struct StateCodec<T> {
  static constexpr std::string_view kName = detail::integer_type_name<T>();
  using Unsigned = std::make_unsigned_t<T>;
  static constexpr Unsigned kSignBit = static_cast<Unsigned>(Unsigned{1} << (sizeof(T) * 8 - 1));

  static std::string encode(T v) {
    auto u = static_cast<Unsigned>(v);
    if constexpr (std::is_signed_v<T>) u = static_cast<Unsigned>(u ^ kSignBit);
    std::string out(sizeof(T), '\0');
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      out[sizeof(T) - 1 - i] = static_cast<char>(static_cast<std::uint8_t>(u >> (8 * i)));
    }
    return out;
  }
  static T decode(std::string_view bytes) {
    if (bytes.size() != sizeof(T)) detail::throw_size_error(kName, bytes.size(), sizeof(T));
    Unsigned u = 0;
    for (char c : bytes) u = static_cast<Unsigned>((u << 8) | static_cast<std::uint8_t>(c));
    if constexpr (std::is_signed_v<T>) u = static_cast<Unsigned>(u ^ kSignBit);
    return static_cast<T>(u);
  }
};

template <>
struct StateCodec<bool> {
  static std::string encode(bool v) { return std::string(1, v ? '\1' : '\0'); }
  static bool decode(std::string_view bytes);
};

template <>
struct StateCodec<double> {
  static std::string encode(double v);
  static double decode(std::string_view bytes);
};

template <>
struct StateCodec<std::string> {
  static std::string encode(const std::string& v) { return v; }
  static std::string decode(std::string_view bytes) { return std::string(bytes); }
};

template <>
struct StateCodec<Bytes> {
  static std::string encode(const Bytes& v) { return std::string(v.begin(), v.end()); }
  static Bytes decode(std::string_view bytes) { return Bytes(bytes.begin(), bytes.end()); }
};

template <>
struct StateCodec<Value> {
  static std::string encode(const Value& v);
  static Value decode(std::string_view bytes);
};

}  // namespace rstorm
