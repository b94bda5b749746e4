// InboundSession: one connection another worker opened to send us tuples.
// Reads frames (length-checked before anything is allocated), checks the
// hello (topology id, a worker of the assignment), decodes tuple batches and
// hands them to InboundHandler::deliver, which never refuses: the session
// never stops reading because one destination is full (no head-of-line
// blocking; see worker/README.md, "Flow control"). It also carries this worker's backpressure messages back to
// the sender. A malformed frame closes this connection only, with one log line
// naming the remote address and the fault.
//
// Thread contract: io thread only.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "worker/transport/codec.hpp"
#include "worker/transport/core.hpp"
#include "worker/transport/stream.hpp"

namespace rstorm::transport {

class InboundSession : public std::enable_shared_from_this<InboundSession> {
 public:
  // TLS when `tls` is not null (storm.messaging.netty.tls.enable).
  InboundSession(TransportCore& core, boost::asio::ip::tcp::socket socket,
                 boost::asio::ssl::context* tls);

  void start();
  // Closes the connection; envelopes decoded but not yet delivered are given
  // up with `reason` (only when the transport stops).
  void close(std::string_view reason);
  // The transport stops: tells an accepted sender so (a goodbye frame, after
  // the frames already queued for it), so that it reports the close as the
  // peer stopping rather than as a lost connection, reads nothing more, and
  // closes once the goodbye is written (or at close()), with `reason` as
  // close()'s. `done` runs when the session is closed.
  void say_goodbye(const std::string& reason, std::function<void()> done);
  // Tells the sender the whole set of this worker's throttled tasks.
  void send_backpressure_state(const std::vector<TaskId>& throttled);
  bool accepted() const { return accepted_; }
  const WorkerAddress& claimed() const { return claimed_; }

 private:
  void read_more();
  void process();
  bool handle_frame(const std::uint8_t* data, std::size_t size);
  bool handle_hello();
  bool handle_proof();
  bool accept();
  void reject(const std::string& what);
  void refuse(const std::string& why);
  void send(const FrameEncoder& encoder);
  void write_next();
  std::string who() const;

  TransportCore& core_;
  PeerStream stream_;
  std::string remote_;  // "ip:port" of the socket's far end
  FrameDecoder decoder_;
  ControlMessage control_;

  std::vector<std::uint8_t> buf_;  // bytes read: [begin_, end_) not yet parsed
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  // The last frame's envelopes: not yet delivered while `decoded_`; once
  // delivered, whatever the handler handed back, finished with, which the
  // next frame's envelopes overwrite (FrameDecoder::decode_reusing).
  worker::Batch batch_;
  bool decoded_ = false;
  bool reading_ = false;
  bool closed_ = false;
  bool accepted_ = false;
  bool close_after_write_ = false;
  std::string close_reason_;         // close()'s, once the last queued frame is written
  bool draining_ = false;            // said goodbye: what the sender still sends is dropped
  std::function<void()> on_closed_;  // say_goodbye's `done`
  WorkerAddress claimed_;
  // Authentication: the hello was answered with a challenge; the sender's
  // proof is the only frame read until it is verified.
  bool awaiting_proof_ = false;
  std::string sender_nonce_;
  std::string receiver_nonce_;

  std::deque<std::vector<std::uint8_t>> out_;
  bool writing_ = false;
};

}  // namespace rstorm::transport
