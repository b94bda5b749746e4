#include "worker/transport/inbound_session.hpp"

#include <algorithm>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <cstring>
#include <utility>

#include "worker/transport/authentication.hpp"

namespace rstorm::transport {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {
constexpr std::size_t kReadChunk = 256 * 1024;
}  // namespace

InboundSession::InboundSession(TransportCore& core, tcp::socket socket, asio::ssl::context* tls)
    : core_(core), stream_(std::move(socket), tls), decoder_(core.index, &core.local) {
  boost::system::error_code ec;
  const tcp::endpoint ep = stream_.socket().remote_endpoint(ec);
  remote_ = ec ? std::string("an unknown address")
               : ep.address().to_string() + ":" + std::to_string(ep.port());
  buf_.resize(kReadChunk);
}

std::string InboundSession::who() const {
  return accepted_ ? remote_ + " (worker " + claimed_.to_string() + ")" : remote_;
}

void InboundSession::start() {
  boost::system::error_code ignored;
  stream_.socket().set_option(tcp::no_delay(true), ignored);
  if (!stream_.tls()) {
    read_more();
    return;
  }
  reading_ = true;  // nothing is read before the handshake is done
  stream_.async_handshake(true, [self = shared_from_this()](const boost::system::error_code& ec) {
    self->reading_ = false;
    if (self->closed_) return;
    if (ec) {
      TransportCounters::add(self->core_.counters.connections_refused, 1);
      self->core_.log.warn("refused connection from {}: TLS handshake failed: {}", self->remote_,
                           explain_tls_error(ec, true));
      self->close("the TLS handshake failed");
      return;
    }
    self->read_more();
  });
}

void InboundSession::read_more() {
  if (closed_ || reading_ || close_after_write_) return;
  if (begin_ == end_) begin_ = end_ = 0;
  if (buf_.size() - end_ < kReadChunk / 4 && begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buf_.size()) buf_.resize(buf_.size() + kReadChunk);
  reading_ = true;
  stream_.async_read_some(
      asio::buffer(buf_.data() + end_, buf_.size() - end_),
      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
        self->reading_ = false;
        if (self->closed_) return;
        if (ec) {
          // A TLS peer that closes its socket without a close_notify ends the
          // stream "truncated": to us, the connection ended.
          const bool ended = ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
          const std::size_t left = self->end_ - self->begin_;
          if (left > 0) {
            TransportCounters::add(self->core_.counters.frames_rejected, 1);
            const std::size_t want =
                left >= kLengthPrefixBytes
                    ? kLengthPrefixBytes + read_length_prefix(self->buf_.data() + self->begin_)
                    : kLengthPrefixBytes;
            self->core_.log.error(
                "truncated frame from {}: the connection ended after {} of its {} bytes ({}); "
                "frame dropped, closing the connection",
                self->who(), left, want, ended ? "closed by the peer" : ec.message());
          } else if (ended || self->draining_) {
            self->core_.log.debug("connection from {} closed by the peer", self->who());
          } else {
            self->core_.log.warn("connection from {} failed: {}", self->who(),
                                 self->stream_.tls() ? explain_tls_error(ec, true) : ec.message());
          }
          self->close(self->draining_ ? self->close_reason_
                                      : "the sending worker's connection closed");
          return;
        }
        TransportCounters::add(self->core_.counters.bytes_received, n);
        if (self->draining_) {
          self->begin_ = self->end_;  // dropped (say_goodbye)
          self->read_more();
          return;
        }
        self->end_ += n;
        self->process();
        self->core_.handler->read_delivered();
      });
}

void InboundSession::process() {
  while (!closed_ && !close_after_write_) {
    if (decoded_) {
      // Never waits: the handler absorbs a full executor and throttles it, so
      // this connection, and every other on this thread, keeps being read.
      decoded_ = false;
      if (!batch_.empty()) core_.handler->deliver(batch_);
    }
    const std::size_t avail = end_ - begin_;
    if (avail < kLengthPrefixBytes) break;
    const std::uint32_t length = read_length_prefix(buf_.data() + begin_);
    if (length > core_.options.max_frame_bytes) {
      if (!accepted_ && !stream_.tls() && buf_[begin_] == 0x16 && buf_[begin_ + 1] == 0x03) {
        TransportCounters::add(core_.counters.connections_refused, 1);
        core_.log.warn(
            "refused connection from {}: it speaks TLS, and "
            "storm.messaging.netty.tls.enable is off on this worker",
            remote_);
        close("the sender speaks TLS");
        return;
      }
      reject("frame of " + std::to_string(length) + " bytes from " + who() +
             " exceeds worker.transport.max.frame.bytes (" +
             std::to_string(core_.options.max_frame_bytes) + "); closing the connection");
      return;
    }
    const std::size_t whole = kLengthPrefixBytes + length;
    if (avail < whole) {
      // Make room for the whole frame, then read on.
      if (buf_.size() - begin_ < whole) {
        std::memmove(buf_.data(), buf_.data() + begin_, avail);
        begin_ = 0;
        end_ = avail;
        if (buf_.size() < whole) buf_.resize(whole);
      }
      break;
    }
    const std::uint8_t* frame = buf_.data() + begin_ + kLengthPrefixBytes;
    begin_ += whole;
    if (!handle_frame(frame, length)) return;
  }
  if (!closed_ && !close_after_write_) read_more();
}

bool InboundSession::handle_frame(const std::uint8_t* data, std::size_t size) {
  auto type = decoder_.decode_reusing(data, size, batch_, control_);
  if (!type.is_ok()) {
    reject("undecodable frame of " + std::to_string(size) + " bytes from " + who() + ": " +
           type.status().message() + "; closing the connection");
    return false;
  }
  TransportCounters::add(core_.counters.frames_received, 1);
  if (!accepted_) {
    if (awaiting_proof_) {
      if (*type == FrameType::kProof) return handle_proof();
      batch_.clear();
      refuse("it sent a message before proving it holds topology '" + core_.options.topology_id +
             "''s credentials");
      return false;
    }
    if (*type != FrameType::kHello) {
      batch_.clear();
      reject("frame from " + remote_ + " before its hello; closing the connection");
      return false;
    }
    return handle_hello();
  }
  switch (*type) {
    case FrameType::kTuples:
      TransportCounters::add(core_.counters.tuples_received, batch_.size());
      decoded_ = true;
      return true;
    case FrameType::kHello:
      reject("second hello from " + who() + "; closing the connection");
      return false;
    default:
      reject("unexpected message from sending worker " + who() + "; closing the connection");
      return false;
  }
}

bool InboundSession::handle_hello() {
  claimed_ = WorkerAddress{control_.host, control_.port};
  if (control_.protocol_version != kProtocolVersion) {
    refuse("it speaks data plane protocol version " + std::to_string(control_.protocol_version) +
           ", this worker speaks " + std::to_string(kProtocolVersion));
    return false;
  }
  if (control_.topology_id != core_.options.topology_id) {
    refuse("topology '" + control_.topology_id + "' is not this worker's topology '" +
           core_.options.topology_id + "'");
    return false;
  }
  if (!core_.allowed.contains(claimed_)) {
    refuse("worker " + claimed_.to_string() + " is not in this topology's assignment");
    return false;
  }
  if (core_.options.authenticate) {
    if (control_.nonce.size() != kNonceBytes) {
      refuse("it presents no credentials for topology '" + core_.options.topology_id +
             "' (storm.messaging.netty.authentication is on here)");
      return false;
    }
    sender_nonce_ = control_.nonce;
    receiver_nonce_ = security::random_bytes(kNonceBytes);
    awaiting_proof_ = true;
    FrameEncoder encoder;
    encoder.add_challenge(receiver_nonce_,
                          receiver_proof(core_.options.secret, core_.options.topology_id,
                                         sender_nonce_, receiver_nonce_));
    send(encoder);
    return true;
  }
  return accept();
}

bool InboundSession::handle_proof() {
  const std::string expected =
      sender_proof(core_.options.secret, core_.options.topology_id, sender_nonce_, receiver_nonce_);
  if (!security::constant_time_equal(control_.proof, expected)) {
    refuse("it does not hold topology '" + core_.options.topology_id +
           "''s credentials (its proof is wrong)");
    return false;
  }
  awaiting_proof_ = false;
  return accept();
}

bool InboundSession::accept() {
  accepted_ = true;
  FrameEncoder encoder;
  encoder.add_hello_ack();
  if (auto throttled = core_.throttled_tasks(); !throttled.empty()) {
    encoder.add_backpressure_state(throttled);
  }
  send(encoder);
  core_.log.debug("accepted connection from {}", who());
  return true;
}

void InboundSession::reject(const std::string& what) {
  TransportCounters::add(core_.counters.frames_rejected, 1);
  core_.log.error("{}", what);
  close("the sending worker's connection was closed after a bad frame");
}

void InboundSession::refuse(const std::string& why) {
  TransportCounters::add(core_.counters.connections_refused, 1);
  core_.log.warn("refused connection from {} claiming to be worker {}: {}", remote_,
                 claimed_.to_string(), why);
  FrameEncoder encoder;
  encoder.add_refused(why);
  close_after_write_ = true;
  close_reason_ = "refused";
  send(encoder);
}

void InboundSession::say_goodbye(const std::string& reason, std::function<void()> done) {
  if (closed_) {
    done();
    return;
  }
  on_closed_ = std::move(done);
  if (!accepted_ || close_after_write_) {
    close(reason);
    return;
  }
  // The sender closes on the goodbye. Until then what it sent is read and
  // dropped, as a close would have dropped it, but without unread bytes
  // left to make our close a reset (which the sender could see first, as a
  // failed write, and report as a lost connection).
  draining_ = true;
  begin_ = end_;  // a frame begun is dropped too
  close_reason_ = reason;
  FrameEncoder encoder;
  encoder.add_goodbye("it is stopping");
  send(encoder);
}

void InboundSession::send_backpressure_state(const std::vector<TaskId>& throttled) {
  if (!accepted_ || closed_) return;
  FrameEncoder encoder;
  encoder.add_backpressure_state(throttled);
  send(encoder);
}

void InboundSession::send(const FrameEncoder& encoder) {
  out_.emplace_back(encoder.data(), encoder.data() + encoder.size());
  write_next();
}

void InboundSession::write_next() {
  if (writing_ || out_.empty() || closed_) return;
  writing_ = true;
  asio::async_write(stream_, asio::buffer(out_.front()),
                    [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                      self->writing_ = false;
                      if (self->closed_) return;
                      if (ec) {
                        self->core_.log.warn("cannot write to {}: {}", self->who(), ec.message());
                        self->close("the sending worker's connection failed");
                        return;
                      }
                      self->out_.pop_front();
                      if (self->out_.empty() && self->close_after_write_) {
                        self->close(self->close_reason_);
                        return;
                      }
                      self->write_next();
                    });
}

void InboundSession::close(std::string_view reason) {
  if (closed_) return;
  closed_ = true;
  stream_.close();
  if (!decoded_) batch_.clear();  // finished with, or never decoded
  core_.give_up(batch_, reason);
  core_.sessions.erase(shared_from_this());
  if (auto done = std::exchange(on_closed_, nullptr)) done();
}

}  // namespace rstorm::transport
