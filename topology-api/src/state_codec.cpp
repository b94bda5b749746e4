// The codecs of rstorm/state_codec.hpp that are not templates.
#include "rstorm/state_codec.hpp"

#include <bit>

namespace rstorm {
namespace {

constexpr std::uint64_t kDoubleSign = std::uint64_t{1} << 63;

std::string encode_u64(std::uint64_t u) {
  std::string out(8, '\0');
  for (std::size_t i = 0; i < 8; ++i)
    out[7 - i] = static_cast<char>(static_cast<std::uint8_t>(u >> (8 * i)));
  return out;
}

std::uint64_t decode_u64(std::string_view bytes) {
  std::uint64_t u = 0;
  for (char c : bytes) u = (u << 8) | static_cast<std::uint8_t>(c);
  return u;
}

}  // namespace

StateCodecError::StateCodecError(std::string type, std::string why)
    : std::runtime_error("cannot be decoded as " + type + ": " + why),
      type_(std::move(type)),
      why_(std::move(why)) {}

StateCodecError::~StateCodecError() = default;

namespace detail {

void throw_size_error(std::string_view type, std::size_t size, std::size_t expected) {
  throw StateCodecError(std::string(type), std::to_string(size) + (size == 1 ? " byte" : " bytes") +
                                               ", expected " + std::to_string(expected));
}

}  // namespace detail

bool StateCodec<bool>::decode(std::string_view bytes) {
  if (bytes.size() != 1) detail::throw_size_error("bool", bytes.size(), 1);
  if (bytes[0] != '\0' && bytes[0] != '\1') {
    throw StateCodecError("bool", "byte " + std::to_string(static_cast<std::uint8_t>(bytes[0])) +
                                      ", expected 0 or 1");
  }
  return bytes[0] == '\1';
}

// Negative doubles have every bit flipped (a larger magnitude sorts first),
// others only the sign bit (they sort after every negative).
std::string StateCodec<double>::encode(double v) {
  const auto u = std::bit_cast<std::uint64_t>(v);
  return encode_u64((u & kDoubleSign) ? ~u : (u | kDoubleSign));
}

double StateCodec<double>::decode(std::string_view bytes) {
  if (bytes.size() != 8) detail::throw_size_error("double", bytes.size(), 8);
  const std::uint64_t e = decode_u64(bytes);
  return std::bit_cast<double>((e & kDoubleSign) ? (e & ~kDoubleSign) : ~e);
}

std::string StateCodec<Value>::encode(const Value& v) {
  std::string out(1, static_cast<char>(v.type()));
  switch (v.type()) {
    case ValueType::kNull:
      break;
    case ValueType::kBool:
      out += StateCodec<bool>::encode(v.as_bool());
      break;
    case ValueType::kInt:
      out += StateCodec<std::int64_t>::encode(v.as_int());
      break;
    case ValueType::kDouble:
      out += StateCodec<double>::encode(v.as_double());
      break;
    case ValueType::kString:
      out += v.as_string();
      break;
    case ValueType::kBytes:
      out += StateCodec<Bytes>::encode(v.as_bytes());
      break;
  }
  return out;
}

Value StateCodec<Value>::decode(std::string_view bytes) {
  if (bytes.empty()) throw StateCodecError("Value", "0 bytes, expected a type byte");
  const auto tag = static_cast<std::uint8_t>(bytes[0]);
  const std::string_view payload = bytes.substr(1);
  try {
    switch (static_cast<ValueType>(tag)) {
      case ValueType::kNull:
        if (!payload.empty()) detail::throw_size_error("null", payload.size(), 0);
        return Value();
      case ValueType::kBool:
        return Value(StateCodec<bool>::decode(payload));
      case ValueType::kInt:
        return Value(StateCodec<std::int64_t>::decode(payload));
      case ValueType::kDouble:
        return Value(StateCodec<double>::decode(payload));
      case ValueType::kString:
        return Value(std::string(payload));
      case ValueType::kBytes:
        return Value(StateCodec<Bytes>::decode(payload));
    }
  } catch (const StateCodecError& e) {
    throw StateCodecError("Value", e.type() + " of " + e.why());
  }
  throw StateCodecError("Value", "unknown type byte " + std::to_string(tag));
}

}  // namespace rstorm
