// The data plane's wire format (data_plane.thrift): frames of a 4-byte
// big-endian length and one Thrift compact-protocol Frame. FrameEncoder writes
// tuple batches straight into a reusable buffer (no per-tuple allocation, no
// protocol object) in exactly the bytes the generated structs write;
// FrameDecoder reads them back the same way into envelopes whose tuples point
// at this worker's plan StreamInfo (any other valid layout through Thrift's
// reader), and rejects anything malformed with a Status naming the fault.
// Control messages (hello, refusal, backpressure) go through the generated
// structs: they are rare.
//
// Thread contract: an encoder or decoder is single-thread (one per producer
// thread, one per connection); the PlanIndex they borrow is shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.hpp"
#include "rstorm/ids.hpp"
#include "rstorm/worker/envelope.hpp"
#include "worker/transport/plan_index.hpp"

namespace rstorm::transport {

// 2: an acking envelope (kAckInit .. kAckFailed) may carry many (root,
// value) pairs, each one message; 1 carried one.
inline constexpr std::int32_t kProtocolVersion = 2;
inline constexpr std::size_t kLengthPrefixBytes = 4;

enum class FrameType {
  kHello,
  kHelloAck,
  kRefused,
  kTuples,
  kBackpressure,
  kChallenge,
  kProof,
  kGoodbye
};

// The fields of the control messages (everything but tuples).
struct ControlMessage {
  std::string topology_id;  // hello
  std::string host;         // hello: the sender's listening address
  std::int32_t port = 0;
  std::int32_t protocol_version = 0;  // hello, hello ack
  std::string reason;                 // refused, goodbye
  std::vector<TaskId> tasks;          // backpressure
  bool on = false;
  bool state = false;                 // backpressure: `tasks` is the whole throttled set
  std::string nonce;                  // hello (empty: none), challenge
  std::string proof;                  // challenge, proof
};

// Reads the big-endian length prefix at `p` (4 bytes).
inline std::uint32_t read_length_prefix(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

class FrameEncoder {
 public:
  FrameEncoder();
  ~FrameEncoder();
  FrameEncoder(const FrameEncoder&) = delete;
  FrameEncoder& operator=(const FrameEncoder&) = delete;

  // Forgets the frames encoded so far (keeps the memory).
  void clear();
  // Appends the envelopes of `batch` as frames of at most `max_per_frame`
  // envelopes each. A tuple whose stream the plan does not know cannot be
  // encoded: it is skipped and its index listed in unencodable(). Returns the
  // envelopes encoded.
  std::size_t add_tuples(const PlanIndex& index, const worker::Batch& batch,
                         std::size_t max_per_frame);
  // Indices into the batch of the last add_tuples() that were not encoded.
  const std::vector<std::size_t>& unencodable() const;
  // `nonce` empty: a hello without authentication.
  void add_hello(const std::string& topology_id, const std::string& host, std::int32_t port,
                 const std::string& nonce = {});
  void add_challenge(const std::string& nonce, const std::string& proof);
  void add_proof(const std::string& proof);
  void add_hello_ack();
  void add_refused(const std::string& reason);
  void add_goodbye(const std::string& reason);
  void add_backpressure(const std::vector<TaskId>& tasks, bool on);
  // The whole set of throttled tasks (every other one released).
  void add_backpressure_state(const std::vector<TaskId>& throttled);

  // The frames encoded since the last clear(), length prefixes included.
  const std::uint8_t* data() const;
  std::size_t size() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

class FrameDecoder {
 public:
  // `local`: index by task id, nonzero for tasks this worker runs; nullptr
  // accepts any task of the plan (used to decode our own outgoing frames).
  // Both borrowed.
  FrameDecoder(const PlanIndex& index, const std::vector<char>* local);
  ~FrameDecoder();
  FrameDecoder(const FrameDecoder&) = delete;
  FrameDecoder& operator=(const FrameDecoder&) = delete;

  // Decodes one frame (without its length prefix). Tuples are appended to
  // `out`; control messages fill `control`. On error `out` is as it was and
  // the Status says what is wrong with the bytes.
  Result<FrameType> decode(const std::uint8_t* data, std::size_t size, worker::Batch& out,
                           ControlMessage& control);
  // As decode(), into a batch whose envelopes are all finished with (a
  // batch a receive queue handed back): the frame's envelopes overwrite them
  // in place, values and anchors reset, and those left over are dropped, so
  // that a steady stream of frames constructs and destroys no envelope. On
  // return `out` holds the frame's envelopes only (none on error).
  Result<FrameType> decode_reusing(const std::uint8_t* data, std::size_t size, worker::Batch& out,
                                   ControlMessage& control);
  // The same through Thrift's own compact-protocol reader only. decode()
  // reads a tuple frame laid out as Thrift's writer lays it out (every frame
  // FrameEncoder or the generated structs write) without it, and hands any
  // other frame to it; tests and the fuzzer check both ways agree.
  Result<FrameType> decode_with_thrift(const std::uint8_t* data, std::size_t size,
                                       worker::Batch& out, ControlMessage& control);
  // Tuple frames decode() handed to Thrift's reader because they were not
  // laid out as Thrift's writer lays them out (0 for every frame a worker
  // sends; tests check it).
  std::uint64_t frames_read_by_thrift() const;

 private:
  // `stale`: the last envelopes of `out` that are finished with.
  Result<FrameType> decode(const std::uint8_t* data, std::size_t size, worker::Batch& out,
                           ControlMessage& control, bool thrift_only, std::size_t stale);

  struct State;
  std::unique_ptr<State> s_;
};

// Decodes a run of length-prefixed tuple frames this worker encoded itself
// (an outgoing buffer that will not be sent) into `out`. Frames that do not
// decode are skipped and counted in the return value's complement: returns
// the number of frames that failed (0 normally).
std::size_t decode_outgoing(const PlanIndex& index, const std::uint8_t* data, std::size_t size,
                            worker::Batch& out);

}  // namespace rstorm::transport
