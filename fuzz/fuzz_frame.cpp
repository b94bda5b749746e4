// Data-plane frames (worker/transport/codec.hpp): any bytes another worker
// could send as the body of one length-prefixed frame, decoded against the
// transport tests' plan (tests/transport/transport_test_support.hpp). The
// first input byte picks the receiver: even, worker B of that plan (tasks 3, 4
// and 6, as an InboundSession decodes); odd, any task of the plan (as
// decode_outgoing does).
//
// Checks: the decoder's own reading of tuple frames and Thrift's compact
// protocol reader (decode_with_thrift) accept the same frames, find the same
// envelopes and refuse with the same message; a frame that does not decode
// leaves the caller's batch as it was; a
// tuple frame that decodes re-encodes with FrameEncoder (nothing unencodable)
// into one frame that decodes to the same envelopes; a control frame re-encodes
// into a frame that decodes to the same message.
#include <cstring>

#include "fuzz/fuzz_check.hpp"
#include "tests/transport/transport_test_support.hpp"
#include "worker/transport/codec.hpp"

namespace rstorm::fuzz {
namespace {

using transport::ControlMessage;
using transport::FrameDecoder;
using transport::FrameEncoder;
using transport::FrameType;

struct Plan {
  std::unique_ptr<worker::TopologyPlan> plan = transport::testing::make_test_plan();
  transport::PlanIndex index{*plan};
  std::vector<char> worker_b = {0, 0, 0, 1, 1, 0, 1};
};

bool same_value(const Value& a, const Value& b) {
  if (a.type() != b.type()) return false;
  if (a.type() != ValueType::kDouble) return a == b;
  const double x = a.as_double(), y = b.as_double();
  return std::memcmp(&x, &y, sizeof x) == 0;  // NaN payloads and -0.0 included
}

bool same_envelope(const worker::Envelope& a, const worker::Envelope& b) {
  if (a.dest != b.dest || a.kind != b.kind || a.tuple.source() != b.tuple.source() ||
      a.tuple.source_task() != b.tuple.source_task() ||
      a.tuple.values().size() != b.tuple.values().size() ||
      a.tuple.anchors().size() != b.tuple.anchors().size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.tuple.values().size(); ++i) {
    if (!same_value(a.tuple.values()[i], b.tuple.values()[i])) return false;
  }
  for (std::size_t i = 0; i < a.tuple.anchors().size(); ++i) {
    if (a.tuple.anchors()[i].root != b.tuple.anchors()[i].root ||
        a.tuple.anchors()[i].edge != b.tuple.anchors()[i].edge) {
      return false;
    }
  }
  return true;
}

// Decodes the single frame `encoder` holds (length prefix checked).
Result<FrameType> decode_encoded(const Plan& p, const FrameEncoder& encoder, worker::Batch& out,
                                 ControlMessage& control) {
  fuzz_check(encoder.size() >= transport::kLengthPrefixBytes &&
                 transport::read_length_prefix(encoder.data()) + transport::kLengthPrefixBytes ==
                     encoder.size(),
             "the encoder wrote exactly one frame");
  FrameDecoder decoder(p.index, nullptr);
  return decoder.decode(encoder.data() + transport::kLengthPrefixBytes,
                        encoder.size() - transport::kLengthPrefixBytes, out, control);
}

void check_tuples(const Plan& p, const worker::Batch& decoded) {
  if (decoded.empty()) return;  // the encoder writes no frame for no envelopes
  FrameEncoder encoder;
  fuzz_check(encoder.add_tuples(p.index, decoded, decoded.size()) == decoded.size() &&
                 encoder.unencodable().empty(),
             "every decoded envelope re-encodes");
  worker::Batch again;
  ControlMessage control;
  auto type = decode_encoded(p, encoder, again, control);
  fuzz_check(type.is_ok() && *type == FrameType::kTuples, "a re-encoded tuple frame decodes");
  fuzz_check(again.size() == decoded.size(), "a re-encoded frame has every envelope");
  for (std::size_t i = 0; i < decoded.size(); ++i) {
    fuzz_check(same_envelope(decoded[i], again[i]), "a re-encoded envelope decodes the same");
  }
}

void check_control(const Plan& p, FrameType type, const ControlMessage& c) {
  FrameEncoder encoder;
  switch (type) {
    case FrameType::kHello:
      encoder.add_hello(c.topology_id, c.host, c.port, c.nonce);
      break;
    case FrameType::kChallenge:
      encoder.add_challenge(c.nonce, c.proof);
      break;
    case FrameType::kProof:
      encoder.add_proof(c.proof);
      break;
    case FrameType::kHelloAck:
      encoder.add_hello_ack();
      break;
    case FrameType::kRefused:
      encoder.add_refused(c.reason);
      break;
    case FrameType::kGoodbye:
      encoder.add_goodbye(c.reason);
      break;
    case FrameType::kBackpressure:
      if (c.state) {
        encoder.add_backpressure_state(c.tasks);
      } else {
        encoder.add_backpressure(c.tasks, c.on);
      }
      break;
    case FrameType::kTuples:
      return;
  }
  worker::Batch none;
  ControlMessage again;
  auto decoded = decode_encoded(p, encoder, none, again);
  fuzz_check(decoded.is_ok() && *decoded == type && none.empty(),
             "a re-encoded control frame decodes to its type");
  fuzz_check(again.topology_id == c.topology_id && again.host == c.host && again.port == c.port &&
                 again.reason == c.reason && again.tasks == c.tasks && again.state == c.state &&
                 (c.state || again.on == c.on),
             "a re-encoded control frame decodes to the same message");
}

}  // namespace
}  // namespace rstorm::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rstorm;
  using namespace rstorm::fuzz;
  static const Plan p;
  if (size == 0) return 0;
  const auto input = select(data, size, 2);
  FrameDecoder decoder(p.index, input.choice == 0 ? &p.worker_b : nullptr);
  // One envelope already in the batch: decode() appends, and must restore it on error.
  worker::Batch out(1);
  ControlMessage control;
  auto type = decoder.decode(reinterpret_cast<const std::uint8_t*>(input.bytes.data()),
                             input.bytes.size(), out, control);
  {
    // Thrift's own reader decides the same, to the envelope and the message.
    worker::Batch reference(1);
    ControlMessage ignored;
    auto thrift =
        decoder.decode_with_thrift(reinterpret_cast<const std::uint8_t*>(input.bytes.data()),
                                   input.bytes.size(), reference, ignored);
    fuzz_check(thrift.is_ok() == type.is_ok(), "Thrift's reader accepts exactly the same frames");
    if (!type.is_ok()) {
      fuzz_check(thrift.status().message() == type.status().message(),
                 "Thrift's reader refuses a frame for the same reason");
    } else {
      fuzz_check(*thrift == *type && reference.size() == out.size(),
                 "Thrift's reader finds the same message");
      for (std::size_t i = 1; i < out.size(); ++i) {
        fuzz_check(same_envelope(out[i], reference[i]), "Thrift's reader finds the same envelope");
      }
    }
  }
  if (!type.is_ok()) {
    fuzz_check(out.size() == 1, "a frame that does not decode leaves the batch as it was");
    fuzz_check(!type.status().message().empty(), "a decode error says what is wrong");
    return 0;
  }
  fuzz_check(*type == FrameType::kTuples || out.size() == 1, "a control frame adds no envelope");
  if (*type == FrameType::kTuples) {
    out.erase(out.begin());
    check_tuples(p, out);
  } else {
    check_control(p, *type, control);
  }
  return 0;
}
