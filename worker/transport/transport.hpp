// Transport: the worker-to-worker data plane. One persistent TCP connection per
// pair of workers that exchange tuples (the sender connects to the receiver's
// slot port; the receiver sends its backpressure messages back on the same
// connection). Tuples for remote tasks are encoded (Thrift compact protocol,
// worker/transport/data_plane.thrift) on the producing executor's thread into a
// per-peer outgoing buffer, in frames of at most batch_size envelopes, each a
// 4-byte big-endian length followed by one message; the single io thread only
// writes bytes and decodes inbound frames.
//
// Thread contract: start/stop/set_peers from one owner thread (never from
// inside an InboundHandler call); sink()'s TupleSink methods from any executor
// thread; set_backpressure, stats and listen_address from any thread.
// InboundHandler::deliver is called on the io thread only; undeliverable() on
// the io thread, or on the thread whose try_push found its peer removed or the
// transport stopped.
#pragma once

#include <spdlog/logger.h>

#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/security/tls.hpp"
#include "common/status.hpp"
#include "rstorm/ids.hpp"
#include "rstorm/worker/envelope.hpp"
#include "rstorm/worker/receive_queue.hpp"
#include "rstorm/worker/topology_plan.hpp"

namespace rstorm::transport {

struct WorkerAddress {
  std::string host;
  int port = 0;

  friend auto operator<=>(const WorkerAddress&, const WorkerAddress&) = default;
  friend bool operator==(const WorkerAddress&, const WorkerAddress&) = default;
  // "host:port".
  std::string to_string() const;
};

// Opens `acceptor` listening on `address` as a worker's data plane does (the
// host resolved, "127.0.0.1" when empty; SO_REUSEADDR, so that a port a
// stopped worker left in TIME_WAIT binds). kInvalidArgument when the host
// does not resolve, kUnavailable naming the reason ("Address already in
// use") when the port cannot be listened on. A supervisor probes its slot
// ports with it.
Status listen_on(boost::asio::ip::tcp::acceptor& acceptor, const WorkerAddress& address);

// A worker of the assignment and the tasks it runs (plan task ids).
struct PeerWorker {
  WorkerAddress address;
  std::vector<TaskId> tasks;
};

struct TransportOptions {
  // Both ends must agree (checked in the hello).
  std::string topology_id;
  // Where this worker listens (its slot port, on its supervisor's host).
  // Port 0 binds a free port; listen_address() says which.
  WorkerAddress self;
  // The tasks this worker runs (plan ids): an inbound envelope for any other
  // task is a decode error. Empty: every plan task that no peer runs.
  std::vector<TaskId> local_tasks;
  // Envelopes per frame at most (topology.transfer.batch.size). Default 256.
  std::size_t batch_size = 256;
  // A partial frame waits at most this (topology.batch.flush.interval.millis). Default 1 ms.
  std::chrono::microseconds flush_interval{1000};
  // Larger inbound frames are refused (worker.transport.max.frame.bytes). Default 16 MiB.
  std::size_t max_frame_bytes = 16 << 20;
  // Encoded bytes buffered per peer; beyond it a sink refuses (caller backs
  // off) (worker.transport.buffer.bytes). Default 8 MiB.
  std::size_t max_buffered_bytes = 8 << 20;
  // Reconnect back-off, doubling from min to max
  // (storm.messaging.netty.min_wait_ms / max_wait_ms). Defaults 100 ms, 1000 ms.
  std::chrono::milliseconds reconnect_min{100};
  std::chrono::milliseconds reconnect_max{1000};
  // How long stop() lets the writes in flight end (so that no peer sees a
  // frame cut in two) before it closes every connection.
  std::chrono::milliseconds stop_flush{500};
  // Authentication (storm.messaging.netty.authentication): both ends prove
  // they hold the topology's secret (HMAC-SHA256 challenge and response, see
  // README.md) before a tuple is read; a peer that cannot is refused, and the
  // refusal names it. Not encryption. Default off. REQUIRES: a non-empty
  // secret when on.
  bool authenticate = false;
  std::string secret;
  // TLS (storm.messaging.netty.tls.enable, .cert.path, .key.path, .ca.path):
  // every connection is encrypted and both ends present a certificate signed
  // by `tls->ca`; the sender also checks the receiver's names the host it
  // dialled. Both ends must agree; a plaintext peer is refused. Unset: plaintext.
  std::optional<security::TlsFiles> tls;
  // REQUIRES: not null.
  std::shared_ptr<spdlog::logger> logger;
};

// Implemented by the worker; called on the transport's io thread.
class InboundHandler {
 public:
  virtual ~InboundHandler() = default;
  // Envelopes that arrived for tasks of this worker. Takes every one: `batch`
  // comes back empty or holding envelopes finished with (a receive queue's
  // recycled batch), which the caller overwrites and never delivers again.
  // Must not block: the io thread reads
  // every connection of the worker, so a wait here for one full executor would
  // stop the tuples and acks of all the others (head-of-line blocking, and
  // with traffic both ways between two workers a deadlock). A full executor
  // is the handler's to absorb and throttle (Transport::set_backpressure).
  virtual void deliver(worker::Batch& batch) = 0;
  // What one read of a connection held is delivered: deliver() may have left
  // consumers asleep (a wake per read, not per frame), to be woken now.
  virtual void read_delivered() {}
  // Envelopes a sink accepted that will never reach their peer (connection
  // lost with them unsent, peer no longer in the assignment, stop()). The
  // worker fails the trees they belong to so spouts replay. Decoded from the
  // outgoing buffer: their tuples point at this worker's plan StreamInfo.
  virtual void undeliverable(worker::Batch& batch, std::string_view reason) = 0;
};

// A snapshot of the transport's counters.
struct TransportStats {
  std::uint64_t frames_sent = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t tuples_sent = 0;  // envelopes written to a socket
  std::uint64_t frames_received = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t tuples_received = 0;  // envelopes decoded from peers
  std::uint64_t connects = 0;         // outgoing connections established (first time per peer)
  std::uint64_t reconnects = 0;       // outgoing connections re-established
  std::uint64_t connection_errors = 0;  // connections lost (the peer said no goodbye)
  std::uint64_t peers_stopped = 0;      // connections a peer closed saying goodbye (it stopped)
  std::uint64_t frames_rejected = 0;  // oversized, truncated or undecodable frames
  std::uint64_t connections_refused = 0;  // wrong topology id or unknown peer
  std::uint64_t undeliverable = 0;        // envelopes handed to InboundHandler::undeliverable
  std::uint64_t remote_backpressure_events = 0;  // times a peer throttled us
  std::uint64_t remote_throttled_ns = 0;         // time spent with some task throttled by a peer
  std::uint64_t local_backpressure_events = 0;   // times we told peers to hold
};

class Transport {
 public:
  // Binds self (refuses clearly when the port is taken), starts the io thread.
  // `plan` and `handler` are borrowed and must outlive the Transport.
  static Result<std::unique_ptr<Transport>> start(const worker::TopologyPlan& plan,
                                                  TransportOptions options,
                                                  InboundHandler* handler);
  ~Transport();  // stop()
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Closes everything; unsent envelopes go to undeliverable(). Idempotent.
  void stop();

  // The workers of the assignment (re-callable on reassignment): only they may
  // connect (hello with the topology id and their address); connections are
  // made eagerly here and re-made with back-off. Buffers for removed peers ->
  // undeliverable().
  void set_peers(std::vector<PeerWorker> peers);

  // The sink for tuples to `peer`. Stable pointer, owned by the transport,
  // valid until the Transport is destroyed. try_push from any executor thread:
  // encodes the batch into that peer's outgoing buffer; false when the buffer
  // is over max_buffered_bytes or when the peer has throttled any destination
  // task in the batch (remote backpressure); wait_for_space waits for either
  // to clear. After stop(), try_push hands the batch to undeliverable().
  worker::TupleSink* sink(const WorkerAddress& peer);

  // This worker's own backpressure: tasks whose receive queues are over the
  // high watermark (on = true) or back under the low one (false). Sent to every
  // connected peer, and to peers that connect later.
  void set_backpressure(const std::vector<TaskId>& tasks, bool on);

  TransportStats stats() const;
  // Envelopes written to each peer this transport has had a channel to.
  std::map<WorkerAddress, std::uint64_t> peer_tuples_sent() const;
  // The address actually bound (self with the OS-chosen port when self.port was 0).
  WorkerAddress listen_address() const;

  struct Impl;

 private:
  explicit Transport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rstorm::transport
