// The wire format: every value type and message kind round-trips; the
// hand-written encoder and decoder agree byte for byte with the code Thrift
// generates from data_plane.thrift; malformed frames are refused with a
// message naming the fault.
#include "worker/transport/codec.hpp"

#include <gtest/gtest.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <cmath>
#include <limits>
#include <random>

#include "rstorm_transport_thrift/data_plane_types.h"
#include "transport_test_support.hpp"

namespace rstorm::transport {
namespace {

using apache::thrift::protocol::TCompactProtocol;
using apache::thrift::transport::TMemoryBuffer;
using testing::data_envelope;
using testing::kSrcTask;
using testing::make_test_plan;
using testing::stream_info;

// Splits encoder output into frame bodies.
std::vector<std::string> frames_of(const FrameEncoder& enc) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < enc.size()) {
    const std::uint32_t len = read_length_prefix(enc.data() + pos);
    out.emplace_back(reinterpret_cast<const char*>(enc.data()) + pos + kLengthPrefixBytes, len);
    pos += kLengthPrefixBytes + len;
  }
  EXPECT_EQ(pos, enc.size());
  return out;
}

Values every_value() {
  Bytes all_bytes;
  for (int i = 0; i < 256; ++i) all_bytes.push_back(static_cast<std::uint8_t>(i));
  return Values{Value(),
                Value(true),
                Value(false),
                Value(std::int64_t{0}),
                Value(std::int64_t{-1}),
                Value(std::numeric_limits<std::int64_t>::min()),
                Value(std::numeric_limits<std::int64_t>::max()),
                Value(0.0),
                Value(-0.0),
                Value(3.141592653589793),
                Value(std::numeric_limits<double>::infinity()),
                Value(std::numeric_limits<double>::denorm_min()),
                Value(""),
                Value("short"),
                Value(std::string(1000, 'x')),
                Value(std::string("nul\0inside", 10)),
                Value(Bytes{}),
                Value(all_bytes)};
}

class Codec : public ::testing::Test {
 protected:
  std::unique_ptr<worker::TopologyPlan> plan_ = make_test_plan();
  PlanIndex index_{*plan_};
  std::vector<char> local_b_ = {0, 0, 0, 1, 1, 0, 1};  // worker B: 3, 4, 6

  std::vector<worker::Batch> round_trip(worker::Batch& batch, std::size_t per_frame = 256) {
    FrameEncoder enc;
    EXPECT_EQ(enc.add_tuples(index_, batch, per_frame), batch.size());
    FrameDecoder dec(index_, &local_b_);
    std::vector<worker::Batch> out;
    for (const std::string& f : frames_of(enc)) {
      ControlMessage c;
      auto type = dec.decode(reinterpret_cast<const std::uint8_t*>(f.data()), f.size(),
                             out.emplace_back(), c);
      EXPECT_TRUE(type.is_ok()) << type.status().message();
      if (type.is_ok()) {
        EXPECT_EQ(*type, FrameType::kTuples);
      }
    }
    // Every frame the encoder writes is read in a straight line.
    EXPECT_EQ(dec.frames_read_by_thrift(), 0u);
    return out;
  }
};

TEST_F(Codec, EveryValueTypeRoundTripsExactly) {
  worker::Batch batch;
  worker::Envelope e;
  e.dest = TaskId(3);
  e.tuple = Tuple(stream_info(*plan_, "default"), TaskId(kSrcTask), every_value());
  e.tuple.mutable_anchors().xor_in(1, 0xffffffffffffffffULL);
  e.tuple.mutable_anchors().xor_in(0x8000000000000000ULL, 7);
  e.tuple.mutable_anchors().xor_in(42, 0);
  batch.push_back(e);
  auto out = round_trip(batch);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].size(), 1u);
  const worker::Envelope& got = out[0][0];
  EXPECT_EQ(got.kind, worker::MessageKind::kTuple);
  EXPECT_EQ(got.dest, TaskId(3));
  EXPECT_EQ(got.tuple.source_task(), TaskId(kSrcTask));
  EXPECT_EQ(got.tuple.values(), every_value());
  EXPECT_TRUE(std::signbit(got.tuple.values()[8].as_double()));  // -0.0 stays negative
  ASSERT_EQ(got.tuple.anchors().size(), 3u);
  EXPECT_EQ(got.tuple.anchors()[0].root, 1u);
  EXPECT_EQ(got.tuple.anchors()[0].edge, 0xffffffffffffffffULL);
  EXPECT_EQ(got.tuple.anchors()[1].root, 0x8000000000000000ULL);
  EXPECT_EQ(got.tuple.anchors()[1].edge, 7u);
  EXPECT_EQ(got.tuple.anchors()[2].root, 42u);
  EXPECT_EQ(got.tuple.anchors()[2].edge, 0u);
}

TEST_F(Codec, NanRoundTripsAsNan) {
  worker::Batch batch;
  worker::Envelope e;
  e.dest = TaskId(4);
  e.tuple = Tuple(stream_info(*plan_, "side"), TaskId(kSrcTask),
                  Values{Value(std::numeric_limits<double>::quiet_NaN())});
  batch.push_back(e);
  auto out = round_trip(batch);
  ASSERT_EQ(out.at(0).size(), 1u);
  EXPECT_TRUE(std::isnan(out[0][0].tuple.values()[0].as_double()));
  EXPECT_EQ(out[0][0].tuple.source_stream(), "side");
  EXPECT_TRUE(out[0][0].tuple.anchors().empty());
}

TEST_F(Codec, EveryControlKindRoundTrips) {
  using worker::MessageKind;
  const MessageKind kinds[] = {MessageKind::kAckInit, MessageKind::kAck, MessageKind::kFail,
                               MessageKind::kAckComplete, MessageKind::kAckFailed};
  worker::Batch batch;
  std::uint64_t root = 0xfedcba9876543210ULL;
  for (MessageKind k : kinds) {
    worker::Envelope e;
    e.dest = TaskId(testing::kAckerTask);
    e.set_control(k, root++, 0x0123456789abcdefULL, TaskId(kSrcTask));
    batch.push_back(std::move(e));
  }
  worker::Envelope no_task;  // a fail sent by the worker itself names no task
  no_task.dest = TaskId(testing::kAckerTask);
  no_task.set_control(MessageKind::kFail, 99, 0, TaskId());
  batch.push_back(std::move(no_task));

  auto out = round_trip(batch);
  ASSERT_EQ(out.at(0).size(), 6u);
  for (std::size_t i = 0; i < 5; ++i) {
    const worker::Envelope& e = out[0][i];
    EXPECT_EQ(e.kind, kinds[i]);
    EXPECT_EQ(e.dest, TaskId(testing::kAckerTask));
    EXPECT_EQ(e.root(), 0xfedcba9876543210ULL + i);
    EXPECT_EQ(e.value(), 0x0123456789abcdefULL);
    EXPECT_EQ(e.task(), TaskId(kSrcTask));
    EXPECT_EQ(e.tuple.source(), nullptr);
  }
  EXPECT_EQ(out[0][5].kind, MessageKind::kFail);
  EXPECT_EQ(out[0][5].root(), 99u);
  EXPECT_EQ(out[0][5].task(), TaskId());
}

// Frame after frame decoded into one batch (decode_outgoing reads a whole
// unsent buffer back so) grows it geometrically: it was reserved to exactly
// its new size per frame, so a buffer of N frames cost N reallocations, each
// copying every envelope decoded so far.
TEST_F(Codec, FramesDecodedIntoOneBatchGrowItGeometrically) {
  worker::Batch batch;
  for (int i = 0; i < 1000; ++i) batch.push_back(data_envelope(*plan_, 3, i));
  FrameEncoder enc;
  ASSERT_EQ(enc.add_tuples(index_, batch, 1), batch.size());
  const std::vector<std::string> frames = frames_of(enc);
  ASSERT_EQ(frames.size(), 1000u);
  for (const bool thrift : {false, true}) {
    SCOPED_TRACE(thrift ? "through Thrift" : "fast path");
    FrameDecoder dec(index_, nullptr);
    worker::Batch out;
    ControlMessage c;
    int reallocations = 0;
    for (const std::string& f : frames) {
      const auto* data = reinterpret_cast<const std::uint8_t*>(f.data());
      const std::size_t before = out.capacity();
      const auto type = thrift ? dec.decode_with_thrift(data, f.size(), out, c)
                               : dec.decode(data, f.size(), out, c);
      ASSERT_TRUE(type.is_ok()) << type.status().message();
      if (out.capacity() != before) ++reallocations;
    }
    ASSERT_EQ(out.size(), 1000u);
    EXPECT_EQ(out[999].tuple.values()[0].as_int(), 999);
    EXPECT_LE(reallocations, 11);  // 1, 2, 4, ... 1024
  }
}

// What a decoder wrote into an envelope, to compare a reused envelope's
// decoding with a fresh one's.
std::string describe(const worker::Envelope& e) {
  std::string out = "dest " + std::to_string(e.dest.value) + " kind " +
                    std::to_string(static_cast<int>(e.kind)) + " from " +
                    std::to_string(e.tuple.source_task().value) + " stream " +
                    (e.tuple.source() != nullptr ? e.tuple.source_stream() : "-") + " ack " +
                    std::to_string(e.tuple.ack_val()) + " values";
  for (const Value& v : e.tuple.values()) out += " " + v.to_string();
  out += " anchors";
  for (std::size_t i = 0; i < e.tuple.anchors().size(); ++i) {
    out += " " + std::to_string(e.tuple.anchors()[i].root) + ":" +
           std::to_string(e.tuple.anchors()[i].edge);
  }
  return out;
}

// decode_reusing overwrites the envelopes of a batch a queue handed back:
// whatever they held (values, heap strings, many anchors, a control kind,
// values moved out), the frame decodes as into a fresh batch, and a batch
// longer than the frame sheds the rest; a control frame, a frame read by
// Thrift's reader and a corrupt one leave nothing of the old envelopes.
TEST_F(Codec, DecodingOverFinishedEnvelopesGivesWhatAFreshBatchWould) {
  std::mt19937_64 rng(20261129);
  const Values all = every_value();
  FrameDecoder fresh_dec(index_, &local_b_);
  FrameDecoder reuse_dec(index_, &local_b_);
  worker::Batch reused;
  std::uint64_t seq = 0;
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::string frame;
    const int shape = static_cast<int>(rng() % 10);
    if (shape == 0) {
      FrameEncoder enc;
      enc.add_hello("topo-1", "127.0.0.1", 6701);
      frame = frames_of(enc).at(0);
    } else {
      worker::Batch batch(rng() % 40 + 1);
      for (worker::Envelope& e : batch) {
        ++seq;
        if (rng() % 5 == 0) {
          e.dest = TaskId(testing::kAckerTask);
          e.set_control(rng() % 2 ? worker::MessageKind::kAck : worker::MessageKind::kAckInit, seq,
                        rng(), TaskId(kSrcTask));
          continue;
        }
        e.dest = TaskId(rng() % 2 ? 3 : 4);
        Values values;
        for (std::size_t n = rng() % 7; n > 0; --n) values.push_back(all[rng() % all.size()]);
        e.tuple = Tuple(stream_info(*plan_, rng() % 2 ? "default" : "side"), TaskId(kSrcTask),
                        std::move(values));
        // Up to 40 anchors: past the decoder's few pairs read in place.
        for (std::size_t n = rng() % 3 == 0 ? rng() % 40 : rng() % 3; n > 0; --n) {
          e.tuple.mutable_anchors().xor_in(rng(), rng());
        }
      }
      FrameEncoder enc;
      ASSERT_EQ(enc.add_tuples(index_, batch, 256), batch.size());
      frame = frames_of(enc).at(0);
      // Cut short: read in part over the old envelopes, then refused.
      if (shape == 1) frame.resize(frame.size() / 2 + rng() % (frame.size() / 2));
    }
    const auto* data = reinterpret_cast<const std::uint8_t*>(frame.data());
    worker::Batch expected;
    ControlMessage c1, c2;
    const auto want = fresh_dec.decode(data, frame.size(), expected, c1);
    const auto got = reuse_dec.decode_reusing(data, frame.size(), reused, c2);
    ASSERT_EQ(got.is_ok(), want.is_ok()) << (got.is_ok() ? "" : got.status().message());
    if (!want.is_ok()) {
      EXPECT_EQ(got.status().message(), want.status().message());
      EXPECT_TRUE(reused.empty());
      continue;
    }
    EXPECT_EQ(*got, *want);
    ASSERT_EQ(reused.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(describe(reused[i]), describe(expected[i])) << i;
    }
    // The consumer's use: some envelopes' values moved out, some acked.
    for (worker::Envelope& e : reused) {
      if (rng() % 3 == 0) {
        for (Value& v : e.tuple.mutable_values()) Value taken = std::move(v);
      }
      if (rng() % 3 == 0) e.tuple.xor_ack_val(rng());
    }
  }
  EXPECT_EQ(reuse_dec.frames_read_by_thrift(), fresh_dec.frames_read_by_thrift());
}

// An acking envelope carrying many messages (Transfer::send_control) keeps
// every (root, value) pair, in order, through both readers.
TEST_F(Codec, AnAckingEnvelopeCarriesManyMessages) {
  worker::Batch batch(1);
  batch[0].dest = TaskId(testing::kAckerTask);
  batch[0].set_control(worker::MessageKind::kAck, 1, 0x0123456789abcdefULL, TaskId(kSrcTask));
  for (std::uint64_t i = 1; i < 20; ++i) {
    batch[0].tuple.mutable_anchors().xor_in(0xfedcba9876543210ULL + i, i);
  }
  FrameEncoder enc;
  ASSERT_EQ(enc.add_tuples(index_, batch, 256), 1u);
  const std::vector<std::string> frames = frames_of(enc);
  ASSERT_EQ(frames.size(), 1u);
  const auto* data = reinterpret_cast<const std::uint8_t*>(frames[0].data());
  for (const bool thrift : {false, true}) {
    SCOPED_TRACE(thrift ? "through Thrift" : "fast path");
    FrameDecoder dec(index_, nullptr);
    worker::Batch out;
    ControlMessage c;
    const auto type = thrift ? dec.decode_with_thrift(data, frames[0].size(), out, c)
                             : dec.decode(data, frames[0].size(), out, c);
    ASSERT_TRUE(type.is_ok()) << type.status().message();
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].messages(), 20u);
    EXPECT_EQ(out[0].kind, worker::MessageKind::kAck);
    EXPECT_EQ(out[0].task(), TaskId(kSrcTask));
    EXPECT_EQ(out[0].root(0), 1u);
    EXPECT_EQ(out[0].value(0), 0x0123456789abcdefULL);
    for (std::size_t i = 1; i < 20; ++i) {
      EXPECT_EQ(out[0].root(i), 0xfedcba9876543210ULL + i);
      EXPECT_EQ(out[0].value(i), i);
    }
  }
}

TEST_F(Codec, DecodedTuplesPointAtTheReceiversOwnPlanStreams) {
  auto receiver_plan = make_test_plan();  // another worker's plan of the same topology
  PlanIndex receiver_index(*receiver_plan);
  worker::Batch batch{data_envelope(*plan_, 3, 1)};
  batch.push_back(data_envelope(*plan_, 4, 2));
  batch[1].tuple.set_source(stream_info(*plan_, "side"), TaskId(kSrcTask));
  FrameEncoder enc;
  ASSERT_EQ(enc.add_tuples(index_, batch, 256), 2u);
  FrameDecoder dec(receiver_index, &local_b_);
  worker::Batch out;
  ControlMessage c;
  auto f = frames_of(enc);
  ASSERT_TRUE(dec.decode(reinterpret_cast<const std::uint8_t*>(f[0].data()), f[0].size(), out, c)
                  .is_ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].tuple.source(), stream_info(*receiver_plan, "default"));
  EXPECT_EQ(out[1].tuple.source(), stream_info(*receiver_plan, "side"));
  EXPECT_EQ(out[0].tuple.get_string("b"), "word");
}

TEST_F(Codec, BatchesSplitIntoFramesOfAtMostBatchSize) {
  worker::Batch batch;
  for (int i = 0; i < 10; ++i) batch.push_back(data_envelope(*plan_, 3 + i % 2, i));
  auto out = round_trip(batch, 4);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].size(), 4u);
  EXPECT_EQ(out[1].size(), 4u);
  EXPECT_EQ(out[2].size(), 2u);
  EXPECT_EQ(out[2][1].tuple.values()[0].as_int(), 9);
}

TEST_F(Codec, TupleOnAStreamThePlanDoesNotHaveIsNotEncoded) {
  StreamInfo foreign{"nope", "default", Fields({"a"}), false};
  worker::Batch batch{data_envelope(*plan_, 3, 1)};
  worker::Envelope bad;
  bad.dest = TaskId(3);
  bad.tuple = Tuple(&foreign, TaskId(kSrcTask), Values{Value(1)});
  batch.push_back(std::move(bad));
  batch.push_back(data_envelope(*plan_, 3, 2));
  FrameEncoder enc;
  worker::Batch before{data_envelope(*plan_, 4, 7)};
  ASSERT_EQ(enc.add_tuples(index_, before, 256), 1u);
  EXPECT_EQ(enc.add_tuples(index_, batch, 256), 2u);
  EXPECT_EQ(enc.unencodable(), std::vector<std::size_t>{1});

  // The frame written before is kept whole, and the batch's frame holds the
  // two others: the bytes of encoding them alone.
  FrameEncoder alone;
  worker::Batch good{data_envelope(*plan_, 3, 1), data_envelope(*plan_, 3, 2)};
  ASSERT_EQ(alone.add_tuples(index_, before, 256), 1u);
  ASSERT_EQ(alone.add_tuples(index_, good, 256), 2u);
  EXPECT_TRUE(alone.unencodable().empty());
  EXPECT_EQ(frames_of(enc), frames_of(alone));
  ASSERT_EQ(frames_of(enc).size(), 2u);
}

TEST_F(Codec, FramesOfValuesLargerThanTheEncodersRoomRoundTrip) {
  // Strings of 3 to 40 KB: frames of several envelopes outgrow the room the
  // encoder asks for at a time, some envelopes alone outgrow it.
  worker::Batch batch;
  for (int i = 0; i < 24; ++i) {
    worker::Envelope e;
    e.dest = TaskId(3 + i % 2);
    const std::size_t n = 3000 + static_cast<std::size_t>(i) * 1700;
    e.tuple =
        Tuple(stream_info(*plan_, "default"), TaskId(kSrcTask),
              Values{Value(i), Value(std::string(n, static_cast<char>('a' + i))), Value(i * 0.25)});
    batch.push_back(std::move(e));
  }
  auto out = round_trip(batch, 5);
  ASSERT_EQ(out.size(), 5u);
  std::size_t k = 0;
  for (const worker::Batch& b : out) {
    for (const worker::Envelope& e : b) {
      EXPECT_EQ(e.dest, batch[k].dest);
      EXPECT_EQ(e.tuple.values(), batch[k].tuple.values()) << "envelope " << k;
      ++k;
    }
  }
  EXPECT_EQ(k, batch.size());
}

// ------------------------------------------------ generated-struct equivalence

wire::Frame generated_frame_for(const worker::TopologyPlan& plan) {
  wire::TupleBatch tb;
  wire::Envelope we;
  we.__set_dest_task(3);
  we.__set_kind(0);
  we.__set_source_task(kSrcTask);
  we.__set_stream_index(0);  // "default"
  for (const Value& v : every_value()) {
    wire::Value wv;
    switch (v.type()) {
      case ValueType::kNull: wv.__set_null_value(wire::Null()); break;
      case ValueType::kBool: wv.__set_bool_value(v.as_bool()); break;
      case ValueType::kInt: wv.__set_int_value(v.as_int()); break;
      case ValueType::kDouble: wv.__set_double_value(v.as_double()); break;
      case ValueType::kString: wv.__set_string_value(v.as_string()); break;
      case ValueType::kBytes:
        wv.__set_bytes_value(std::string(v.as_bytes().begin(), v.as_bytes().end()));
        break;
    }
    we.values.push_back(wv);
  }
  we.anchors = {static_cast<std::int64_t>(0xffffffffffffffffULL), 12345};
  tb.envelopes.push_back(we);
  wire::Envelope ack;
  ack.__set_dest_task(testing::kAckerTask);
  ack.__set_kind(static_cast<std::int8_t>(worker::MessageKind::kAck));
  ack.__set_source_task(kSrcTask);
  ack.__set_stream_index(0);
  ack.anchors = {77, 88};
  tb.envelopes.push_back(ack);
  wire::Frame f;
  f.__set_tuples(tb);
  (void)plan;
  return f;
}

worker::Batch same_batch(const worker::TopologyPlan& plan) {
  worker::Envelope e;
  e.dest = TaskId(3);
  e.tuple = Tuple(stream_info(plan, "default"), TaskId(kSrcTask), every_value());
  e.tuple.mutable_anchors().xor_in(0xffffffffffffffffULL, 12345);
  worker::Envelope ack;
  ack.dest = TaskId(testing::kAckerTask);
  ack.set_control(worker::MessageKind::kAck, 77, 88, TaskId(kSrcTask));
  worker::Batch b;
  b.push_back(std::move(e));
  b.push_back(std::move(ack));
  return b;
}

std::string generated_bytes(const wire::Frame& f) {
  auto buf = std::make_shared<TMemoryBuffer>();
  TCompactProtocol proto(buf);
  f.write(&proto);
  return buf->getBufferAsString();
}

// The bytes of a frame of one envelope, as the generated structs write it.
std::string one_envelope_frame(const wire::Envelope& e) {
  wire::TupleBatch tb;
  tb.envelopes.push_back(e);
  wire::Frame f;
  f.__set_tuples(tb);
  return generated_bytes(f);
}

// `bytes` decoded by `dec`'s own reader or by Thrift's.
Result<FrameType> decode_by(FrameDecoder& dec, bool thrift, const std::string& bytes,
                            worker::Batch& out) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  ControlMessage c;
  return thrift ? dec.decode_with_thrift(data, bytes.size(), out, c)
                : dec.decode(data, bytes.size(), out, c);
}

TEST_F(Codec, EncoderWritesExactlyTheBytesOfTheGeneratedStructs) {
  worker::Batch batch = same_batch(*plan_);
  FrameEncoder enc;
  ASSERT_EQ(enc.add_tuples(index_, batch, 256), 2u);
  auto frames = frames_of(enc);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0], generated_bytes(generated_frame_for(*plan_)));
}

TEST_F(Codec, GeneratedStructsReadWhatTheEncoderWrites) {
  worker::Batch batch = same_batch(*plan_);
  FrameEncoder enc;
  ASSERT_EQ(enc.add_tuples(index_, batch, 256), 2u);
  auto frames = frames_of(enc);
  auto buf = std::make_shared<TMemoryBuffer>(
      reinterpret_cast<std::uint8_t*>(frames[0].data()), static_cast<std::uint32_t>(frames[0].size()));
  TCompactProtocol proto(buf);
  wire::Frame f;
  f.read(&proto);
  EXPECT_EQ(f, generated_frame_for(*plan_));
  EXPECT_EQ(buf->available_read(), 0u);
}

TEST_F(Codec, DecoderReadsWhatTheGeneratedStructsWrite) {
  const std::string bytes = generated_bytes(generated_frame_for(*plan_));
  FrameDecoder dec(index_, &local_b_);
  worker::Batch out;
  ControlMessage c;
  auto type = dec.decode(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), out, c);
  ASSERT_TRUE(type.is_ok()) << type.status().message();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].tuple.values(), every_value());
  EXPECT_EQ(out[0].tuple.anchors()[0].root, 0xffffffffffffffffULL);
  EXPECT_EQ(out[1].kind, worker::MessageKind::kAck);
  EXPECT_EQ(out[1].root(), 77u);
  EXPECT_EQ(out[1].value(), 88u);
  // Read in a straight line, not handed to Thrift's reader.
  EXPECT_EQ(dec.frames_read_by_thrift(), 0u);
}

// Envelopes whose lists need the long header (15 elements or more), task ids
// and anchors of every varint length, a list of 20 envelopes.
worker::Batch long_batch(const worker::TopologyPlan& plan) {
  worker::Batch b;
  for (int i = 0; i < 20; ++i) {
    worker::Envelope e;
    e.dest = TaskId(i % 2 == 0 ? 3 : 4);
    Values values;
    for (int k = 0; k < i; ++k) values.emplace_back(std::int64_t{1} << (3 * k));
    e.tuple = Tuple(stream_info(plan, i % 3 == 0 ? "default" : "side"), TaskId(kSrcTask),
                    std::move(values));
    for (int k = 0; k < i; ++k) {
      e.tuple.mutable_anchors().xor_in(~std::uint64_t{0} >> k, std::uint64_t{1} << (k * 3));
    }
    b.push_back(std::move(e));
  }
  return b;
}

// The generated struct of an envelope of int values (a tuple or a control
// message).
wire::Envelope generated_envelope(const worker::Envelope& e, const PlanIndex& index) {
  const bool tuple = e.kind == worker::MessageKind::kTuple;
  wire::Envelope we;
  we.__set_dest_task(e.dest.value);
  we.__set_kind(static_cast<std::int8_t>(e.kind));
  we.__set_source_task(e.tuple.source_task().value);
  we.__set_stream_index(tuple ? index.stream_index(e.tuple.source()) : 0);
  for (const Value& v : e.tuple.values()) {
    wire::Value wv;
    wv.__set_int_value(v.as_int());
    we.values.push_back(wv);
  }
  for (std::size_t k = 0; k < e.tuple.anchors().size(); ++k) {
    we.anchors.push_back(static_cast<std::int64_t>(e.tuple.anchors()[k].root));
    we.anchors.push_back(static_cast<std::int64_t>(e.tuple.anchors()[k].edge));
  }
  return we;
}

wire::Frame generated_long_frame(const worker::Batch& batch, const PlanIndex& index) {
  wire::TupleBatch tb;
  for (const worker::Envelope& e : batch) tb.envelopes.push_back(generated_envelope(e, index));
  wire::Frame f;
  f.__set_tuples(tb);
  return f;
}

TEST_F(Codec, LongListsAndWideVarintsAreTheBytesOfTheGeneratedStructs) {
  worker::Batch batch = long_batch(*plan_);
  FrameEncoder enc;
  ASSERT_EQ(enc.add_tuples(index_, batch, 256), batch.size());
  auto frames = frames_of(enc);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0], generated_bytes(generated_long_frame(batch, index_)));
  FrameDecoder dec(index_, &local_b_);
  worker::Batch fast, thrift;
  ControlMessage c;
  const auto* data = reinterpret_cast<const std::uint8_t*>(frames[0].data());
  ASSERT_TRUE(dec.decode(data, frames[0].size(), fast, c).is_ok());
  EXPECT_EQ(dec.frames_read_by_thrift(), 0u);
  ASSERT_TRUE(dec.decode_with_thrift(data, frames[0].size(), thrift, c).is_ok());
  ASSERT_EQ(fast.size(), batch.size());
  ASSERT_EQ(thrift.size(), batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    for (const worker::Batch* got : {&fast, &thrift}) {
      const worker::Envelope& e = (*got)[i];
      EXPECT_EQ(e.dest, batch[i].dest);
      EXPECT_EQ(e.tuple.source(), batch[i].tuple.source());
      EXPECT_EQ(e.tuple.values(), batch[i].tuple.values());
      ASSERT_EQ(e.tuple.anchors().size(), batch[i].tuple.anchors().size());
      for (std::size_t k = 0; k < e.tuple.anchors().size(); ++k) {
        EXPECT_EQ(e.tuple.anchors()[k].root, batch[i].tuple.anchors()[k].root);
        EXPECT_EQ(e.tuple.anchors()[k].edge, batch[i].tuple.anchors()[k].edge);
      }
    }
  }
}

// Runs of envelopes alike up to their values (destination, kind, source,
// stream, number of values), each run ended by a change of one of them, with
// acking messages among the tuples: the bytes are the generated structs'
// for every envelope, whatever the one before it.
TEST_F(Codec, EnvelopesAlikeUpToTheirValuesAreTheBytesOfTheGeneratedStructs) {
  std::mt19937_64 rng(20261129);
  worker::Batch batch;
  worker::Envelope model;
  model.dest = TaskId(3);
  model.tuple = Tuple(stream_info(*plan_, "default"), TaskId(kSrcTask), Values{Value(1)});
  while (batch.size() < 600) {
    switch (rng() % 6) {
      case 0:
        model.dest = TaskId(1 + static_cast<std::int32_t>(rng() % 6));
        break;
      case 1:
        model.tuple.set_source(stream_info(*plan_, rng() % 2 ? "default" : "side"),
                               model.tuple.source_task());
        break;
      case 2:
        model.tuple.set_source(
            model.tuple.source(),
            TaskId(rng() % 2 ? kSrcTask : static_cast<std::int32_t>(rng() % 200)));
        break;
      case 3:
        model.tuple.mutable_values().resize(rng() % 20, Value(0));
        break;
      default:
        break;  // the same prefix again
    }
    const std::size_t run = 1 + rng() % 12;
    for (std::size_t r = 0; r < run; ++r) {
      worker::Envelope e;
      if (rng() % 10 == 0) {
        e.dest = TaskId(testing::kAckerTask);
        e.set_control(worker::MessageKind::kAck, rng() | 1, rng(),
                      TaskId(static_cast<std::int32_t>(rng() % 5)));
      } else {
        e.dest = model.dest;
        Values values;
        for (std::size_t k = 0; k < model.tuple.values().size(); ++k) {
          values.emplace_back(static_cast<std::int64_t>(rng() >> (rng() % 64)));
        }
        e.tuple = Tuple(model.tuple.source(), model.tuple.source_task(), std::move(values));
        if (rng() % 3 == 0) e.tuple.mutable_anchors().xor_in(rng() | 1, rng());
      }
      batch.push_back(std::move(e));
    }
  }
  FrameEncoder enc;
  ASSERT_EQ(enc.add_tuples(index_, batch, 50), batch.size());
  const auto frames = frames_of(enc);
  ASSERT_EQ(frames.size(), (batch.size() + 49) / 50);
  for (std::size_t f = 0; f < frames.size(); ++f) {
    wire::TupleBatch tb;
    for (std::size_t i = f * 50; i < std::min(batch.size(), f * 50 + 50); ++i) {
      tb.envelopes.push_back(generated_envelope(batch[i], index_));
    }
    wire::Frame frame;
    frame.__set_tuples(tb);
    ASSERT_EQ(frames[f], generated_bytes(frame)) << "frame " << f;
  }
}

// The decoder takes an envelope that starts with the bytes of a tuple it
// accepted earlier in the frame as the same destination, source and stream:
// runs alike up to their values, ended by a change of destination, stream
// or number of values, with acking messages among them, read without
// Thrift, are what Thrift's reader finds.
TEST_F(Codec, EnvelopesAlikeUpToTheirValuesDecodeAsThriftReadsThem) {
  std::mt19937_64 rng(1129);
  const std::int32_t dests[] = {1, 2, 3, 4, 6};
  auto plan = make_test_plan();
  PlanIndex index(*plan);
  const std::vector<char> local(7, 1);  // every task runs here
  worker::Batch batch;
  std::int32_t dest = 3;
  const char* stream = "default";
  std::size_t num_values = 3;
  while (batch.size() < 1000) {
    switch (rng() % 5) {
      case 0:
        dest = dests[rng() % 5];
        break;  // tasks of the plan
      case 1:
        stream = rng() % 2 ? "default" : "side";
        break;
      case 2:
        num_values = rng() % 20;
        break;
      default:
        break;
    }
    const std::size_t run = 1 + rng() % 12;
    for (std::size_t r = 0; r < run; ++r) {
      worker::Envelope e;
      if (rng() % 10 == 0) {
        e.dest = TaskId(testing::kAckerTask);
        e.set_control(worker::MessageKind::kAck, rng() | 1, rng(),
                      TaskId(static_cast<std::int32_t>(1 + rng() % 5)));
      } else {
        e.dest = TaskId(dest);
        Values values;
        for (std::size_t k = 0; k < num_values; ++k) {
          if (rng() % 4 == 0) {
            values.emplace_back(std::string(rng() % 40, 'w'));
          } else {
            values.emplace_back(static_cast<std::int64_t>(rng() >> (rng() % 64)));
          }
        }
        e.tuple = Tuple(stream_info(*plan, stream), TaskId(testing::kSrcTask), std::move(values));
        for (std::uint64_t a = rng() % 3; a > 0; --a) {
          e.tuple.mutable_anchors().xor_in(rng() | 1, rng());
        }
      }
      batch.push_back(std::move(e));
    }
  }
  FrameEncoder enc;
  ASSERT_EQ(enc.add_tuples(index, batch, 64), batch.size());
  FrameDecoder dec(index, &local);
  worker::Batch fast, thrift;
  ControlMessage c;
  for (const std::string& f : frames_of(enc)) {
    const auto* data = reinterpret_cast<const std::uint8_t*>(f.data());
    ASSERT_TRUE(dec.decode(data, f.size(), fast, c).is_ok());
  }
  EXPECT_EQ(dec.frames_read_by_thrift(), 0u);
  for (const std::string& f : frames_of(enc)) {
    const auto* data = reinterpret_cast<const std::uint8_t*>(f.data());
    ASSERT_TRUE(dec.decode_with_thrift(data, f.size(), thrift, c).is_ok());
  }
  ASSERT_EQ(fast.size(), batch.size());
  ASSERT_EQ(thrift.size(), batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    for (const worker::Batch* got : {&fast, &thrift}) {
      const worker::Envelope& e = (*got)[i];
      ASSERT_EQ(e.dest, batch[i].dest) << i;
      ASSERT_EQ(e.kind, batch[i].kind) << i;
      ASSERT_EQ(e.tuple.source_task(), batch[i].tuple.source_task()) << i;
      if (e.kind == worker::MessageKind::kTuple) {
        ASSERT_EQ(e.tuple.source(), batch[i].tuple.source()) << i;
      }
      ASSERT_EQ(e.tuple.values(), batch[i].tuple.values()) << i;
      ASSERT_EQ(e.tuple.anchors().size(), batch[i].tuple.anchors().size()) << i;
      for (std::size_t k = 0; k < e.tuple.anchors().size(); ++k) {
        ASSERT_EQ(e.tuple.anchors()[k].root, batch[i].tuple.anchors()[k].root) << i;
        ASSERT_EQ(e.tuple.anchors()[k].edge, batch[i].tuple.anchors()[k].edge) << i;
      }
    }
  }
}

// Integers and anchor ids of every varint length (1 to 10 bytes), each at
// the start, the middle and the end of a frame (where fewer than ten bytes
// are left to read): the encoder writes the generated structs' bytes, and
// both readers find what was written.
TEST_F(Codec, VarintsOfEveryLengthRoundTripAnywhereInAFrame) {
  worker::Batch batch;
  std::vector<std::uint64_t> ints;
  for (int bits = 0; bits <= 64; ++bits) {
    ints.push_back(bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1);
    if (bits < 64) ints.push_back(std::uint64_t{1} << bits);  // one bit: sparse groups
  }
  for (std::size_t i = 0; i < ints.size(); ++i) {
    const std::uint64_t x = ints[i];
    const int bits = static_cast<int>(i);
    worker::Envelope e;
    e.dest = TaskId(bits % 2 == 0 ? 3 : 4);
    e.tuple =
        Tuple(stream_info(*plan_, "default"), TaskId(kSrcTask),
              Values{Value(static_cast<std::int64_t>(x)), Value(static_cast<std::int64_t>(0 - x))});
    e.tuple.mutable_anchors().xor_in(x | 1, ~x);
    batch.push_back(std::move(e));
  }
  for (const std::size_t per_frame : {std::size_t{1}, std::size_t{7}, std::size_t{256}}) {
    SCOPED_TRACE("envelopes per frame: " + std::to_string(per_frame));
    FrameEncoder enc;
    ASSERT_EQ(enc.add_tuples(index_, batch, per_frame), batch.size());
    const std::vector<std::string> frames = frames_of(enc);
    if (per_frame == 256) {
      ASSERT_EQ(frames.size(), 1u);
      EXPECT_EQ(frames[0], generated_bytes(generated_long_frame(batch, index_)));
    }
    FrameDecoder dec(index_, &local_b_);
    worker::Batch fast, thrift;
    for (const std::string& f : frames) {
      ControlMessage c;
      const auto* data = reinterpret_cast<const std::uint8_t*>(f.data());
      ASSERT_TRUE(dec.decode(data, f.size(), fast, c).is_ok());
      ASSERT_TRUE(dec.decode_with_thrift(data, f.size(), thrift, c).is_ok());
    }
    EXPECT_EQ(dec.frames_read_by_thrift(), 0u);
    ASSERT_EQ(fast.size(), batch.size());
    ASSERT_EQ(thrift.size(), batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) {
      for (const worker::Batch* got : {&fast, &thrift}) {
        EXPECT_EQ((*got)[i].tuple.values(), batch[i].tuple.values()) << i;
        ASSERT_EQ((*got)[i].tuple.anchors().size(), 1u);
        EXPECT_EQ((*got)[i].tuple.anchors()[0].root, batch[i].tuple.anchors()[0].root) << i;
        EXPECT_EQ((*got)[i].tuple.anchors()[0].edge, batch[i].tuple.anchors()[0].edge) << i;
      }
    }
  }
}

// Another valid layout than Thrift's writer's: the envelope's fields in
// reverse order (ids in long form) and a field this version does not know.
TEST_F(Codec, FramesLaidOutOtherwiseAreReadThroughThrift) {
  auto buf = std::make_shared<TMemoryBuffer>();
  TCompactProtocol proto(buf);
  namespace tp = apache::thrift::protocol;
  proto.writeStructBegin("Frame");
  proto.writeFieldBegin("tuples", tp::T_STRUCT, 4);
  proto.writeStructBegin("TupleBatch");
  proto.writeFieldBegin("envelopes", tp::T_LIST, 1);
  proto.writeListBegin(tp::T_STRUCT, 1);
  proto.writeStructBegin("Envelope");
  proto.writeFieldBegin("future", tp::T_I32, 9);
  proto.writeI32(42);
  proto.writeFieldEnd();
  proto.writeFieldBegin("anchors", tp::T_LIST, 6);
  proto.writeListBegin(tp::T_I64, 2);
  proto.writeI64(7);
  proto.writeI64(8);
  proto.writeListEnd();
  proto.writeFieldEnd();
  proto.writeFieldBegin("values", tp::T_LIST, 5);
  proto.writeListBegin(tp::T_STRUCT, 1);
  proto.writeStructBegin("Value");
  proto.writeFieldBegin("string_value", tp::T_STRING, 5);
  proto.writeString("seven");
  proto.writeFieldEnd();
  proto.writeFieldStop();
  proto.writeStructEnd();
  proto.writeListEnd();
  proto.writeFieldEnd();
  proto.writeFieldBegin("stream_index", tp::T_I32, 4);
  proto.writeI32(0);
  proto.writeFieldEnd();
  proto.writeFieldBegin("source_task", tp::T_I32, 3);
  proto.writeI32(kSrcTask);
  proto.writeFieldEnd();
  proto.writeFieldBegin("kind", tp::T_BYTE, 2);
  proto.writeByte(0);
  proto.writeFieldEnd();
  proto.writeFieldBegin("dest_task", tp::T_I32, 1);
  proto.writeI32(4);
  proto.writeFieldEnd();
  proto.writeFieldStop();
  proto.writeStructEnd();
  proto.writeListEnd();
  proto.writeFieldEnd();
  proto.writeFieldStop();
  proto.writeStructEnd();
  proto.writeFieldEnd();
  proto.writeFieldStop();
  proto.writeStructEnd();
  const std::string bytes = buf->getBufferAsString();
  FrameDecoder dec(index_, &local_b_);
  worker::Batch out;
  ControlMessage c;
  auto type = dec.decode(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), out, c);
  ASSERT_TRUE(type.is_ok()) << type.status().message();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dest, TaskId(4));
  EXPECT_EQ(out[0].tuple.source(), stream_info(*plan_, "default"));
  EXPECT_EQ(out[0].tuple.values(), Values{Value("seven")});
  ASSERT_EQ(out[0].tuple.anchors().size(), 1u);
  EXPECT_EQ(out[0].tuple.anchors()[0].root, 7u);
  EXPECT_EQ(out[0].tuple.anchors()[0].edge, 8u);
  EXPECT_EQ(dec.frames_read_by_thrift(), 1u);
}

TEST_F(Codec, ControlMessagesRoundTrip) {
  FrameEncoder enc;
  enc.add_hello("topo-1", "127.0.0.1", 6701);
  enc.add_hello_ack();
  enc.add_refused("topology 'x' is not this worker's topology 'y'");
  enc.add_backpressure({TaskId(3), TaskId(6)}, true);
  auto frames = frames_of(enc);
  ASSERT_EQ(frames.size(), 4u);
  FrameDecoder dec(index_, &local_b_);
  worker::Batch out;
  std::vector<ControlMessage> got(4);
  std::vector<FrameType> types;
  for (std::size_t i = 0; i < 4; ++i) {
    auto t = dec.decode(reinterpret_cast<const std::uint8_t*>(frames[i].data()), frames[i].size(),
                        out, got[i]);
    ASSERT_TRUE(t.is_ok()) << t.status().message();
    types.push_back(*t);
  }
  EXPECT_EQ(types, (std::vector<FrameType>{FrameType::kHello, FrameType::kHelloAck,
                                           FrameType::kRefused, FrameType::kBackpressure}));
  EXPECT_EQ(got[0].topology_id, "topo-1");
  EXPECT_EQ(got[0].host, "127.0.0.1");
  EXPECT_EQ(got[0].port, 6701);
  EXPECT_EQ(got[0].protocol_version, kProtocolVersion);
  EXPECT_EQ(got[1].protocol_version, kProtocolVersion);
  EXPECT_EQ(got[2].reason, "topology 'x' is not this worker's topology 'y'");
  EXPECT_EQ(got[3].tasks, (std::vector<TaskId>{TaskId(3), TaskId(6)}));
  EXPECT_TRUE(got[3].on);
  EXPECT_TRUE(out.empty());
}

TEST_F(Codec, GoodbyeRoundTripsThroughBothReaders) {
  FrameEncoder enc;
  enc.add_goodbye("it is stopping");
  auto frames = frames_of(enc);
  ASSERT_EQ(frames.size(), 1u);
  const auto* data = reinterpret_cast<const std::uint8_t*>(frames[0].data());
  FrameDecoder dec(index_, &local_b_);
  worker::Batch out;
  ControlMessage fast, thrift;
  auto t = dec.decode(data, frames[0].size(), out, fast);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(*t, FrameType::kGoodbye);
  EXPECT_EQ(fast.reason, "it is stopping");
  auto t2 = dec.decode_with_thrift(data, frames[0].size(), out, thrift);
  ASSERT_TRUE(t2.is_ok()) << t2.status().message();
  EXPECT_EQ(*t2, FrameType::kGoodbye);
  EXPECT_EQ(thrift.reason, "it is stopping");
  EXPECT_TRUE(out.empty());
}

// ------------------------------------------------------------ malformed frames

// Many anchors (a window's output): distinct roots, in whatever order, are
// kept in that order by both readers; a frame from another writer that
// repeats a root among many XORs the repeats into one entry, as a short list
// does.
TEST_F(Codec, ManyAnchorsKeepTheirOrderAndRepeatedRootsAreXored) {
  wire::Envelope we;
  we.__set_dest_task(3);
  we.__set_kind(0);
  we.__set_source_task(kSrcTask);
  we.__set_stream_index(0);
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> roots;
  for (int i = 0; i < 1000; ++i) {
    roots.push_back(rng());
    we.anchors.push_back(static_cast<std::int64_t>(roots.back()));
    we.anchors.push_back(i);
  }
  wire::Envelope repeats = we;
  repeats.anchors.push_back(static_cast<std::int64_t>(roots[10]));  // root 10 again
  repeats.anchors.push_back(0x500);
  for (const bool thrift : {false, true}) {
    SCOPED_TRACE(thrift ? "through Thrift" : "fast path");
    for (const bool repeated : {false, true}) {
      FrameDecoder dec(index_, nullptr);
      worker::Batch out;
      const auto type = decode_by(dec, thrift, one_envelope_frame(repeated ? repeats : we), out);
      ASSERT_TRUE(type.is_ok()) << type.status().message();
      const MessageAnchors& got = out.at(0).tuple.anchors();
      ASSERT_EQ(got.size(), 1000u);
      for (std::size_t i = 0; i < 1000; ++i) {
        EXPECT_EQ(got[i].root, roots[i]);
        EXPECT_EQ(got[i].edge, i == 10 && repeated ? (10u ^ 0x500u) : i);
      }
    }
  }
}

// An acking envelope's pairs are messages: a root may repeat (Transfer
// coalesces without a scan), each pair kept in order by both readers, a pair
// XORed into the one before only when it has the same root.
TEST_F(Codec, AnAckingEnvelopeKeepsARepeatedRootAsAMessageOfItsOwn) {
  wire::Envelope we;
  we.__set_dest_task(testing::kAckerTask);
  we.__set_kind(static_cast<std::int8_t>(worker::MessageKind::kAck));
  we.__set_source_task(kSrcTask);
  we.__set_stream_index(0);
  we.anchors = {9, 1, 5, 2, 9, 4, 9, 8};
  const std::string bytes = one_envelope_frame(we);
  for (const bool thrift : {false, true}) {
    SCOPED_TRACE(thrift ? "through Thrift" : "fast path");
    FrameDecoder dec(index_, nullptr);
    worker::Batch out;
    const auto type = decode_by(dec, thrift, bytes, out);
    ASSERT_TRUE(type.is_ok()) << type.status().message();
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].messages(), 3u);
    EXPECT_EQ(out[0].root(0), 9u);
    EXPECT_EQ(out[0].value(0), 1u);
    EXPECT_EQ(out[0].root(1), 5u);
    EXPECT_EQ(out[0].value(1), 2u);
    EXPECT_EQ(out[0].root(2), 9u);
    EXPECT_EQ(out[0].value(2), 4u ^ 8u);
    EXPECT_EQ(dec.frames_read_by_thrift(), 0u);
  }
}

class MalformedFrame : public Codec {
 protected:
  std::string decode_error(const std::string& frame) {
    FrameDecoder dec(index_, &local_b_);
    worker::Batch out{data_envelope(*plan_, 3, 0)};  // what was there stays
    ControlMessage c;
    auto t = dec.decode(reinterpret_cast<const std::uint8_t*>(frame.data()), frame.size(), out, c);
    EXPECT_FALSE(t.is_ok());
    EXPECT_EQ(out.size(), 1u);
    // Thrift's own reader says the same.
    auto thrift = dec.decode_with_thrift(reinterpret_cast<const std::uint8_t*>(frame.data()),
                                         frame.size(), out, c);
    EXPECT_FALSE(thrift.is_ok());
    EXPECT_EQ(out.size(), 1u);
    if (t.is_ok() || thrift.is_ok()) return std::string();
    EXPECT_EQ(t.status().message(), thrift.status().message());
    return t.status().message();
  }
  std::string frame_with(wire::Envelope e) {
    wire::TupleBatch tb;
    tb.envelopes.push_back(e);
    wire::Envelope ok;  // a good envelope first: its decoded tuple must not survive
    ok.__set_dest_task(3);
    ok.__set_source_task(kSrcTask);
    tb.envelopes.insert(tb.envelopes.begin(), ok);
    wire::Frame f;
    f.__set_tuples(tb);
    return generated_bytes(f);
  }
};

TEST_F(MalformedFrame, EnvelopeForATaskThisWorkerDoesNotRunIsRefused) {
  wire::Envelope e;
  e.__set_dest_task(1);  // runs on worker A
  e.__set_source_task(kSrcTask);
  EXPECT_EQ(decode_error(frame_with(e)),
            "an envelope for task 1, which this worker does not run");
}

TEST_F(MalformedFrame, EnvelopeForATaskTheTopologyDoesNotHaveIsRefused) {
  wire::Envelope e;
  e.__set_dest_task(4000);
  e.__set_source_task(kSrcTask);
  EXPECT_EQ(decode_error(frame_with(e)),
            "an envelope for task 4000, which the topology does not have");
}

TEST_F(MalformedFrame, StreamIndexThatDoesNotExistIsRefused) {
  wire::Envelope e;
  e.__set_dest_task(3);
  e.__set_source_task(kSrcTask);
  e.__set_stream_index(7);
  EXPECT_EQ(decode_error(frame_with(e)),
            "a tuple on stream index 7 of component 'src' (task 5), which declares 2 streams");
}

TEST_F(MalformedFrame, UnknownKindIsRefused) {
  wire::Envelope e;
  e.__set_dest_task(3);
  e.__set_kind(9);
  EXPECT_EQ(decode_error(frame_with(e)), "an envelope of unknown kind 9");
}

TEST_F(MalformedFrame, AckingMessageWithoutAnAnchorIsRefused) {
  wire::Envelope e;
  e.__set_dest_task(6);
  e.__set_kind(static_cast<std::int8_t>(worker::MessageKind::kAck));
  EXPECT_EQ(decode_error(frame_with(e)),
            "an acking message with 0 anchors and 0 values (needs at least 1 and 0)");
}

TEST_F(MalformedFrame, BarrierWithMoreThanItsAnchorIsRefused) {
  wire::Envelope e;
  e.__set_dest_task(6);
  e.__set_kind(static_cast<std::int8_t>(worker::MessageKind::kBarrier));
  e.anchors = {1, 0, 2, 0};
  EXPECT_EQ(decode_error(frame_with(e)),
            "a control message with 2 anchors and 0 values (needs 1 and 0)");
}

TEST_F(MalformedFrame, AnchorListWithoutPairsIsRefused) {
  wire::Envelope e;
  e.__set_dest_task(3);
  e.__set_source_task(kSrcTask);
  e.anchors = {1, 2, 3};
  EXPECT_EQ(decode_error(frame_with(e)), "an anchor list of 3 ids (needs root, edge pairs)");
}

TEST_F(MalformedFrame, ValueWithNoFieldSetIsRefused) {
  wire::Envelope e;
  e.__set_dest_task(3);
  e.__set_source_task(kSrcTask);
  e.values.emplace_back();
  EXPECT_EQ(decode_error(frame_with(e)), "a value with no field set");
}

TEST_F(MalformedFrame, GarbageBytesAreRefused) {
  EXPECT_NE(decode_error(std::string("\xff\xfe\xfd\xfc garbage \x01\x02", 16)), "");
  EXPECT_EQ(decode_error(std::string()), "an empty frame");
  EXPECT_EQ(decode_error(std::string(1, '\0')), "a frame with no message");
}

TEST_F(MalformedFrame, TruncatedMessageIsRefused) {
  worker::Batch batch{data_envelope(*plan_, 3, 1)};
  FrameEncoder enc;
  ASSERT_EQ(enc.add_tuples(index_, batch, 256), 1u);
  std::string f = frames_of(enc)[0];
  f.resize(f.size() - 3);
  EXPECT_NE(decode_error(f).find("bytes that are not a message"), std::string::npos);
}

TEST_F(MalformedFrame, TrailingBytesAfterTheMessageAreRefused) {
  worker::Batch batch{data_envelope(*plan_, 3, 1)};
  FrameEncoder enc;
  ASSERT_EQ(enc.add_tuples(index_, batch, 256), 1u);
  std::string f = frames_of(enc)[0] + "xyz";
  EXPECT_EQ(decode_error(f), "3 bytes after the end of the message");
}

TEST_F(MalformedFrame, HugeListCountDoesNotAllocateBeyondTheFrame) {
  // Frame{tuples{envelopes: list of 2^28 structs}} in 12 bytes.
  std::string f;
  f += '\x4c';                      // field 4, struct
  f += '\x19';                      // field 1, list
  f += '\xfc';                      // size follows, element type struct
  f += std::string("\x80\x80\x80\x80\x01", 5);  // 2^28
  EXPECT_NE(decode_error(f), "");
}

}  // namespace
}  // namespace rstorm::transport
