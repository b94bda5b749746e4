// Shared pieces of the transport tests: a small topology plan, envelopes of
// every kind, an InboundHandler that counts (and can refuse); CapturedLog, a
// logger whose lines the tests read back, comes from tests/common.
#pragma once

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rstorm/topology_builder.hpp"
#include "rstorm/worker/topology_plan.hpp"
#include "tests/common/captured_log.hpp"
#include "worker/transport/codec.hpp"
#include "worker/transport/transport.hpp"

namespace rstorm::transport::testing {

// Components (tasks numbered by component id, ackers last):
//   "sink" bolt, 4 tasks: 1..4; "src" spout, 1 task: 5, streams "default"
//   (fields a b c) and "side" (x); "__acker": 6.
// Worker A runs 1, 2, 5; worker B runs 3, 4, 6.
inline constexpr std::int32_t kSrcTask = 5;
inline constexpr std::int32_t kAckerTask = 6;

class NoopSpout : public Spout {
 public:
  void open(const Config&, const TopologyContext&, SpoutOutputCollector&) override {}
  void next_tuple() override {}
  void declare_output_fields(OutputFieldsDeclarer& d) override {
    d.declare(Fields({"a", "b", "c"}));
    d.declare_stream("side", Fields({"x"}));
  }
};

class NoopBolt : public Bolt {
 public:
  void prepare(const Config&, const TopologyContext&, OutputCollector&) override {}
  void execute(const Tuple&) override {}
  void declare_output_fields(OutputFieldsDeclarer&) override {}
};

inline std::unique_ptr<worker::TopologyPlan> make_test_plan() {
  TopologyBuilder b;
  b.set_spout("src", [] { return std::make_unique<NoopSpout>(); });
  b.set_bolt("sink", [] { return std::make_unique<NoopBolt>(); }, 4).shuffle_grouping("src");
  auto topology = b.build();
  if (!topology.ok()) throw std::runtime_error(topology.status().message());
  Config config;
  config.set("topology.acker.executors", std::int64_t{1}, "test");
  auto plan = worker::make_plan("t", config, *topology);
  if (!plan.ok()) throw std::runtime_error(plan.status().message());
  return std::move(*plan);
}

inline const StreamInfo* stream_info(const worker::TopologyPlan& plan, std::string_view stream) {
  return &plan.find_component("src")->find_stream(stream)->info;
}

// A data tuple from "src" with sequence number `seq` in field a.
inline worker::Envelope data_envelope(const worker::TopologyPlan& plan, std::int32_t dest,
                                      std::int64_t seq) {
  worker::Envelope e;
  e.dest = TaskId(dest);
  e.tuple = Tuple(stream_info(plan, "default"), TaskId(kSrcTask),
                  Values{Value(seq), Value("word"), Value(seq * 0.5)});
  e.tuple.mutable_anchors().xor_in(static_cast<std::uint64_t>(seq) + 1, 0x9e3779b97f4a7c15ULL);
  return e;
}

// Counts what arrives; `slow` makes every deliver() take 20 ms (a receiver
// that reads slower than its sender writes).
class CountingHandler : public InboundHandler {
 public:
  void deliver(worker::Batch& batch) override {
    if (slow.load()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    {
      std::lock_guard lock(mutex);
      for (const auto& e : batch) {
        if (keep) kept.push_back(e);
        if (e.kind == worker::MessageKind::kTuple && !e.tuple.values().empty() &&
            e.tuple.values()[0].type() == ValueType::kInt) {
          const std::int64_t seq = e.tuple.values()[0].as_int();
          if (track_each) ++seen[seq];
          if (seq != next_seq) ++out_of_order;
          next_seq = seq + 1;
        } else {
          ++controls;
        }
      }
    }
    delivered.fetch_add(batch.size());
    batch.clear();
  }
  void undeliverable(worker::Batch& batch, std::string_view reason) override {
    {
      std::lock_guard lock(mutex);
      last_reason = std::string(reason);
      for (const auto& e : batch) {
        if (track_each && e.kind == worker::MessageKind::kTuple && !e.tuple.values().empty()) {
          ++seen_undeliverable[e.tuple.values()[0].as_int()];
        }
      }
    }
    undelivered.fetch_add(batch.size());
    batch.clear();
  }

  std::atomic<bool> slow{false};
  std::atomic<std::uint64_t> delivered{0};
  std::atomic<std::uint64_t> undelivered{0};
  bool keep = false;        // keep copies of delivered envelopes
  bool track_each = false;  // count every sequence number
  std::mutex mutex;
  std::int64_t next_seq = 0;        // data tuples arrive in sequence order...
  std::uint64_t out_of_order = 0;   // ... or are counted here
  std::uint64_t controls = 0;       // control messages delivered
  std::vector<worker::Envelope> kept;
  std::map<std::int64_t, int> seen;
  std::map<std::int64_t, int> seen_undeliverable;
  std::string last_reason;
};

using ::rstorm::testing::CapturedLog;

inline TransportOptions options_for(const std::string& topology, std::vector<TaskId> local,
                                    std::shared_ptr<spdlog::logger> logger, int port = 0) {
  TransportOptions o;
  o.topology_id = topology;
  o.self = WorkerAddress{"127.0.0.1", port};
  o.local_tasks = std::move(local);
  o.reconnect_min = std::chrono::milliseconds(10);
  o.reconnect_max = std::chrono::milliseconds(100);
  o.logger = std::move(logger);
  return o;
}

// Pushes data envelopes with sequence numbers [first, first + n) to
// alternating `dests`, in batches of `batch_size`, waiting whenever the sink
// refuses. False when the sink kept refusing past `deadline`.
inline bool push_all(worker::TupleSink* sink, const worker::TopologyPlan& plan,
                     std::vector<std::int32_t> dests, std::int64_t first, std::int64_t n,
                     std::size_t batch_size = 256,
                     std::chrono::seconds deadline = std::chrono::seconds(120)) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  worker::Batch batch;
  std::int64_t seq = first;
  while (seq < first + n || !batch.empty()) {
    while (batch.size() < batch_size && seq < first + n) {
      batch.push_back(data_envelope(plan, dests[static_cast<std::size_t>(seq) % dests.size()], seq));
      ++seq;
    }
    while (!sink->try_push(batch)) {
      if (std::chrono::steady_clock::now() > until) return false;
      sink->wait_for_space(std::chrono::milliseconds(5));
    }
  }
  return true;
}

inline std::vector<TaskId> tasks_of_a() { return {TaskId(1), TaskId(2), TaskId(kSrcTask)}; }
inline std::vector<TaskId> tasks_of_b() { return {TaskId(3), TaskId(4), TaskId(kAckerTask)}; }

// A raw connection to a transport, speaking (or not) the protocol by hand.
class RawPeer {
  using tcp = boost::asio::ip::tcp;

 public:
  explicit RawPeer(const WorkerAddress& to) : socket_(io_) {
    socket_.connect(tcp::endpoint(boost::asio::ip::make_address(to.host),
                                  static_cast<unsigned short>(to.port)));
    timeval tv{10, 0};  // a read never blocks a test for long
    setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  std::string local() const {
    return "127.0.0.1:" + std::to_string(socket_.local_endpoint().port());
  }
  void send(const std::string& bytes) { boost::asio::write(socket_, boost::asio::buffer(bytes)); }
  void send(const FrameEncoder& enc) {
    send(std::string(reinterpret_cast<const char*>(enc.data()), enc.size()));
  }
  void hello(const std::string& topology, const WorkerAddress& as, const std::string& nonce = {}) {
    FrameEncoder enc;
    enc.add_hello(topology, as.host, as.port, nonce);
    send(enc);
  }
  // The body of the next frame, or "" at end of stream / timeout.
  std::string read_frame() {
    std::uint8_t header[4];
    boost::system::error_code ec;
    boost::asio::read(socket_, boost::asio::buffer(header), ec);
    if (ec) return "";
    std::string body(read_length_prefix(header), '\0');
    boost::asio::read(socket_, boost::asio::buffer(body.data(), body.size()), ec);
    return ec ? "" : body;
  }
  // True when the transport closed the connection.
  bool closed_by_peer() {
    char c;
    boost::system::error_code ec;
    socket_.read_some(boost::asio::buffer(&c, 1), ec);
    return ec == boost::asio::error::eof || ec == boost::asio::error::connection_reset;
  }
  void close() { socket_.close(); }

 private:
  boost::asio::io_context io_;
  tcp::socket socket_;
};

inline std::string be32(std::uint32_t n) {
  std::string s(4, '\0');
  s[0] = static_cast<char>(n >> 24);
  s[1] = static_cast<char>(n >> 16);
  s[2] = static_cast<char>(n >> 8);
  s[3] = static_cast<char>(n);
  return s;
}

}  // namespace rstorm::transport::testing
