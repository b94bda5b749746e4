#include "worker/transport/codec.hpp"

#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <algorithm>
#include <exception>

#include "rstorm_transport_thrift/data_plane_types.h"

namespace rstorm::transport {
namespace {

using apache::thrift::protocol::TCompactProtocolT;
using apache::thrift::protocol::TType;
using apache::thrift::transport::TMemoryBuffer;
namespace tp = apache::thrift::protocol;
using Protocol = TCompactProtocolT<TMemoryBuffer>;

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

}  // namespace

// ---------------------------------------------------------------- encoder

struct FrameEncoder::State {
  std::shared_ptr<TMemoryBuffer> buffer = std::make_shared<TMemoryBuffer>(64 * 1024);
  Protocol proto{buffer};
  std::vector<std::int32_t> stream_indices;  // per envelope of the batch being encoded
  std::string scratch;                       // bytes values go through a std::string
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

  void write_value(const Value& v) {
    proto.writeStructBegin("Value");
    switch (v.type()) {
      case ValueType::kNull:
        proto.writeFieldBegin("null_value", tp::T_STRUCT, kNullValue);
        proto.writeStructBegin("Null");
        proto.writeFieldStop();
        proto.writeStructEnd();
        break;
      case ValueType::kBool:
        proto.writeFieldBegin("bool_value", tp::T_BOOL, kBoolValue);
        proto.writeBool(v.as_bool());
        break;
      case ValueType::kInt:
        proto.writeFieldBegin("int_value", tp::T_I64, kIntValue);
        proto.writeI64(v.as_int());
        break;
      case ValueType::kDouble:
        proto.writeFieldBegin("double_value", tp::T_DOUBLE, kDoubleValue);
        proto.writeDouble(v.as_double());
        break;
      case ValueType::kString:
        proto.writeFieldBegin("string_value", tp::T_STRING, kStringValue);
        proto.writeString(v.as_string());
        break;
      case ValueType::kBytes:
        proto.writeFieldBegin("bytes_value", tp::T_STRING, kBytesValue);
        scratch.assign(v.as_bytes().begin(), v.as_bytes().end());
        proto.writeBinary(scratch);
        break;
    }
    proto.writeFieldEnd();
    proto.writeFieldStop();
    proto.writeStructEnd();
  }

  void write_envelope(const worker::Envelope& e, std::int32_t stream_index) {
    const bool tuple = e.kind == worker::MessageKind::kTuple;
    proto.writeStructBegin("Envelope");
    proto.writeFieldBegin("dest_task", tp::T_I32, kDest);
    proto.writeI32(e.dest.value);
    proto.writeFieldEnd();
    proto.writeFieldBegin("kind", tp::T_BYTE, kKind);
    proto.writeByte(static_cast<std::int8_t>(e.kind));
    proto.writeFieldEnd();
    proto.writeFieldBegin("source_task", tp::T_I32, kSource);
    proto.writeI32(e.tuple.source_task().value);
    proto.writeFieldEnd();
    proto.writeFieldBegin("stream_index", tp::T_I32, kStream);
    proto.writeI32(tuple ? stream_index : 0);
    proto.writeFieldEnd();
    proto.writeFieldBegin("values", tp::T_LIST, kValues);
    const Values& values = e.tuple.values();
    proto.writeListBegin(tp::T_STRUCT, tuple ? static_cast<std::uint32_t>(values.size()) : 0);
    if (tuple) {
      for (const Value& v : values) write_value(v);
    }
    proto.writeListEnd();
    proto.writeFieldEnd();
    proto.writeFieldBegin("anchors", tp::T_LIST, kAnchors);
    const MessageAnchors& anchors = e.tuple.anchors();
    proto.writeListBegin(tp::T_I64, static_cast<std::uint32_t>(2 * anchors.size()));
    for (std::size_t i = 0; i < anchors.size(); ++i) {
      proto.writeI64(static_cast<std::int64_t>(anchors[i].root));
      proto.writeI64(static_cast<std::int64_t>(anchors[i].edge));
    }
    proto.writeListEnd();
    proto.writeFieldEnd();
    proto.writeFieldStop();
    proto.writeStructEnd();
  }

  // One Frame { tuples: TupleBatch { envelopes: [...] } } of the envelopes
  // [begin, end) of `batch` that have a stream index.
  void write_tuple_frame(const worker::Batch& batch, std::size_t begin, std::size_t end,
                         std::size_t count) {
    const std::uint32_t start = begin_frame();
    proto.writeStructBegin("Frame");
    proto.writeFieldBegin("tuples", tp::T_STRUCT, kFrameTuples);
    proto.writeStructBegin("TupleBatch");
    proto.writeFieldBegin("envelopes", tp::T_LIST, kBatchEnvelopes);
    proto.writeListBegin(tp::T_STRUCT, static_cast<std::uint32_t>(count));
    for (std::size_t i = begin; i < end; ++i) {
      if (stream_indices[i] >= 0) write_envelope(batch[i], stream_indices[i]);
    }
    proto.writeListEnd();
    proto.writeFieldEnd();
    proto.writeFieldStop();
    proto.writeStructEnd();
    proto.writeFieldEnd();
    proto.writeFieldStop();
    proto.writeStructEnd();
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

  void read_anchors(MessageAnchors& anchors) {
    TType etype;
    std::uint32_t n;
    proto.readListBegin(etype, n);
    if (n > 0) expect(etype, tp::T_I64, "anchor list element");
    if (n % 2 != 0) fail("an anchor list of " + std::to_string(n) + " ids (needs root, edge pairs)");
    for (std::uint32_t i = 0; i < n; i += 2) {
      std::int64_t root = 0, edge = 0;
      proto.readI64(root);
      proto.readI64(edge);
      anchors.xor_in(static_cast<std::uint64_t>(root), static_cast<std::uint64_t>(edge));
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
          read_anchors(e.tuple.mutable_anchors());
          break;
        default: proto.skip(type);
      }
      proto.readFieldEnd();
    }
    proto.readStructEnd();
    validate(e, dest, kind, source, stream);
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
      if (e.tuple.anchors().size() != 1 || !e.tuple.values().empty()) {
        fail("a control message with " + std::to_string(e.tuple.anchors().size()) +
             " anchors and " + std::to_string(e.tuple.values().size()) + " values (needs 1 and 0)");
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
        out.reserve(out.size() + std::min<std::uint32_t>(n, 65536));
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
      case FrameType::kBackpressure:
        c.tasks.clear();
        for (std::int32_t t : f.backpressure.tasks) c.tasks.emplace_back(t);
        c.on = f.backpressure.on;
        c.state = f.backpressure.__isset.state && f.backpressure.state;
        break;
      case FrameType::kTuples: break;
    }
  }

  FrameType read_frame(const std::uint8_t* data, std::size_t size, worker::Batch& out,
                       ControlMessage& control) {
    if (size == 0) fail("an empty frame");
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
                        set.challenge + set.proof;
      if (count != 1) fail("a frame with " + std::to_string(count) + " messages (needs 1)");
      result = set.hello          ? FrameType::kHello
               : set.hello_ack    ? FrameType::kHelloAck
               : set.refused      ? FrameType::kRefused
               : set.backpressure ? FrameType::kBackpressure
               : set.challenge    ? FrameType::kChallenge
               : set.proof        ? FrameType::kProof
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

Result<FrameType> FrameDecoder::decode(const std::uint8_t* data, std::size_t size,
                                       worker::Batch& out, ControlMessage& control) {
  const std::size_t before = out.size();
  try {
    return s_->read_frame(data, size, out, control);
  } catch (const DecodeError& e) {
    out.resize(before);
    return Status(ErrorCode::kInvalidArgument, e.message);
  } catch (const std::exception& e) {
    out.resize(before);
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
