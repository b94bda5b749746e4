// OutboundChannel: the sending side towards one peer worker. It is the
// TupleSink executors push remote batches into: try_push encodes on the
// caller's thread into one of two lanes, control (acking messages) or data;
// the io thread connects (hello, wait for the ack), writes what waits in as
// few writes as it can, control lane first, reads the peer's backpressure
// messages, and reconnects with doubling back-off after a failure.
//
// Thread contract: try_push / wait_for_space from any thread; everything else
// on the io thread (public io methods are marked (io)).
#pragma once

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "rstorm/worker/receive_queue.hpp"
#include "worker/transport/core.hpp"

namespace rstorm::transport {

class OutboundChannel final : public worker::TupleSink {
 public:
  enum class Mode : std::uint8_t {
    kUnlisted,  // a sink asked for before the peer was listed: holds, does not connect
    kListed,    // in the peers list: connects and sends
    kRemoved,   // dropped from the peers list: pushes are undeliverable
    kStopped,   // the transport stopped: pushes are undeliverable
  };

  OutboundChannel(TransportCore& core, WorkerAddress peer);
  ~OutboundChannel() override;

  // Refuses (batch untouched) when a destination task of the batch is
  // throttled by the peer, or, for data, when max_buffered_bytes of data wait.
  bool try_push(worker::Batch& batch) override { return push(batch, true); }
  // `batch` comes back with its envelopes, encoded, to be filled again.
  bool try_push_recycling(worker::Batch& batch) override { return push(batch, false); }
  // Takes the batch whatever the throttles and the buffer (acking messages
  // that must not wait, edges of a cycle).
  void force_push(worker::Batch& batch) override;
  void wait_for_space(std::chrono::microseconds timeout) override;

  // (io) Listed: connect and send. Removed / stopped: close the connection and
  // give every buffered envelope up with `reason`.
  void set_mode(Mode mode, std::string_view reason);
  // (io) The transport stops: refuses pushes at once, lets a write in flight
  // end (so that the peer never sees a frame cut in two), ends the stream,
  // and once the peer has read it all and closed, closes as
  // set_mode(kStopped) does and calls `stopped`. A set_mode(kStopped) before
  // that (the transport's deadline) closes at once and calls it too.
  void stop(std::function<void()> stopped);
  const WorkerAddress& peer() const { return peer_; }
  // Envelopes (tuples and acker messages) written to this peer's socket.
  std::uint64_t tuples_sent() const { return tuples_sent_.load(std::memory_order_relaxed); }
  // (io) Time throttled so far, for stats.
  std::uint64_t throttled_ns_now() const;

 private:
  struct Connection;
  // Encoded frames waiting for the connection.
  struct Lane {
    std::vector<std::uint8_t> bytes;
    std::uint64_t frames = 0;
    std::uint64_t tuples = 0;
  };

  // Gives `batch` up (returns false) when the peer was removed or stopped.
  bool accepting(worker::Batch& batch);
  // try_push; `clear`: empties the batch once encoded.
  bool push(worker::Batch& batch, bool clear);
  // Encodes `batch` into the control or the data lane and schedules a write.
  // `clear`: empties the batch (otherwise its envelopes are left as they
  // were, or moved from when handed back as undeliverable).
  void enqueue(worker::Batch& batch, bool control, bool clear = true);
  void connect();
  void on_connected(const std::shared_ptr<Connection>& c);
  void read_header(const std::shared_ptr<Connection>& c);
  void read_body(const std::shared_ptr<Connection>& c, std::uint32_t length);
  void on_frame(const std::shared_ptr<Connection>& c, const std::uint8_t* data, std::size_t size);
  void write_pending();
  // (io) Stopping, nothing in flight: half-closes the connection.
  void end_stream(const std::shared_ptr<Connection>& c);
  // `not_listening`: the peer's host refused the TCP connection.
  void fail(const std::shared_ptr<Connection>& c, const std::string& reason, bool refused,
            bool not_listening = false);
  // The peer said goodbye (it stops in order): closes the connection,
  // reported at info, and retries while the peer stays listed.
  void peer_stopped(const std::shared_ptr<Connection>& c, const std::string& reason);
  void schedule_retry();
  // A peer never reached whose host refused this many connections in a row
  // is reported as a warning; until then, at info, as one still starting.
  static constexpr int kQuietRefusals = 5;
  void close_connection(std::string_view reason);
  void apply_backpressure(const std::vector<TaskId>& tasks, bool on);
  // `throttled` is the peer's whole throttled set: every other task is released.
  void apply_backpressure_state(const std::vector<TaskId>& throttled);
  void clear_throttles();
  void give_up_buffered(std::vector<std::uint8_t>& in_flight, std::size_t in_flight_data_bytes,
                        std::string_view reason);
  void wake_producers();

  TransportCore& core_;
  const WorkerAddress peer_;
  const std::string peer_name_;

  // Guards the lanes and mode_ changes. The control lane (acking messages) is
  // written before the data lane, so acks never queue behind data.
  std::mutex mutex_;
  Lane control_;
  Lane data_;
  std::atomic<Mode> mode_{Mode::kUnlisted};

  // Data bytes buffered or being written (the control lane is not counted).
  std::atomic<std::size_t> buffered_bytes_{0};
  // Bytes in the control lane not yet handed to a write (set under mutex_).
  std::atomic<std::size_t> control_pending_bytes_{0};
  std::atomic<bool> write_scheduled_{false};
  std::unique_ptr<std::atomic<std::uint8_t>[]> throttled_;  // by task id
  std::atomic<int> throttled_count_{0};

  std::mutex space_mutex_;
  std::condition_variable space_cv_;
  std::atomic<int> waiters_{0};
  std::atomic<std::uint64_t> space_generation_{0};
  std::atomic<std::uint64_t> tuples_sent_{0};

  // (io) state.
  std::shared_ptr<Connection> conn_;
  boost::asio::steady_timer retry_timer_;
  bool retry_pending_ = false;
  std::chrono::milliseconds backoff_;
  bool ever_connected_ = false;
  int failures_in_a_row_ = 0;
  bool peer_said_goodbye_ = false;  // on the last connection, until the next one is accepted
  std::atomic<std::int64_t> throttled_since_ns_{0};  // 0: not throttled
  std::function<void()> stopped_;                    // stop() waits for the write in flight
};

}  // namespace rstorm::transport
