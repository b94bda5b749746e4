#include "worker/transport/outbound_channel.hpp"

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>

#include "worker/transport/authentication.hpp"
#include "worker/transport/codec.hpp"
#include "worker/transport/stream.hpp"

namespace rstorm::transport {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

struct OutboundChannel::Connection {
  Connection(asio::io_context& io, asio::ssl::context* tls)
      : stream(tcp::socket(io), tls), resolver(io) {}
  PeerStream stream;
  tcp::resolver resolver;
  std::uint8_t header[kLengthPrefixBytes] = {};
  std::vector<std::uint8_t> body;
  std::vector<std::uint8_t> hello;
  std::vector<std::uint8_t> proof;    // authentication: our answer to the challenge
  std::string nonce;                  // authentication: ours, in the hello
  bool challenged = false;            // authentication: the peer proved the secret
  std::vector<std::uint8_t> writing;  // bytes of the write in flight
  std::size_t writing_data_bytes = 0;  // of which data (counted in buffered_bytes_)
  std::uint64_t writing_frames = 0;
  std::uint64_t writing_tuples = 0;
  bool writing_active = false;
  bool handshaken = false;  // the peer acknowledged our hello
  bool closed = false;
  std::unique_ptr<FrameDecoder> decoder;
  worker::Batch scratch;
  ControlMessage control;
};

namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

}  // namespace

OutboundChannel::OutboundChannel(TransportCore& core, WorkerAddress peer)
    : core_(core),
      peer_(std::move(peer)),
      peer_name_(peer_.to_string()),
      throttled_(std::make_unique<std::atomic<std::uint8_t>[]>(core.index.task_limit())),
      retry_timer_(core.io),
      backoff_(core.options.reconnect_min) {
  for (std::size_t i = 0; i < core.index.task_limit(); ++i) throttled_[i].store(0);
}

OutboundChannel::~OutboundChannel() = default;

namespace {
// Batches are homogeneous: an executor receives either tuples and barriers
// (bolts), or acking and checkpoint messages (ackers, spouts), and a batch
// goes to one executor. A barrier must stay behind the tuples sent before it.
bool is_control(const worker::Batch& batch) {
  return !worker::travels_with_tuples(batch.front().kind);
}
}  // namespace

bool OutboundChannel::push(worker::Batch& batch, bool clear) {
  if (batch.empty()) return true;
  if (!accepting(batch)) return true;
  if (throttled_count_.load(std::memory_order_relaxed) > 0) {
    const std::size_t limit = core_.index.task_limit();
    for (const worker::Envelope& e : batch) {
      const auto d = static_cast<std::size_t>(e.dest.value);
      if (d < limit && throttled_[d].load(std::memory_order_relaxed)) return false;
    }
  }
  // Each lane has its own bound, so data never holds acks back. The control
  // lane's bound matters while the peer is not connected (no throttle can
  // reach us then); forced pushes (completions, failures) pass it.
  const bool control = is_control(batch);
  const std::size_t waiting = control ? control_pending_bytes_.load(std::memory_order_relaxed)
                                      : buffered_bytes_.load(std::memory_order_relaxed);
  if (waiting >= core_.options.max_buffered_bytes) return false;
  enqueue(batch, control, clear);
  return true;
}

void OutboundChannel::force_push(worker::Batch& batch) {
  if (batch.empty() || !accepting(batch)) return;
  enqueue(batch, is_control(batch));
}

bool OutboundChannel::accepting(worker::Batch& batch) {
  const Mode mode = mode_.load();
  if (mode != Mode::kRemoved && mode != Mode::kStopped) return true;
  core_.give_up(batch, mode == Mode::kStopped ? "the transport is stopped"
                                              : "worker " + peer_name_ + " is not in the assignment");
  return false;
}

void OutboundChannel::enqueue(worker::Batch& batch, bool control, bool clear) {
  // Encoding happens here, on the producer's thread, outside any lock.
  static thread_local FrameEncoder encoder;
  encoder.clear();
  const std::size_t per_frame = std::max<std::size_t>(1, core_.options.batch_size);
  const std::size_t tuples = encoder.add_tuples(core_.index, batch, per_frame);
  const std::size_t frames = (tuples + per_frame - 1) / per_frame;
  Mode mode;
  {
    std::lock_guard lock(mutex_);
    mode = mode_.load();
    if (mode != Mode::kRemoved && mode != Mode::kStopped) {
      Lane& lane = control ? control_ : data_;
      lane.bytes.insert(lane.bytes.end(), encoder.data(), encoder.data() + encoder.size());
      lane.frames += frames;
      lane.tuples += tuples;
      if (control) {
        control_pending_bytes_.store(lane.bytes.size(), std::memory_order_relaxed);
      } else {
        buffered_bytes_.fetch_add(encoder.size());
      }
    }
  }
  if (mode == Mode::kRemoved || mode == Mode::kStopped) {
    // Removed or stopped between the check and the append: nothing was queued.
    core_.give_up(batch, "worker " + peer_name_ + " left the assignment");
    return;
  }
  if (!encoder.unencodable().empty()) {
    worker::Batch rejected;
    for (std::size_t i : encoder.unencodable()) rejected.push_back(std::move(batch[i]));
    const StreamInfo* info = rejected[0].tuple.source();
    core_.log.error("{} tuple(s) for worker {} are on a stream this worker's plan does not have "
                    "(e.g. component '{}' stream '{}'); handing them back as undeliverable",
                    rejected.size(), peer_name_, info ? info->component : "?",
                    info ? info->stream : "?");
    core_.give_up(rejected, "a stream unknown to the plan");
  }
  if (clear) batch.clear();
  if (!write_scheduled_.exchange(true)) {
    asio::post(core_.io, [this] {
      write_scheduled_.store(false);
      write_pending();
    });
  }
}

void OutboundChannel::wait_for_space(std::chrono::microseconds timeout) {
  const std::uint64_t generation = space_generation_.load();
  auto ready = [&] {
    return space_generation_.load() != generation ||
           (buffered_bytes_.load() < core_.options.max_buffered_bytes &&
            control_pending_bytes_.load() < core_.options.max_buffered_bytes &&
            throttled_count_.load() == 0);
  };
  if (ready()) return;
  waiters_.fetch_add(1);
  {
    std::unique_lock lock(space_mutex_);
    space_cv_.wait_for(lock, timeout, ready);
  }
  waiters_.fetch_sub(1);
}

void OutboundChannel::wake_producers() {
  space_generation_.fetch_add(1);
  if (waiters_.load() > 0) {
    std::lock_guard lock(space_mutex_);
    space_cv_.notify_all();
  }
}

void OutboundChannel::set_mode(Mode mode, std::string_view reason) {
  if (mode == Mode::kListed) {
    mode_.store(Mode::kListed);
    if (!conn_ && !retry_pending_) connect();
    return;
  }
  {
    std::lock_guard lock(mutex_);
    mode_.store(mode);
  }
  retry_timer_.cancel();
  retry_pending_ = false;
  close_connection(reason);
}

void OutboundChannel::stop(std::function<void()> stopped) {
  {
    std::lock_guard lock(mutex_);
    mode_.store(Mode::kStopped);
  }
  retry_timer_.cancel();
  retry_pending_ = false;
  auto c = conn_;
  if (!c || !c->handshaken) {
    close_connection("the transport is stopping");
    stopped();
    return;
  }
  // Connected: the write in flight ends (its handler calls end_stream), the
  // peer reads to the end, and its close ends ours (read_header).
  stopped_ = std::move(stopped);
  if (!c->writing_active) end_stream(c);
}

void OutboundChannel::end_stream(const std::shared_ptr<Connection>& c) {
  // Half-closed, not closed: a close with bytes of the peer's unread here
  // would reset the connection, and the peer would lose what it has not read.
  boost::system::error_code ignored;
  c->stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

void OutboundChannel::close_connection(std::string_view reason) {
  std::vector<std::uint8_t> in_flight;
  std::size_t in_flight_data_bytes = 0;
  if (auto c = conn_) {
    conn_.reset();
    c->closed = true;
    c->stream.close();
    c->resolver.cancel();
    if (c->writing_active) {
      // A copy: the write in flight still reads c->writing until its handler
      // runs. Closing the socket does not stop a TLS write whose last send
      // already completed: its handler encrypts the next part of the buffer.
      in_flight = c->writing;
      in_flight_data_bytes = c->writing_data_bytes;
    }
  }
  give_up_buffered(in_flight, in_flight_data_bytes, reason);
  clear_throttles();
  if (auto stopped = std::exchange(stopped_, nullptr)) stopped();
}

void OutboundChannel::give_up_buffered(std::vector<std::uint8_t>& in_flight,
                                       std::size_t in_flight_data_bytes, std::string_view reason) {
  std::vector<std::uint8_t> bytes;
  bytes.swap(in_flight);
  std::size_t data_bytes = in_flight_data_bytes;
  {
    std::lock_guard lock(mutex_);
    bytes.insert(bytes.end(), control_.bytes.begin(), control_.bytes.end());
    bytes.insert(bytes.end(), data_.bytes.begin(), data_.bytes.end());
    data_bytes += data_.bytes.size();
    control_ = Lane{};
    data_ = Lane{};
    control_pending_bytes_.store(0, std::memory_order_relaxed);
  }
  buffered_bytes_.fetch_sub(data_bytes);
  if (bytes.empty()) return;
  worker::Batch batch;
  const std::size_t bad = decode_outgoing(core_.index, bytes.data(), bytes.size(), batch);
  if (bad > 0) {
    core_.log.error("{} unsent frame(s) for worker {} could not be read back; their tuples will "
                    "time out", bad, peer_name_);
  }
  // Stopping on purpose (Transport::stop), or the peer did, the buffer is
  // dropped by design.
  core_.log.log(core_.stopping || peer_said_goodbye_ ? spdlog::level::info : spdlog::level::warn,
                "{} envelope(s) buffered for worker {} are undeliverable: {}", batch.size(),
                peer_name_, reason);
  core_.give_up(batch, reason);
  wake_producers();
}

void OutboundChannel::connect() {
  auto c = std::make_shared<Connection>(core_.io, core_.tls.get());
  c->decoder = std::make_unique<FrameDecoder>(core_.index, nullptr);
  conn_ = c;
  c->resolver.async_resolve(
      peer_.host, std::to_string(peer_.port),
      [this, c](const boost::system::error_code& ec, tcp::resolver::results_type results) {
        if (c != conn_) return;
        if (ec) return fail(c, "cannot resolve " + peer_.host + ": " + ec.message(), false);
        asio::async_connect(
            c->stream.socket(), results,
            [this, c](const boost::system::error_code& ec2, const tcp::endpoint&) {
              if (c != conn_) return;
              if (ec2) {
                return fail(c, ec2.message(), false, ec2 == asio::error::connection_refused);
              }
              if (!c->stream.tls()) return on_connected(c);
              c->stream.verify_host(peer_.host);
              c->stream.async_handshake(false, [this, c](const boost::system::error_code& ec3) {
                if (c != conn_) return;
                if (ec3) {
                  TransportCounters::add(core_.counters.connections_refused, 1);
                  return fail(c, "TLS handshake failed: " + explain_tls_error(ec3, false), true);
                }
                on_connected(c);
              });
            });
      });
}

void OutboundChannel::on_connected(const std::shared_ptr<Connection>& c) {
  boost::system::error_code ignored;
  c->stream.socket().set_option(tcp::no_delay(true), ignored);
  FrameEncoder encoder;
  if (core_.options.authenticate) c->nonce = security::random_bytes(kNonceBytes);
  encoder.add_hello(core_.options.topology_id, core_.self.host, core_.self.port, c->nonce);
  c->hello.assign(encoder.data(), encoder.data() + encoder.size());
  asio::async_write(c->stream, asio::buffer(c->hello),
                    [this, c](const boost::system::error_code& ec, std::size_t) {
                      if (ec && c == conn_)
                        fail(c, "cannot send the hello: " + ec.message(), false);
                    });
  read_header(c);
}

void OutboundChannel::read_header(const std::shared_ptr<Connection>& c) {
  asio::async_read(c->stream, asio::buffer(c->header),
                   [this, c](const boost::system::error_code& ec, std::size_t) {
                     if (c != conn_) return;
                     if (ec && stopped_) return close_connection("the transport is stopping");
                     if (ec) {
                       const bool ended =
                           ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
                       if (ended && !c->handshaken) {
                         return fail(c,
                                     "the peer closed the connection before accepting it (its log "
                                     "says why; a worker whose storm.messaging.netty.tls.enable "
                                     "differs closes it too)",
                                     false);
                       }
                       return fail(
                           c,
                           ended ? "the peer closed the connection"
                                 : (c->stream.tls() ? explain_tls_error(ec, false) : ec.message()),
                           false);
                     }
                     const std::uint32_t length = read_length_prefix(c->header);
                     if (length > core_.options.max_frame_bytes) {
                       TransportCounters::add(core_.counters.frames_rejected, 1);
                       return fail(c,
                                   "frame of " + std::to_string(length) +
                                       " bytes exceeds worker.transport.max.frame.bytes (" +
                                       std::to_string(core_.options.max_frame_bytes) + ")",
                                   false);
                     }
                     read_body(c, length);
                   });
}

void OutboundChannel::read_body(const std::shared_ptr<Connection>& c, std::uint32_t length) {
  c->body.resize(length);
  asio::async_read(c->stream, asio::buffer(c->body),
                   [this, c](const boost::system::error_code& ec, std::size_t) {
                     if (c != conn_) return;
                     if (ec && stopped_) return close_connection("the transport is stopping");
                     if (ec) {
                       TransportCounters::add(core_.counters.frames_rejected, 1);
                       return fail(c, "truncated frame: " + ec.message(), false);
                     }
                     on_frame(c, c->body.data(), c->body.size());
                     if (c == conn_) read_header(c);
                   });
}

void OutboundChannel::on_frame(const std::shared_ptr<Connection>& c, const std::uint8_t* data,
                               std::size_t size) {
  c->scratch.clear();
  auto type = c->decoder->decode(data, size, c->scratch, c->control);
  if (!type.is_ok()) {
    TransportCounters::add(core_.counters.frames_rejected, 1);
    return fail(c, "undecodable frame of " + std::to_string(size) + " bytes: " +
                       type.status().message(),
                false);
  }
  switch (*type) {
    case FrameType::kChallenge: {
      if (!core_.options.authenticate || c->challenged || c->handshaken) {
        return fail(c, "an unexpected challenge", false);
      }
      const std::string expected = receiver_proof(core_.options.secret, core_.options.topology_id,
                                                  c->nonce, c->control.nonce);
      if (!security::constant_time_equal(c->control.proof, expected)) {
        TransportCounters::add(core_.counters.connections_refused, 1);
        return fail(c,
                    "it does not hold topology '" + core_.options.topology_id +
                        "''s credentials (its proof is wrong); no tuple is sent to it",
                    true);
      }
      c->challenged = true;
      FrameEncoder answer;
      answer.add_proof(sender_proof(core_.options.secret, core_.options.topology_id, c->nonce,
                                    c->control.nonce));
      c->proof.assign(answer.data(), answer.data() + answer.size());
      asio::async_write(c->stream, asio::buffer(c->proof),
                        [this, c](const boost::system::error_code& ec, std::size_t) {
                          if (ec && c == conn_) {
                            fail(c, "cannot send the proof: " + ec.message(), false);
                          }
                        });
      return;
    }
    case FrameType::kHelloAck:
      if (c->handshaken) return fail(c, "a second hello ack", false);
      if (core_.options.authenticate && !c->challenged) {
        TransportCounters::add(core_.counters.connections_refused, 1);
        return fail(c,
                    "it accepted the connection without proving it holds topology '" +
                        core_.options.topology_id +
                        "''s credentials (storm.messaging.netty.authentication off there?); no "
                        "tuple is sent to it",
                    true);
      }
      c->handshaken = true;
      failures_in_a_row_ = 0;
      peer_said_goodbye_ = false;
      backoff_ = core_.options.reconnect_min;
      if (ever_connected_) {
        TransportCounters::add(core_.counters.reconnects, 1);
        core_.log.info("reconnected to worker {}", peer_name_);
      } else {
        TransportCounters::add(core_.counters.connects, 1);
        core_.log.debug("connected to worker {}", peer_name_);
      }
      ever_connected_ = true;
      write_pending();
      return;
    case FrameType::kRefused:
      return fail(c, "refused by the peer: " + c->control.reason, true);
    case FrameType::kGoodbye:
      if (!c->handshaken) return fail(c, "a goodbye before the hello ack", false);
      return peer_stopped(c, c->control.reason);
    case FrameType::kBackpressure:
      if (c->control.state) {
        apply_backpressure_state(c->control.tasks);
      } else {
        apply_backpressure(c->control.tasks, c->control.on);
      }
      return;
    case FrameType::kHello:
    case FrameType::kTuples:
    case FrameType::kProof:
      return fail(c, "unexpected message from the receiving side", false);
  }
}

void OutboundChannel::write_pending() {
  auto c = conn_;
  if (!c || !c->handshaken || c->writing_active) return;
  {
    std::lock_guard lock(mutex_);
    if (control_.bytes.empty() && data_.bytes.empty()) return;
    c->writing_data_bytes = data_.bytes.size();
    // Acking messages first: they never wait behind data queued before them.
    if (control_.bytes.empty()) {
      c->writing.swap(data_.bytes);
      data_.bytes.clear();  // the drained buffer, kept for its capacity
    } else {
      c->writing.swap(control_.bytes);
      control_.bytes.clear();
      control_pending_bytes_.store(0, std::memory_order_relaxed);
      c->writing.insert(c->writing.end(), data_.bytes.begin(), data_.bytes.end());
      data_.bytes.clear();
    }
    c->writing_frames = std::exchange(control_.frames, 0) + std::exchange(data_.frames, 0);
    c->writing_tuples = std::exchange(control_.tuples, 0) + std::exchange(data_.tuples, 0);
  }
  c->writing_active = true;
  asio::async_write(c->stream, asio::buffer(c->writing),
                    [this, c](const boost::system::error_code& ec, std::size_t) {
                      if (c->closed || c != conn_) {
                        c->writing_active = false;  // close_connection took the bytes back
                        return;
                      }
                      // Still marked in flight: fail() -> close_connection hands these
                      // bytes back as undeliverable, as it does when the reader sees
                      // the failure first (cleared first, they were dropped unseen and
                      // their trees waited for the message timeout).
                      if (ec) return fail(c, "write failed: " + ec.message(), false);
                      c->writing_active = false;
                      auto& k = core_.counters;
                      TransportCounters::add(k.bytes_sent, c->writing.size());
                      TransportCounters::add(k.frames_sent, c->writing_frames);
                      TransportCounters::add(k.tuples_sent, c->writing_tuples);
                      tuples_sent_.fetch_add(c->writing_tuples, std::memory_order_relaxed);
                      buffered_bytes_.fetch_sub(c->writing_data_bytes);
                      c->writing.clear();
                      {
                        // Hand the drained buffer back for reuse when it is the larger one.
                        std::lock_guard lock(mutex_);
                        if (data_.bytes.empty() && c->writing.capacity() > data_.bytes.capacity()) {
                          c->writing.swap(data_.bytes);
                        }
                      }
                      c->writing.clear();
                      wake_producers();
                      if (stopped_) return end_stream(c);
                      write_pending();
                    });
}

void OutboundChannel::fail(const std::shared_ptr<Connection>& c, const std::string& reason,
                           bool refused, bool not_listening) {
  if (c != conn_) return;
  const bool was_connected = c->handshaken;
  if (was_connected) {
    core_.log.warn("connection to worker {} lost: {}", peer_name_, reason);
    close_connection("connection to worker " + peer_name_ + " lost: " + reason);
    // Counted once the buffer was given up: a producer that sees the count
    // knows its next push waits for the next connection.
    TransportCounters::add(core_.counters.connection_errors, 1);
  } else {
    // A peer never reached that does not listen yet is most likely starting
    // (a topology's workers start together): said at info, and as a warning
    // only once it has refused kQuietRefusals connections in a row.
    const bool starting = not_listening && !ever_connected_;
    if (starting && failures_in_a_row_ == 0) {
      core_.log.info(
          "cannot connect to worker {} yet: {} (it may still be starting); retrying with "
          "back-off up to {} ms",
          peer_name_, reason, core_.options.reconnect_max.count());
    } else if (starting && failures_in_a_row_ == kQuietRefusals) {
      core_.log.warn(
          "cannot connect to worker {}: {} ({} times in a row, and never connected); retrying "
          "with back-off up to {} ms",
          peer_name_, reason, failures_in_a_row_ + 1, core_.options.reconnect_max.count());
    } else if ((failures_in_a_row_ == 0 && !starting) || refused) {
      core_.log.warn("cannot connect to worker {}: {}; retrying with back-off up to {} ms",
                     peer_name_, reason, core_.options.reconnect_max.count());
    } else {
      core_.log.debug("cannot connect to worker {}: {}", peer_name_, reason);
    }
    // Nothing was written on this connection: the buffered envelopes wait.
    conn_.reset();
    c->closed = true;
    c->stream.close();
  }
  ++failures_in_a_row_;
  schedule_retry();
}

void OutboundChannel::schedule_retry() {
  if (mode_.load() != Mode::kListed || core_.stopping) return;
  retry_pending_ = true;
  retry_timer_.expires_after(backoff_);
  backoff_ = std::min(backoff_ * 2, core_.options.reconnect_max);
  retry_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled: set_mode decided
    retry_pending_ = false;
    if (mode_.load() == Mode::kListed && !conn_ && !core_.stopping) connect();
  });
}

void OutboundChannel::peer_stopped(const std::shared_ptr<Connection>& c,
                                   const std::string& reason) {
  // The peer reads nothing more: closing now, rather than at its close,
  // leaves it no unread bytes to answer with a reset, and us no write to
  // fail on one. What was buffered for it, and the write in flight, is
  // undeliverable, as with a connection lost.
  core_.log.info(
      "worker {} closed the connection: {}; retrying with back-off up to {} ms while "
      "it is in the assignment",
      peer_name_, reason.empty() ? "it is stopping" : reason, core_.options.reconnect_max.count());
  peer_said_goodbye_ = true;
  close_connection("worker " + peer_name_ + " stopped");
  TransportCounters::add(core_.counters.peers_stopped, 1);
  ++failures_in_a_row_;
  schedule_retry();
}

void OutboundChannel::apply_backpressure(const std::vector<TaskId>& tasks, bool on) {
  const int before = throttled_count_.load();
  bool changed = false;
  for (TaskId t : tasks) {
    const auto i = static_cast<std::size_t>(t.value);
    if (t.value < 0 || i >= core_.index.task_limit()) continue;
    const std::uint8_t old = throttled_[i].exchange(on ? 1 : 0);
    if (old != (on ? 1 : 0)) {
      throttled_count_.fetch_add(on ? 1 : -1);
      changed = true;
    }
  }
  const int after = throttled_count_.load();
  if (on && changed) TransportCounters::add(core_.counters.remote_backpressure_events, 1);
  if (before == 0 && after > 0) throttled_since_ns_.store(now_ns());
  if (before > 0 && after == 0) {
    TransportCounters::add(core_.counters.remote_throttled_ns, throttled_ns_now());
    throttled_since_ns_.store(0);
  }
  if (changed && !on) wake_producers();
  core_.log.debug("worker {} {} {} task(s)", peer_name_, on ? "throttles" : "releases",
                  tasks.size());
}

void OutboundChannel::apply_backpressure_state(const std::vector<TaskId>& throttled) {
  const std::size_t limit = core_.index.task_limit();
  std::vector<char> want(limit, 0);
  for (TaskId t : throttled) {
    if (t.value >= 0 && static_cast<std::size_t>(t.value) < limit) want[static_cast<std::size_t>(t.value)] = 1;
  }
  std::vector<TaskId> on, off;
  for (std::size_t i = 0; i < limit; ++i) {
    const bool now = throttled_[i].load() != 0;
    if (want[i] && !now) on.emplace_back(static_cast<std::int32_t>(i));
    if (!want[i] && now) off.emplace_back(static_cast<std::int32_t>(i));
  }
  if (!on.empty()) apply_backpressure(on, true);
  if (!off.empty()) apply_backpressure(off, false);
}

void OutboundChannel::clear_throttles() {
  if (throttled_count_.load() == 0) return;
  std::vector<TaskId> all;
  for (std::size_t i = 0; i < core_.index.task_limit(); ++i) {
    if (throttled_[i].load()) all.emplace_back(static_cast<std::int32_t>(i));
  }
  apply_backpressure(all, false);
}

std::uint64_t OutboundChannel::throttled_ns_now() const {
  const std::int64_t since = throttled_since_ns_.load();
  if (since == 0) return 0;
  const std::int64_t now = now_ns();
  return now > since ? static_cast<std::uint64_t>(now - since) : 0;
}

}  // namespace rstorm::transport
