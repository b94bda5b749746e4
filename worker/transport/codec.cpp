#include "worker/transport/codec.hpp"

#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <exception>
#include <memory>

#include "rstorm_transport_thrift/data_plane_types.h"

namespace rstorm::transport {
namespace {

using apache::thrift::protocol::TCompactProtocolT;
using apache::thrift::protocol::TType;
using apache::thrift::transport::TMemoryBuffer;
namespace tp = apache::thrift::protocol;
using Protocol = TCompactProtocolT<TMemoryBuffer>;

// The encoder's buffer: a TMemoryBuffer that can also drop the bytes written
// after a point (an optimistic encoding that met an envelope it cannot
// encode).
class EncodeBuffer : public TMemoryBuffer {
 public:
  explicit EncodeBuffer(std::uint32_t size) : TMemoryBuffer(size) {}
  // Keeps the first `size` bytes written. REQUIRES: size <= available_read().
  void truncate(std::uint32_t size) {
    wBase_ = rBase_ + size;
    if (rBound_ > wBase_) rBound_ = wBase_;
  }
};

// Field ids of data_plane.thrift.
constexpr std::int16_t kFrameTuples = 4;
constexpr std::int16_t kBatchEnvelopes = 1;
enum EnvelopeField : std::int16_t {
  kDest = 1, kKind = 2, kSource = 3, kStream = 4, kValues = 5, kAnchors = 6
};
enum ValueField : std::int16_t {
  kNullValue = 1, kBoolValue = 2, kIntValue = 3, kDoubleValue = 4, kStringValue = 5, kBytesValue = 6
};
constexpr int kMaxKind = static_cast<int>(worker::MessageKind::kCheckpointDone);

// A decode failure: the message is what the log line says about the bytes.
struct DecodeError {
  std::string message;
};

// Tuple frames are written and, when laid out as Thrift's own writer lays
// them out, read without going through TCompactProtocol: the bytes are those
// of the compact protocol (field headers as a delta and a type in one byte,
// zigzag varints, little-endian doubles), checked against the generated
// structs by tests/transport/codec_test.cpp.
enum CompactType : std::uint8_t {
  kCompactTrue = 1,
  kCompactFalse = 2,
  kCompactByte = 3,
  kCompactI32 = 5,
  kCompactI64 = 6,
  kCompactDouble = 7,
  kCompactBinary = 8,
  kCompactList = 9,
  kCompactStruct = 12
};
// The first bytes of a tuple frame: Frame field 4 (a struct), then TupleBatch
// field 1 (a list).
constexpr std::uint8_t kTuplesHeader = (kFrameTuples << 4) | kCompactStruct;
constexpr std::uint8_t kEnvelopesHeader = (kBatchEnvelopes << 4) | kCompactList;
constexpr std::uint8_t kStop = 0;

constexpr std::uint8_t field_header(int id_delta, CompactType type) {
  return static_cast<std::uint8_t>((id_delta << 4) | type);
}

// The writer's and the reader's members are inlined into the one function
// that owns each, so that its cursor stays in a register.
#define RSTORM_INLINE [[gnu::always_inline]] inline

// The low 56 bits of `v` as 8 bytes of 7 bits each (little-endian), byte i
// holding bits 7 * i to 7 * i + 6: what pack_7bit_groups undoes.
inline std::uint64_t spread_7bit_groups(std::uint64_t v) {
  std::uint64_t x = v & 0x00FFFFFFFFFFFFFFULL;
  x = ((x << 4) & 0x0FFFFFFF00000000ULL) | (x & 0x000000000FFFFFFFULL);
  x = ((x << 2) & 0x3FFF00003FFF0000ULL) | (x & 0x00003FFF00003FFFULL);
  x = ((x << 1) & 0x7F007F007F007F00ULL) | (x & 0x007F007F007F007FULL);
  return x;
}

// A 64-bit varint of two bytes or more written at `p` as one 8-byte word
// (and a ninth and tenth byte past 56 bits); returns where it ends. The
// bytes are the byte loop's. REQUIRES: 10 bytes of room at `p` (the word
// may write past the varint's end, inside that room).
[[gnu::noinline]] inline std::uint8_t* write_long_varint64(std::uint8_t* p, std::uint64_t v) {
  static_assert(std::endian::native == std::endian::little);
  std::uint64_t x = spread_7bit_groups(v);
  if (v < (std::uint64_t{1} << 56)) {
    const int n = (std::bit_width(v) + 6) / 7;  // 2 to 8
    x |= 0x8080808080808080ULL & ((std::uint64_t{1} << (8 * (n - 1))) - 1);
    std::memcpy(p, &x, sizeof x);
    return p + n;
  }
  x |= 0x8080808080808080ULL;
  std::memcpy(p, &x, sizeof x);
  const std::uint64_t rest = v >> 56;
  if (rest < 0x80) {
    p[8] = static_cast<std::uint8_t>(rest);
    return p + 9;
  }
  p[8] = static_cast<std::uint8_t>(rest | 0x80);
  p[9] = static_cast<std::uint8_t>(rest >> 7);
  return p + 10;
}

// Writes compact-protocol items at `p`; the caller has made room.
struct CompactWriter {
  std::uint8_t* p;

  RSTORM_INLINE void byte(std::uint8_t b) { *p++ = b; }
  RSTORM_INLINE void varint(std::uint64_t v) {
    while (v >= 0x80) {
      *p++ = static_cast<std::uint8_t>(v | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<std::uint8_t>(v);
  }
  RSTORM_INLINE void i32(std::int32_t v) {
    varint((static_cast<std::uint32_t>(v) << 1) ^ static_cast<std::uint32_t>(v >> 31));
  }
  // REQUIRES: 10 bytes of room (write_long_varint64, for six bytes or more).
  RSTORM_INLINE void i64(std::int64_t v) {
    const std::uint64_t u =
        (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
    if (u < (std::uint64_t{1} << 35)) {
      varint(u);  // five bytes at most: the loop is as short
    } else {
      p = write_long_varint64(p, u);
    }
  }
  RSTORM_INLINE void list(std::size_t n, CompactType element) {
    if (n < 15) {
      byte(static_cast<std::uint8_t>((n << 4) | element));
    } else {
      byte(static_cast<std::uint8_t>(0xF0 | element));
      varint(n);
    }
  }
  RSTORM_INLINE void bytes(const void* data, std::size_t n) {
    varint(n);
    if (n > 0) std::memcpy(p, data, n);
    p += n;
  }
};

// Reads a tuple frame laid out as Thrift's writer lays it out. Anything else,
// valid or not (a field out of order or in long form, an unknown field, a
// short buffer), throws NotCanonical, and the frame is read again with
// TCompactProtocol, which accepts every valid encoding and names what is
// wrong with an invalid one.
struct NotCanonical {};

struct Varint {
  const std::uint8_t* end;  // past its last byte
  std::uint64_t value;
};

// The low 7 bits of each of the 8 bytes of `x` (little-endian), packed
// into 56 bits: byte i's bits at 7 * i.
inline std::uint64_t pack_7bit_groups(std::uint64_t x) {
  x &= 0x7F7F7F7F7F7F7F7FULL;
  x = ((x & 0x7F007F007F007F00ULL) >> 1) | (x & 0x007F007F007F007FULL);
  x = ((x & 0x3FFF00003FFF0000ULL) >> 2) | (x & 0x00003FFF00003FFFULL);
  x = ((x & 0x0FFFFFFF00000000ULL) >> 4) | (x & 0x000000000FFFFFFFULL);
  return x;
}

// A varint near the end of the input, read byte by byte: 7 bits a byte, at
// most kMaxBytes bytes.
template <int kMaxBytes>
[[gnu::noinline]] Varint varint_byte_by_byte(const std::uint8_t* p, const std::uint8_t* end) {
  std::uint64_t v = 0;
  for (int i = 0; i < kMaxBytes && p != end; ++i) {
    const std::uint64_t b = *p++;
    v |= (b & 0x7F) << (7 * i);
    if (b < 0x80) return {p, v};
  }
  throw NotCanonical{};
}

// A varint of two bytes or more (an anchor's random 64-bit ids take up to
// ten). With room for ten bytes, its first eight are read as one word: the
// first byte without the continuation bit ends it, and the 7-bit groups
// before it are packed at once, without a branch a byte; otherwise byte by
// byte. Either way what Thrift's reader reads: 7 bits a byte, at most
// kMaxBytes bytes.
template <int kMaxBytes>
RSTORM_INLINE Varint long_varint(const std::uint8_t* p, const std::uint8_t* end) {
  static_assert(kMaxBytes == 5 || kMaxBytes == 10);
  if (end - p < 10) return varint_byte_by_byte<kMaxBytes>(p, end);
  std::uint64_t word;
  std::memcpy(&word, p, sizeof word);
  static_assert(std::endian::native == std::endian::little);
  const std::uint64_t stops = ~word & 0x8080808080808080ULL;
  if (stops != 0) [[likely]] {
    const int bytes = std::countr_zero(stops) / 8 + 1;  // 1 to 8
    if (bytes > kMaxBytes) throw NotCanonical{};
    const std::uint64_t keep =
        bytes == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * bytes)) - 1;
    return {p + bytes, pack_7bit_groups(word & keep)};
  }
  if (kMaxBytes < 9) throw NotCanonical{};
  std::uint64_t v = pack_7bit_groups(word);
  const std::uint64_t b8 = p[8];
  v |= (b8 & 0x7F) << 56;
  if (b8 < 0x80) return {p + 9, v};
  const std::uint64_t b9 = p[9];
  v |= b9 << 63;
  if (b9 < 0x80) return {p + 10, v};
  throw NotCanonical{};
}

struct CompactReader {
  const std::uint8_t* p;
  const std::uint8_t* end;

  RSTORM_INLINE std::size_t left() const { return static_cast<std::size_t>(end - p); }
  RSTORM_INLINE std::uint8_t byte() {
    if (p == end) throw NotCanonical{};
    return *p++;
  }
  // A varint of at most kMaxBytes bytes.
  template <int kMaxBytes>
  RSTORM_INLINE std::uint64_t varint() {
    if (p != end && *p < 0x80) return *p++;
    const Varint r = long_varint<kMaxBytes>(p, end);
    p = r.end;
    return r.value;
  }
  RSTORM_INLINE std::int32_t i32() {
    const std::uint64_t v = varint<5>();
    if (v > UINT32_MAX) throw NotCanonical{};
    const auto u = static_cast<std::uint32_t>(v);
    return static_cast<std::int32_t>((u >> 1) ^ (~(u & 1) + 1));
  }
  RSTORM_INLINE std::int64_t i64() {
    const std::uint64_t u = varint<10>();
    return static_cast<std::int64_t>((u >> 1) ^ (~(u & 1) + 1));
  }
  RSTORM_INLINE double f64() {
    if (left() < 8) throw NotCanonical{};
    std::uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits |= static_cast<std::uint64_t>(p[i]) << (8 * i);
    p += 8;
    return std::bit_cast<double>(bits);
  }
  // A list header of `element`s; every element takes a byte at least.
  RSTORM_INLINE std::size_t list(CompactType element) {
    const std::uint8_t b = byte();
    if ((b & 0x0F) != element) throw NotCanonical{};
    std::size_t n = b >> 4;
    if (n == 15) n = varint<5>();
    if (n > left()) throw NotCanonical{};
    return n;
  }
  // A string's length; its bytes follow at p.
  RSTORM_INLINE std::size_t length() {
    const std::size_t n = varint<5>();
    if (n > left()) throw NotCanonical{};
    return n;
  }
};

}  // namespace

// ---------------------------------------------------------------- encoder

struct FrameEncoder::State {
  std::shared_ptr<EncodeBuffer> buffer = std::make_shared<EncodeBuffer>(64 * 1024);
  Protocol proto{buffer};
  std::vector<std::int32_t> stream_indices;  // per envelope of the batch being encoded
  std::vector<std::size_t> unencodable;

  // Writes a length placeholder; returns its offset.
  std::uint32_t begin_frame() {
    const std::uint32_t start = buffer->available_read();
    const std::uint8_t zeros[kLengthPrefixBytes] = {};
    buffer->write(zeros, kLengthPrefixBytes);
    return start;
  }
  void end_frame(std::uint32_t start) {
    std::uint8_t* base;
    std::uint32_t size;
    buffer->getBuffer(&base, &size);
    const std::uint32_t length = size - start - static_cast<std::uint32_t>(kLengthPrefixBytes);
    base[start] = static_cast<std::uint8_t>(length >> 24);
    base[start + 1] = static_cast<std::uint8_t>(length >> 16);
    base[start + 2] = static_cast<std::uint8_t>(length >> 8);
    base[start + 3] = static_cast<std::uint8_t>(length);
  }
  void write_generated(const wire::Frame& frame) {
    const std::uint32_t start = begin_frame();
    frame.write(&proto);
    end_frame(start);
  }

  // Room for one envelope's bytes at most.
  // Six field headers and a stop (7), three i32 varints and a byte (16),
  // two list headers of a byte and a varint32 (12): 35; an anchor is two i64
  // varints (20); a value a header, a stop and at most 10 more bytes (12)
  // besides a string's own bytes.
  static std::size_t envelope_bound(const worker::Envelope& e) {
    std::size_t n = scalar_bound(e);
    if (e.kind == worker::MessageKind::kTuple) {
      for (const Value& v : e.tuple.values()) {
        if (v.type() == ValueType::kString) n += v.as_string().size();
        if (v.type() == ValueType::kBytes) n += v.as_bytes().size();
      }
    }
    return n;
  }
  // envelope_bound without the strings' and bytes' own bytes, found
  // without a look at the values.
  static std::size_t scalar_bound(const worker::Envelope& e) {
    return 35 + 20 * e.tuple.anchors().size() + 12 * e.tuple.values().size();
  }

  // Called before the bytes of a string or bytes value of `n` bytes are
  // written: make_room(w, n). NoRoomToMake: the room was made beforehand.
  struct NoRoomToMake {
    void operator()(CompactWriter&, std::size_t) const {}
  };

  template <typename MakeRoom = NoRoomToMake>
  RSTORM_INLINE static void write_value(CompactWriter& w, const Value& v,
                                        const MakeRoom& make_room = {}) {
    switch (v.type()) {
      case ValueType::kNull:
        w.byte(field_header(kNullValue, kCompactStruct));
        w.byte(kStop);  // Null has no fields
        break;
      case ValueType::kBool:
        w.byte(field_header(kBoolValue, v.as_bool() ? kCompactTrue : kCompactFalse));
        break;
      case ValueType::kInt:
        w.byte(field_header(kIntValue, kCompactI64));
        w.i64(v.as_int());
        break;
      case ValueType::kDouble: {
        w.byte(field_header(kDoubleValue, kCompactDouble));
        const auto bits = std::bit_cast<std::uint64_t>(v.as_double());
        for (int i = 0; i < 8; ++i) w.byte(static_cast<std::uint8_t>(bits >> (8 * i)));
        break;
      }
      case ValueType::kString:
        make_room(w, v.as_string().size());
        w.byte(field_header(kStringValue, kCompactBinary));
        w.bytes(v.as_string().data(), v.as_string().size());
        break;
      case ValueType::kBytes:
        make_room(w, v.as_bytes().size());
        w.byte(field_header(kBytesValue, kCompactBinary));
        w.bytes(v.as_bytes().data(), v.as_bytes().size());
        break;
    }
    w.byte(kStop);
  }

  // An envelope's bytes up to its values: fields 1 to 4 and the values'
  // list header, 27 bytes at most. Envelopes with the same destination,
  // kind, source, stream and number of values (most of a batch) share
  // them: write_envelope copies them as one fixed-size block. One kept per
  // destination's low three bits, so that a round robin or a fields
  // grouping over a few tasks of the peer finds its own.
  struct Prefix {
    std::int32_t dest = -1;
    worker::MessageKind kind = worker::MessageKind::kTuple;
    std::int32_t source_task = 0;
    std::int32_t stream = 0;
    std::size_t values = 0;
    std::uint8_t length = 0;  // 0: none kept
    std::uint8_t bytes[32] = {};  // copied whole; those past `length` are written over
  };

  RSTORM_INLINE static void write_prefix(CompactWriter& w, const worker::Envelope& e,
                                         std::int32_t stream, std::size_t values) {
    w.byte(field_header(1, kCompactI32));
    w.i32(e.dest.value);
    w.byte(field_header(1, kCompactByte));
    w.byte(static_cast<std::uint8_t>(e.kind));
    w.byte(field_header(1, kCompactI32));
    w.i32(e.tuple.source_task().value);
    w.byte(field_header(1, kCompactI32));
    w.i32(stream);
    w.byte(field_header(1, kCompactList));
    w.list(values, kCompactStruct);
  }

  static constexpr std::size_t kPrefixSlots = 8;

  // Envelope's fields 1 to 6, in order, each one id after the last. With
  // `slots` (kPrefixSlots), the prefix is copied when its destination's
  // slot holds it and kept there otherwise.
  // REQUIRES: 32 bytes of room at least (every envelope_bound is more).
  template <typename MakeRoom = NoRoomToMake>
  RSTORM_INLINE static void write_envelope(CompactWriter& w, const worker::Envelope& e,
                                           std::int32_t stream_index, Prefix* slots = nullptr,
                                           const MakeRoom& make_room = {}) {
    const bool tuple = e.kind == worker::MessageKind::kTuple;
    const Values& values = e.tuple.values();
    const std::int32_t stream = tuple ? stream_index : 0;
    const std::size_t n = tuple ? values.size() : 0;
    Prefix* const last = slots == nullptr
                             ? nullptr
                             : &slots[static_cast<std::uint32_t>(e.dest.value) % kPrefixSlots];
    if (last == nullptr) {
      write_prefix(w, e, stream, n);
    } else if (last->length > 0 && last->dest == e.dest.value && last->kind == e.kind &&
               last->source_task == e.tuple.source_task().value && last->stream == stream &&
               last->values == n) {
      std::memcpy(w.p, last->bytes, sizeof last->bytes);
      w.p += last->length;
    } else {
      std::uint8_t* const at = w.p;
      write_prefix(w, e, stream, n);
      last->dest = e.dest.value;
      last->kind = e.kind;
      last->source_task = e.tuple.source_task().value;
      last->stream = stream;
      last->values = n;
      last->length = static_cast<std::uint8_t>(w.p - at);
      std::memcpy(last->bytes, at, last->length);
    }
    if (tuple) {
      for (const Value& v : values) write_value(w, v, make_room);
    }
    w.byte(field_header(1, kCompactList));
    const MessageAnchors& anchors = e.tuple.anchors();
    w.list(2 * anchors.size(), kCompactI64);
    for (std::size_t i = 0; i < anchors.size(); ++i) {
      w.i64(static_cast<std::int64_t>(anchors[i].root));
      w.i64(static_cast<std::int64_t>(anchors[i].edge));
    }
    w.byte(kStop);
  }

  // The frames of add_tuples in one pass over the batch, each envelope's
  // stream index looked up, its room made and its bytes written while it is
  // in cache. Returns false, with nothing written, at the first envelope
  // whose stream the plan does not know: the caller takes the way that skips
  // and lists those.
  bool write_tuple_frames(const PlanIndex& index, const worker::Batch& batch,
                          std::size_t max_per_frame) {
    const std::uint32_t kept = buffer->available_read();
    Prefix prefixes[kPrefixSlots];
    const StreamInfo* last_info = nullptr;
    std::int32_t last_index = -1;
    std::size_t begin = 0;
    while (begin < batch.size()) {
      const std::size_t end = std::min(batch.size(), begin + max_per_frame);
      const std::uint32_t start = begin_frame();
      std::uint8_t* from = buffer->getWritePtr(kFrameRoom);
      std::uint8_t* limit = from + buffer->available_write();
      CompactWriter w{from};
      w.byte(kTuplesHeader);
      w.byte(kEnvelopesHeader);
      w.list(end - begin, kCompactStruct);
      for (std::size_t i = begin; i < end; ++i) {
        const worker::Envelope& e = batch[i];
        std::int32_t stream = 0;
        if (e.kind == worker::MessageKind::kTuple) {
          const StreamInfo* info = e.tuple.source();
          if (info != last_info || info == nullptr) {
            last_info = info;
            last_index = index.stream_index(info);
          }
          if (last_index < 0) {
            buffer->truncate(kept);
            return false;
          }
          stream = last_index;
        }
        // Room for all but its strings' and bytes' own bytes, and the two
        // stops; before each string, room for it and all that may follow.
        const std::size_t room = scalar_bound(e) + 2;
        const auto make_room = [&](CompactWriter& at, std::size_t more) {
          if (static_cast<std::size_t>(limit - at.p) < room + more) [[unlikely]] {
            buffer->wroteBytes(static_cast<std::uint32_t>(at.p - from));
            from = at.p =
                buffer->getWritePtr(static_cast<std::uint32_t>(std::max(room + more, kFrameRoom)));
            limit = from + buffer->available_write();
          }
        };
        make_room(w, 0);
        write_envelope(w, e, stream, prefixes, make_room);
      }
      w.byte(kStop);  // TupleBatch's
      w.byte(kStop);  // Frame's
      buffer->wroteBytes(static_cast<std::uint32_t>(w.p - from));
      end_frame(start);
      begin = end;
    }
    return true;
  }
  // Room asked for at a time by write_tuple_frames: the headers, and most
  // frames whole.
  static constexpr std::size_t kFrameRoom = 16 * 1024;

  // One Frame { tuples: TupleBatch { envelopes: [...] } } of the envelopes
  // [begin, end) of `batch` that have a stream index.
  void write_tuple_frame(const worker::Batch& batch, std::size_t begin, std::size_t end,
                         std::size_t count) {
    const std::uint32_t start = begin_frame();
    std::size_t bound = 16;  // the headers, the list's length, two stops
    for (std::size_t i = begin; i < end; ++i) {
      if (stream_indices[i] >= 0) bound += envelope_bound(batch[i]);
    }
    CompactWriter w{buffer->getWritePtr(static_cast<std::uint32_t>(bound))};
    std::uint8_t* const from = w.p;
    w.byte(kTuplesHeader);
    w.byte(kEnvelopesHeader);
    w.list(count, kCompactStruct);
    for (std::size_t i = begin; i < end; ++i) {
      if (stream_indices[i] >= 0) write_envelope(w, batch[i], stream_indices[i]);
    }
    w.byte(kStop);  // TupleBatch's
    w.byte(kStop);  // Frame's
    buffer->wroteBytes(static_cast<std::uint32_t>(w.p - from));
    end_frame(start);
  }
};

FrameEncoder::FrameEncoder() : s_(std::make_unique<State>()) {}
FrameEncoder::~FrameEncoder() = default;

void FrameEncoder::clear() { s_->buffer->resetBuffer(); }

const std::uint8_t* FrameEncoder::data() const {
  std::uint8_t* base;
  std::uint32_t size;
  s_->buffer->getBuffer(&base, &size);
  return base;
}

std::size_t FrameEncoder::size() const { return s_->buffer->available_read(); }

std::size_t FrameEncoder::add_tuples(const PlanIndex& index, const worker::Batch& batch,
                                     std::size_t max_per_frame) {
  if (max_per_frame == 0) max_per_frame = 1;
  s_->unencodable.clear();
  if (s_->write_tuple_frames(index, batch, max_per_frame)) return batch.size();
  // Some envelope's stream is unknown: a pass to find them all, then frames
  // of the others.
  auto& streams = s_->stream_indices;
  streams.resize(batch.size());
  const StreamInfo* last_info = nullptr;
  std::int32_t last_index = -1;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const worker::Envelope& e = batch[i];
    if (e.kind != worker::MessageKind::kTuple) {
      streams[i] = 0;
      continue;
    }
    const StreamInfo* info = e.tuple.source();
    if (info != last_info || info == nullptr) {
      last_info = info;
      last_index = index.stream_index(info);
    }
    streams[i] = last_index;
    if (last_index < 0) ++bad;
  }
  std::size_t encoded = 0;
  std::size_t begin = 0;
  while (begin < batch.size()) {
    // The next frame: up to max_per_frame encodable envelopes.
    std::size_t end = begin;
    std::size_t count = 0;
    while (end < batch.size() && count < max_per_frame) {
      if (streams[end] >= 0) ++count;
      ++end;
    }
    if (count > 0) s_->write_tuple_frame(batch, begin, end, count);
    encoded += count;
    begin = end;
  }
  s_->unencodable.clear();
  if (bad > 0) {
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (streams[i] < 0) s_->unencodable.push_back(i);
    }
  }
  return encoded;
}

const std::vector<std::size_t>& FrameEncoder::unencodable() const { return s_->unencodable;
}

void FrameEncoder::add_hello(const std::string& topology_id, const std::string& host,
                             std::int32_t port, const std::string& nonce) {
  wire::Hello h;
  h.__set_topology_id(topology_id);
  h.__set_host(host);
  h.__set_port(port);
  h.__set_protocol_version(kProtocolVersion);
  if (!nonce.empty()) h.__set_nonce(nonce);
  wire::Frame f;
  f.__set_hello(std::move(h));
  s_->write_generated(f);
}

void FrameEncoder::add_challenge(const std::string& nonce, const std::string& proof) {
  wire::Challenge c;
  c.__set_nonce(nonce);
  c.__set_proof(proof);
  wire::Frame f;
  f.__set_challenge(std::move(c));
  s_->write_generated(f);
}

void FrameEncoder::add_proof(const std::string& proof) {
  wire::Proof p;
  p.__set_proof(proof);
  wire::Frame f;
  f.__set_proof(std::move(p));
  s_->write_generated(f);
}

void FrameEncoder::add_hello_ack() {
  wire::HelloAck a;
  a.__set_protocol_version(kProtocolVersion);
  wire::Frame f;
  f.__set_hello_ack(std::move(a));
  s_->write_generated(f);
}

void FrameEncoder::add_refused(const std::string& reason) {
  wire::Refused r;
  r.__set_reason(reason);
  wire::Frame f;
  f.__set_refused(std::move(r));
  s_->write_generated(f);
}

void FrameEncoder::add_goodbye(const std::string& reason) {
  wire::Goodbye g;
  g.__set_reason(reason);
  wire::Frame f;
  f.__set_goodbye(std::move(g));
  s_->write_generated(f);
}

void FrameEncoder::add_backpressure(const std::vector<TaskId>& tasks, bool on) {
  wire::Backpressure b;
  b.tasks.reserve(tasks.size());
  for (TaskId t : tasks) b.tasks.push_back(t.value);
  b.__isset.tasks = true;
  b.__set_on(on);
  wire::Frame f;
  f.__set_backpressure(std::move(b));
  s_->write_generated(f);
}

void FrameEncoder::add_backpressure_state(const std::vector<TaskId>& throttled) {
  wire::Backpressure b;
  b.tasks.reserve(throttled.size());
  for (TaskId t : throttled) b.tasks.push_back(t.value);
  b.__isset.tasks = true;
  b.__set_on(true);
  b.__set_state(true);
  wire::Frame f;
  f.__set_backpressure(std::move(b));
  s_->write_generated(f);
}

// ---------------------------------------------------------------- decoder

struct FrameDecoder::State {
  State(const PlanIndex& i, const std::vector<char>* l) : index(i), local(l) {}

  const PlanIndex& index;
  const std::vector<char>* local;
  std::shared_ptr<TMemoryBuffer> buffer = std::make_shared<TMemoryBuffer>();
  Protocol proto{buffer};
  std::string scratch;
  std::vector<AnchorEntry> pairs;    // set_anchors
  std::vector<std::uint64_t> roots;  // set_anchors
  std::uint64_t frames_read_by_thrift = 0;

  // Up to this many pairs, set_anchors XORs each in (a scan of those before).
  static constexpr std::size_t kFewPairs = 16;

  // Gives `anchors` (empty, or holding what an earlier anchors field gave) the
  // pairs read into `pairs`. A writer's anchors have distinct roots
  // (MessageAnchors keeps them so): past kFewPairs that is checked by sorting
  // a copy of the roots and the pairs are taken at once, in order, where
  // XORing each in scanned every pair before it (a window's output anchored
  // to 10,000 roots took 50 M steps). Pairs with a repeated root (another
  // writer) are XORed in one by one, as ever.
  // An acking or control envelope's pairs (`tuple` false) are messages, a
  // root possibly repeated (the acker XORs them all, a spout completes a
  // root once): appended as they come, a pair XORed into the one before when
  // it has the same root, as MessageAnchors::append_message does for the
  // writer, without a scan (an envelope carries up to 32).
  void set_anchors(MessageAnchors& anchors, bool tuple) {
    if (!tuple) {
      for (const AnchorEntry& p : pairs) anchors.append_message(p.root, p.edge, pairs.size() - 1);
      return;
    }
    if (pairs.size() > kFewPairs && anchors.empty()) {
      roots.clear();
      for (const AnchorEntry& p : pairs) roots.push_back(p.root);
      std::sort(roots.begin(), roots.end());
      if (std::adjacent_find(roots.begin(), roots.end()) == roots.end()) {
        anchors.assign_distinct(pairs.data(), pairs.size());
        return;
      }
    }
    for (const AnchorEntry& p : pairs) anchors.xor_in(p.root, p.edge);
  }

  // A read that failed leaves the protocol inside some struct (its field-id
  // stack, a pending bool): the next frame starts from a new one.
  void reset_protocol() {
    std::destroy_at(&proto);
    std::construct_at(&proto, buffer);
  }

  [[noreturn]] static void fail(std::string message) { throw DecodeError{std::move(message)}; }

  void expect(TType got, TType want, const char* what) {
    if (got != want) {
      fail(std::string(what) + " has Thrift type " + std::to_string(static_cast<int>(got)) +
           ", expected " + std::to_string(static_cast<int>(want)));
    }
  }

  void read_value(Value& out) {
    std::string name;
    TType type;
    std::int16_t id;
    proto.readStructBegin(name);
    proto.readFieldBegin(name, type, id);
    if (type == tp::T_STOP) fail("a value with no field set");
    switch (id) {
      case kNullValue:
        expect(type, tp::T_STRUCT, "null_value");
        proto.skip(type);
        out = Value();
        break;
      case kBoolValue: {
        expect(type, tp::T_BOOL, "bool_value");
        bool b = false;
        proto.readBool(b);
        out = Value(b);
        break;
      }
      case kIntValue: {
        expect(type, tp::T_I64, "int_value");
        std::int64_t i = 0;
        proto.readI64(i);
        out = Value(i);
        break;
      }
      case kDoubleValue: {
        expect(type, tp::T_DOUBLE, "double_value");
        double d = 0;
        proto.readDouble(d);
        out = Value(d);
        break;
      }
      case kStringValue: {
        expect(type, tp::T_STRING, "string_value");
        std::string str;
        proto.readString(str);
        out = Value(std::move(str));
        break;
      }
      case kBytesValue:
        expect(type, tp::T_STRING, "bytes_value");
        proto.readBinary(scratch);
        out = Value(Bytes(scratch.begin(), scratch.end()));
        break;
      default:
        fail("a value of unknown kind (field " + std::to_string(id) + ")");
    }
    proto.readFieldEnd();
    proto.readFieldBegin(name, type, id);
    if (type != tp::T_STOP) fail("a value with more than one field set");
    proto.readStructEnd();
  }

  // Appends the list's pairs to `pairs` (the kind, which says how they are
  // taken, may come after them).
  void read_anchors() {
    TType etype;
    std::uint32_t n;
    proto.readListBegin(etype, n);
    if (n > 0) expect(etype, tp::T_I64, "anchor list element");
    if (n % 2 != 0)
      fail("an anchor list of " + std::to_string(n) + " ids (needs root, edge pairs)");
    for (std::uint32_t i = 0; i < n; i += 2) {
      std::int64_t root = 0, edge = 0;
      proto.readI64(root);
      proto.readI64(edge);
      pairs.push_back({static_cast<std::uint64_t>(root), static_cast<std::uint64_t>(edge)});
    }
    proto.readListEnd();
  }

  void read_values(Values& values) {
    TType etype;
    std::uint32_t n;
    proto.readListBegin(etype, n);
    if (n > 0) expect(etype, tp::T_STRUCT, "value list element");
    // A garbled count must not allocate more than the frame could hold.
    values.reserve(std::min<std::uint32_t>(n, 1024));
    for (std::uint32_t i = 0; i < n; ++i) read_value(values.emplace_back());
    proto.readListEnd();
  }

  void read_envelope(worker::Envelope& e) {
    std::string name;
    std::int32_t dest = -1, source = -1, stream = -1;
    std::int8_t kind = -1;
    pairs.clear();
    proto.readStructBegin(name);
    for (;;) {
      TType type;
      std::int16_t id;
      proto.readFieldBegin(name, type, id);
      if (type == tp::T_STOP) break;
      switch (id) {
        case kDest: expect(type, tp::T_I32, "dest_task"); proto.readI32(dest); break;
        case kKind: expect(type, tp::T_BYTE, "kind"); proto.readByte(kind); break;
        case kSource: expect(type, tp::T_I32, "source_task"); proto.readI32(source); break;
        case kStream: expect(type, tp::T_I32, "stream_index"); proto.readI32(stream); break;
        case kValues:
          expect(type, tp::T_LIST, "values");
          read_values(e.tuple.mutable_values());
          break;
        case kAnchors:
          expect(type, tp::T_LIST, "anchors");
          read_anchors();
          break;
        default: proto.skip(type);
      }
      proto.readFieldEnd();
    }
    proto.readStructEnd();
    if (!pairs.empty()) set_anchors(e.tuple.mutable_anchors(), kind == 0);
    validate(e, dest, kind, source, stream);
  }

  // validate() inlined for the usual envelope: a tuple for a task this
  // worker runs, on a stream its source declares. Anything else (or a
  // decoder without `local`) goes through validate(), which names the fault.
  // Returns the stream of a tuple for a task of this worker, accepted at
  // once; nullptr when the envelope took validate() (which throws on what
  // is wrong with it).
  RSTORM_INLINE const StreamInfo* accept(worker::Envelope& e, std::int32_t dest, std::int8_t kind,
                                         std::int32_t source, std::int32_t stream) {
    const auto d = static_cast<std::size_t>(static_cast<std::uint32_t>(dest));
    if (kind == 0 && local != nullptr && d < local->size() && (*local)[d] != 0 &&
        index.is_task(TaskId(dest))) {
      if (const StreamInfo* info = index.stream(TaskId(source), stream); info != nullptr) {
        e.dest = TaskId(dest);
        e.kind = worker::MessageKind::kTuple;
        e.tuple.set_source(info, TaskId(source));
        return info;
      }
    }
    validate(e, dest, kind, source, stream);
    return nullptr;
  }

  void validate(worker::Envelope& e, std::int32_t dest, std::int8_t kind, std::int32_t source,
                std::int32_t stream) {
    e.dest = TaskId(dest);
    if (!index.is_task(e.dest)) {
      fail("an envelope for task " + std::to_string(dest) + ", which the topology does not have");
    }
    if (local != nullptr && (static_cast<std::size_t>(dest) >= local->size() ||
                             !(*local)[static_cast<std::size_t>(dest)])) {
      fail("an envelope for task " + std::to_string(dest) + ", which this worker does not run");
    }
    if (kind < 0 || kind > kMaxKind) fail("an envelope of unknown kind " + std::to_string(kind));
    e.kind = static_cast<worker::MessageKind>(kind);
    if (e.kind != worker::MessageKind::kTuple) {
      // An acking envelope carries one or more messages (Envelope::messages).
      const std::size_t anchors = e.tuple.anchors().size();
      const bool acking = worker::is_acking(e.kind);
      if ((acking ? anchors == 0 : anchors != 1) || !e.tuple.values().empty()) {
        fail(std::string(acking ? "an acking message" : "a control message") + " with " +
             std::to_string(anchors) + " anchors and " + std::to_string(e.tuple.values().size()) +
             " values (needs " + (acking ? "at least 1" : "1") + " and 0)");
      }
      e.tuple.set_source(nullptr, TaskId(source));
      return;
    }
    const StreamInfo* info = index.stream(TaskId(source), stream);
    if (info == nullptr) {
      const worker::ComponentPlan* c = index.component_of(TaskId(source));
      if (c == nullptr) {
        fail("a tuple from task " + std::to_string(source) + ", which the topology does not have");
      }
      fail("a tuple on stream index " + std::to_string(stream) + " of component '" + c->id +
           "' (task " + std::to_string(source) + "), which declares " +
           std::to_string(c->streams.size()) + " streams");
    }
    e.tuple.set_source(info, TaskId(source));
  }

  // ---- tuple frames as Thrift's writer lays them out (see CompactReader)

  RSTORM_INLINE static void want(std::uint8_t header, CompactType type) {
    if ((header & 0x0F) != type) throw NotCanonical{};
  }

  // A value other than an integer or a string (rare on the wire), read from
  // its header `h` on: from `p`, returns where it ends. (The cursor passes by
  // value, so that fast_envelope's stays in a register.)
  [[gnu::noinline]] static const std::uint8_t* fast_other_value(const std::uint8_t* p,
                                                                const std::uint8_t* end,
                                                                Values& values, std::uint8_t h) {
    CompactReader r{p, end};
    switch (h >> 4) {
      case kNullValue:
        want(h, kCompactStruct);
        if (r.byte() != kStop) throw NotCanonical{};
        values.emplace_back();
        break;
      case kBoolValue:
        if ((h & 0x0F) != kCompactTrue && (h & 0x0F) != kCompactFalse) throw NotCanonical{};
        values.emplace_back((h & 0x0F) == kCompactTrue);
        break;
      case kIntValue:
        want(h, kCompactI64);
        values.emplace_back(r.i64());
        break;
      case kDoubleValue:
        want(h, kCompactDouble);
        values.emplace_back(r.f64());
        break;
      case kStringValue: {
        want(h, kCompactBinary);
        const std::size_t n = r.length();
        values.emplace_back(std::string_view(reinterpret_cast<const char*>(r.p), n));
        r.p += n;
        break;
      }
      case kBytesValue: {
        want(h, kCompactBinary);
        const std::size_t n = r.length();
        values.emplace_back(Bytes(r.p, r.p + n));
        r.p += n;
        break;
      }
      default:
        throw NotCanonical{};
    }
    return r.p;
  }

  RSTORM_INLINE static void fast_value(CompactReader& r, Values& values) {
    const std::uint8_t h = r.byte();
    if (h == field_header(kIntValue, kCompactI64)) {
      values.emplace_back(r.i64());
    } else if (h == field_header(kStringValue, kCompactBinary)) {
      const std::size_t n = r.length();
      values.emplace_back(std::string_view(reinterpret_cast<const char*>(r.p), n));
      r.p += n;
    } else {
      r.p = fast_other_value(r.p, r.end, values, h);
    }
    if (r.byte() != kStop) throw NotCanonical{};
  }

  // The bytes of a tuple envelope's fields 1 to 4 and values' list header
  // (27 at most, as the encoder's Prefix), with what they meant once
  // accepted: an envelope of the frame that starts with the same bytes is
  // the same destination, source and stream, already checked. One per
  // destination's low three bits (the byte after the first field header is
  // the destination's zigzag varint, 2 x dest for a task id below 64), so
  // that a sender's round robin over a few tasks here, or a fields grouping
  // over them, finds its prefix as a run of one destination does.
  struct AcceptedPrefix {
    std::uint64_t words[4] = {};  // the bytes, zero past `length`
    std::uint64_t masks[4] = {};  // 0xFF for each byte within `length`
    std::size_t length = 0;       // 0: none
    std::int32_t dest = 0;
    std::int32_t source = 0;
    std::size_t values = 0;
    const StreamInfo* info = nullptr;
  };
  static constexpr std::size_t kPrefixWords = 4;
  static constexpr std::size_t kPrefixBytes = 8 * kPrefixWords;
  static constexpr std::size_t kPrefixSlots = 8;
  AcceptedPrefix prefixes[kPrefixSlots];  // forgotten at each frame

  // REQUIRES: kPrefixBytes from p.
  RSTORM_INLINE static AcceptedPrefix& slot_for(AcceptedPrefix* slots, const std::uint8_t* p) {
    return slots[(p[1] >> 1) % kPrefixSlots];
  }

  // `p` starts with the prefix's bytes. REQUIRES: kPrefixBytes from p.
  RSTORM_INLINE static bool starts_with(const std::uint8_t* p, const AcceptedPrefix& prefix) {
    std::uint64_t diff = 0;
    for (std::size_t i = 0; i < kPrefixWords; ++i) {
      std::uint64_t w;
      std::memcpy(&w, p + 8 * i, 8);
      diff |= (w ^ prefix.words[i]) & prefix.masks[i];
    }
    return diff == 0;
  }

  // REQUIRES: kPrefixBytes from `from`; length <= kPrefixBytes.
  static void keep_prefix(AcceptedPrefix& prefix, const std::uint8_t* from, std::size_t length,
                          std::int32_t dest, std::int32_t source, std::size_t values,
                          const StreamInfo* info) {
    for (std::size_t i = 0; i < kPrefixWords; ++i) {
      const std::size_t in_word = length > 8 * i ? std::min<std::size_t>(8, length - 8 * i) : 0;
      const std::uint64_t mask =
          in_word == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * in_word)) - 1;
      std::uint64_t w;
      std::memcpy(&w, from + 8 * i, 8);
      prefix.words[i] = w & mask;
      prefix.masks[i] = mask;
    }
    prefix.length = length;
    prefix.dest = dest;
    prefix.source = source;
    prefix.values = values;
    prefix.info = info;
  }

  // Reads one envelope from `p`; returns where it ends. Both writers (ours,
  // write_envelope, and Thrift's generated one) write the six fields in
  // order, each header one id after the last; read so, in a straight line,
  // or from the values on when the envelope starts with an accepted prefix.
  const std::uint8_t* fast_envelope(const std::uint8_t* p, const std::uint8_t* end,
                                    worker::Envelope& e) {
    CompactReader r{p, end};
    AcceptedPrefix* slot = nullptr;
    if (r.left() >= kPrefixBytes) {
      slot = &slot_for(prefixes, p);
    }
    if (slot != nullptr && slot->length > 0 && starts_with(p, *slot)) {
      const AcceptedPrefix& prefix = *slot;
      r.p += prefix.length;
      read_values_and_anchors(r, prefix.values, 0, e);
      e.dest = TaskId(prefix.dest);
      e.kind = worker::MessageKind::kTuple;
      e.tuple.set_source(prefix.info, TaskId(prefix.source));
      return r.p;
    }
    if (r.byte() != field_header(1, kCompactI32)) throw NotCanonical{};
    const std::int32_t dest = r.i32();
    if (r.byte() != field_header(1, kCompactByte)) throw NotCanonical{};
    const auto kind = static_cast<std::int8_t>(r.byte());
    if (r.byte() != field_header(1, kCompactI32)) throw NotCanonical{};
    const std::int32_t source = r.i32();
    if (r.byte() != field_header(1, kCompactI32)) throw NotCanonical{};
    const std::int32_t stream = r.i32();
    if (r.byte() != field_header(1, kCompactList)) throw NotCanonical{};
    const std::size_t num_values = r.list(kCompactStruct);
    const std::size_t prefix_length = static_cast<std::size_t>(r.p - p);
    read_values_and_anchors(r, num_values, kind, e);
    if (const StreamInfo* info = accept(e, dest, kind, source, stream);
        info != nullptr && slot != nullptr && prefix_length <= kPrefixBytes) {
      keep_prefix(*slot, p, prefix_length, dest, source, num_values, info);
    }
    return r.p;
  }

  // An envelope's values (`n`, after their list header), its anchors and
  // its stop. `kind`: the envelope's, as read.
  RSTORM_INLINE void read_values_and_anchors(CompactReader& r, std::size_t n, std::int8_t kind,
                                             worker::Envelope& e) {
    if (n > 0) {
      Values& values = e.tuple.mutable_values();
      values.reserve(n);
      for (std::size_t i = 0; i < n; ++i) fast_value(r, values);
    }
    if (r.byte() != field_header(1, kCompactList)) throw NotCanonical{};
    if (const std::size_t m = r.list(kCompactI64); m > 0) {
      if (m % 2 != 0) throw NotCanonical{};
      MessageAnchors& anchors = e.tuple.mutable_anchors();
      if (kind != 0) {
        // Acking or control messages (set_anchors says why no scan).
        for (std::size_t i = 0; i < m; i += 2) {
          const auto root = static_cast<std::uint64_t>(r.i64());
          anchors.append_message(root, static_cast<std::uint64_t>(r.i64()), m / 2 - 1);
        }
      } else if (m <= 2 * kFewPairs) {
        for (std::size_t i = 0; i < m; i += 2) {
          const auto root = static_cast<std::uint64_t>(r.i64());
          anchors.xor_in(root, static_cast<std::uint64_t>(r.i64()));
        }
      } else {
        pairs.clear();
        for (std::size_t i = 0; i < m; i += 2) {
          const auto root = static_cast<std::uint64_t>(r.i64());
          pairs.push_back({root, static_cast<std::uint64_t>(r.i64())});
        }
        set_anchors(anchors, true);
      }
    }
    if (r.byte() != kStop) throw NotCanonical{};
  }

  // Room for `n` more envelopes in `out`, which may already hold many (one
  // batch for a whole outgoing buffer read back, decode_outgoing): grows it
  // at least twofold, so that frame after frame costs linear time, not a
  // reallocation (and a move of every envelope so far) per frame.
  static void make_room(worker::Batch& out, std::size_t n) {
    if (out.capacity() - out.size() >= n) return;
    out.reserve(std::max(out.size() + n, 2 * out.capacity()));
  }

  // False when the frame is not a tuple batch; throws NotCanonical when it is
  // one laid out otherwise than Thrift's writer does.
  // `stale`: the last envelopes of `out` are finished with; the frame's
  // first envelopes overwrite them, and those left over are dropped.
  bool fast_tuple_frame(const std::uint8_t* data, std::size_t size, worker::Batch& out,
                        std::size_t stale) {
    CompactReader r{data, data + size};
    if (r.byte() != kTuplesHeader) return false;
    if (r.byte() != kEnvelopesHeader) throw NotCanonical{};
    for (AcceptedPrefix& prefix : prefixes) prefix.length = 0;
    const std::size_t n = r.list(kCompactStruct);
    const std::size_t base = out.size() - stale;
    const std::size_t reused = std::min(n, stale);
    for (std::size_t i = 0; i < reused; ++i) {
      worker::Envelope& e = out[base + i];
      e.tuple.reset_tracking();
      e.tuple.mutable_values().clear();
      r.p = fast_envelope(r.p, r.end, e);
    }
    if (n > reused) {
      make_room(out, n - reused);
      for (std::size_t i = reused; i < n; ++i) r.p = fast_envelope(r.p, r.end, out.emplace_back());
    } else if (stale > n) {
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(base + n), out.end());
    }
    if (r.byte() != kStop || r.byte() != kStop || r.p != r.end) throw NotCanonical{};
    return true;
  }

  void read_tuple_batch(worker::Batch& out) {
    std::string name;
    proto.readStructBegin(name);
    for (;;) {
      TType type;
      std::int16_t id;
      proto.readFieldBegin(name, type, id);
      if (type == tp::T_STOP) break;
      if (id == kBatchEnvelopes) {
        expect(type, tp::T_LIST, "envelopes");
        TType etype;
        std::uint32_t n;
        proto.readListBegin(etype, n);
        if (n > 0) expect(etype, tp::T_STRUCT, "envelope list element");
        make_room(out, std::min<std::uint32_t>(n, 65536));
        for (std::uint32_t i = 0; i < n; ++i) read_envelope(out.emplace_back());
        proto.readListEnd();
      } else {
        proto.skip(type);
      }
      proto.readFieldEnd();
    }
    proto.readStructEnd();
  }

  static void take_control(const wire::Frame& f, FrameType type, ControlMessage& c) {
    switch (type) {
      case FrameType::kHello:
        c.topology_id = f.hello.topology_id;
        c.host = f.hello.host;
        c.port = f.hello.port;
        c.protocol_version = f.hello.protocol_version;
        c.nonce = f.hello.__isset.nonce ? f.hello.nonce : std::string();
        break;
      case FrameType::kChallenge:
        c.nonce = f.challenge.nonce;
        c.proof = f.challenge.proof;
        break;
      case FrameType::kProof:
        c.proof = f.proof.proof;
        break;
      case FrameType::kHelloAck: c.protocol_version = f.hello_ack.protocol_version; break;
      case FrameType::kRefused: c.reason = f.refused.reason; break;
      case FrameType::kGoodbye:
        c.reason = f.goodbye.reason;
        break;
      case FrameType::kBackpressure:
        c.tasks.clear();
        for (std::int32_t t : f.backpressure.tasks) c.tasks.emplace_back(t);
        c.on = f.backpressure.on;
        c.state = f.backpressure.__isset.state && f.backpressure.state;
        break;
      case FrameType::kTuples: break;
    }
  }

  // `stale`: as fast_tuple_frame's; any other way, they are dropped first.
  FrameType read_frame(const std::uint8_t* data, std::size_t size, worker::Batch& out,
                       ControlMessage& control, bool thrift_only, std::size_t stale) {
    const std::size_t before = out.size() - stale;
    if (size == 0) fail("an empty frame");
    if (!thrift_only) {
      try {
        if (fast_tuple_frame(data, size, out, stale)) return FrameType::kTuples;
      } catch (const NotCanonical&) {
        ++frames_read_by_thrift;
      }
    }
    out.resize(before);
    buffer->resetBuffer(const_cast<std::uint8_t*>(data), static_cast<std::uint32_t>(size),
                        TMemoryBuffer::OBSERVE);
    buffer->readEnd();  // resets the message size bound ...
    buffer->updateKnownMessageSize(static_cast<long>(size));  // ... to this frame
    std::string name;
    TType type;
    std::int16_t id;
    proto.readStructBegin(name);
    proto.readFieldBegin(name, type, id);
    if (type == tp::T_STOP) fail("a frame with no message");
    FrameType result;
    if (id == kFrameTuples) {
      expect(type, tp::T_STRUCT, "tuples");
      read_tuple_batch(out);
      result = FrameType::kTuples;
      proto.readFieldEnd();
      proto.readFieldBegin(name, type, id);
      if (type != tp::T_STOP) fail("a frame with more than one message");
      proto.readStructEnd();
    } else {
      // Control messages: the generated reader, from the start of the frame.
      buffer->resetBuffer(const_cast<std::uint8_t*>(data), static_cast<std::uint32_t>(size),
                          TMemoryBuffer::OBSERVE);
      buffer->readEnd();
      buffer->updateKnownMessageSize(static_cast<long>(size));
      // The generated reader sizes a list before reading it, and Thrift bounds
      // a list by the bytes left only for elements of a fixed size: a frame's
      // lists cannot have more elements than the frame has bytes.
      Protocol limited(buffer, 0,
                       static_cast<std::int32_t>(std::min<std::size_t>(size, INT32_MAX)));
      wire::Frame f;
      f.read(&limited);
      const auto& set = f.__isset;
      const int count = set.hello + set.hello_ack + set.refused + set.tuples + set.backpressure +
                        set.challenge + set.proof + set.goodbye;
      if (count != 1) fail("a frame with " + std::to_string(count) + " messages (needs 1)");
      result = set.hello          ? FrameType::kHello
               : set.hello_ack    ? FrameType::kHelloAck
               : set.refused      ? FrameType::kRefused
               : set.backpressure ? FrameType::kBackpressure
               : set.challenge    ? FrameType::kChallenge
               : set.proof        ? FrameType::kProof
               : set.goodbye      ? FrameType::kGoodbye
                                  : FrameType::kTuples;
      if (result == FrameType::kTuples) fail("a tuple batch after another message");
      take_control(f, result, control);
    }
    if (buffer->available_read() != 0) {
      fail(std::to_string(buffer->available_read()) + " bytes after the end of the message");
    }
    return result;
  }
};

FrameDecoder::FrameDecoder(const PlanIndex& index, const std::vector<char>* local)
    : s_(std::make_unique<State>(index, local)) {
  // Strings and lists can never be longer than a frame: read_frame bounds
  // both by the frame's length (updateKnownMessageSize, a container limit).
}

FrameDecoder::~FrameDecoder() = default;

std::uint64_t FrameDecoder::frames_read_by_thrift() const { return s_->frames_read_by_thrift; }

Result<FrameType> FrameDecoder::decode(const std::uint8_t* data, std::size_t size,
                                       worker::Batch& out, ControlMessage& control) {
  return decode(data, size, out, control, false, 0);
}

Result<FrameType> FrameDecoder::decode_reusing(const std::uint8_t* data, std::size_t size,
                                               worker::Batch& out, ControlMessage& control) {
  return decode(data, size, out, control, false, out.size());
}

Result<FrameType> FrameDecoder::decode_with_thrift(const std::uint8_t* data, std::size_t size,
                                                   worker::Batch& out, ControlMessage& control) {
  return decode(data, size, out, control, true, 0);
}

Result<FrameType> FrameDecoder::decode(const std::uint8_t* data, std::size_t size,
                                       worker::Batch& out, ControlMessage& control,
                                       bool thrift_only, std::size_t stale) {
  const std::size_t before = out.size() - stale;
  try {
    return s_->read_frame(data, size, out, control, thrift_only, stale);
  } catch (const DecodeError& e) {
    out.resize(before);
    s_->reset_protocol();
    return Status(ErrorCode::kInvalidArgument, e.message);
  } catch (const std::exception& e) {
    out.resize(before);
    s_->reset_protocol();
    return Status(ErrorCode::kInvalidArgument, std::string("bytes that are not a message (") +
                                                   e.what() + ")");
  }
}

std::size_t decode_outgoing(const PlanIndex& index, const std::uint8_t* data, std::size_t size,
                            worker::Batch& out) {
  FrameDecoder decoder(index, nullptr);
  ControlMessage control;
  std::size_t failed = 0;
  std::size_t pos = 0;
  while (pos + kLengthPrefixBytes <= size) {
    const std::size_t length = read_length_prefix(data + pos);
    pos += kLengthPrefixBytes;
    if (pos + length > size) {
      ++failed;
      break;
    }
    if (!decoder.decode(data + pos, length, out, control).is_ok()) ++failed;
    pos += length;
  }
  return failed;
}

}  // namespace rstorm::transport

#undef RSTORM_INLINE
