// Two Transports over real sockets on 127.0.0.1 (ports from the OS), and raw
// Asio sockets playing a misbehaving peer.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/time.h>

#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "common/poll.hpp"
#include "transport_test_support.hpp"
#include "worker/transport/codec.hpp"

namespace rstorm::transport {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using rstorm::testing::eventually;
using namespace rstorm::transport::testing;

class TwoWorkers : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = start("a", handler_a_, tasks_of_a(), log_a_);
    b_ = start("b", handler_b_, tasks_of_b(), log_b_);
    address_a_ = a_->listen_address();
    address_b_ = b_->listen_address();
    a_->set_peers({PeerWorker{address_b_, tasks_of_b()}});
    b_->set_peers({PeerWorker{address_a_, tasks_of_a()}});
    // Each side may first be refused by the other (not yet listed there) and
    // retries: wait for both connections, then count from here.
    ASSERT_TRUE(eventually([&] { return a_->stats().connects == 1 && b_->stats().connects == 1; }));
    refused_before_ = b_->stats().connections_refused;
  }

  std::unique_ptr<Transport> start(const std::string& name, CountingHandler& handler,
                                   std::vector<TaskId> local, CapturedLog& log, int port = 0,
                                   std::size_t max_buffered = 8 << 20) {
    TransportOptions o = options_for("t", std::move(local), log.logger, port);
    o.max_buffered_bytes = max_buffered;
    auto t = Transport::start(*plan_, std::move(o), &handler);
    EXPECT_TRUE(t.is_ok()) << name << ": " << t.status().message();
    return t.is_ok() ? std::move(*t) : nullptr;
  }

  std::unique_ptr<worker::TopologyPlan> plan_ = make_test_plan();
  CapturedLog log_a_{"a"}, log_b_{"b"};
  CountingHandler handler_a_, handler_b_;
  std::unique_ptr<Transport> a_, b_;
  WorkerAddress address_a_, address_b_;
  std::uint64_t refused_before_ = 0;
};

TEST_F(TwoWorkers, ExchangeAMillionEnvelopesWithExactCounts) {
  constexpr std::int64_t kTuples = 1'000'000;
  constexpr std::int64_t kAcks = 200'000;
  // B answers with control messages to A's spout task at the same time.
  std::thread acks([&] {
    worker::TupleSink* to_a = b_->sink(address_a_);
    worker::Batch batch;
    for (std::int64_t i = 0; i < kAcks; ++i) {
      worker::Envelope& e = batch.emplace_back();
      e.dest = TaskId(kSrcTask);
      e.set_control(worker::MessageKind::kAckComplete, static_cast<std::uint64_t>(i), 0,
                    TaskId(kAckerTask));
      if (batch.size() == 256 || i + 1 == kAcks) {
        while (!to_a->try_push(batch)) to_a->wait_for_space(std::chrono::milliseconds(5));
      }
    }
  });
  ASSERT_TRUE(push_all(a_->sink(address_b_), *plan_, {3, 4}, 0, kTuples));
  acks.join();
  ASSERT_TRUE(eventually([&] { return handler_b_.delivered.load() >= kTuples; }));
  ASSERT_TRUE(eventually([&] { return handler_a_.delivered.load() >= kAcks; }));
  EXPECT_EQ(handler_b_.delivered.load(), static_cast<std::uint64_t>(kTuples));
  EXPECT_EQ(handler_a_.delivered.load(), static_cast<std::uint64_t>(kAcks));
  {
    std::lock_guard lock(handler_b_.mutex);
    EXPECT_EQ(handler_b_.next_seq, kTuples);
    EXPECT_EQ(handler_b_.out_of_order, 0u);
  }
  {
    std::lock_guard lock(handler_a_.mutex);
    EXPECT_EQ(handler_a_.controls, static_cast<std::uint64_t>(kAcks));
  }
  // A sender counts a tuple as sent when its write completes, which can be just after
  // the receiver has delivered it: wait for the counter rather than read it once.
  EXPECT_TRUE(
      eventually([&] { return a_->stats().tuples_sent >= static_cast<std::uint64_t>(kTuples); }));
  EXPECT_TRUE(
      eventually([&] { return b_->stats().tuples_sent >= static_cast<std::uint64_t>(kAcks); }));
  EXPECT_EQ(a_->stats().tuples_sent, static_cast<std::uint64_t>(kTuples));
  EXPECT_EQ(b_->stats().tuples_received, static_cast<std::uint64_t>(kTuples));
  EXPECT_EQ(b_->stats().tuples_sent, static_cast<std::uint64_t>(kAcks));
  EXPECT_EQ(a_->stats().connects, 1u);
  EXPECT_EQ(handler_a_.undelivered.load() + handler_b_.undelivered.load(), 0u);
}

TEST_F(TwoWorkers, DeliveredTuplesCarryTheirValuesAnchorsAndStream) {
  handler_b_.keep = true;
  worker::Batch batch{data_envelope(*plan_, 3, 7)};
  ASSERT_TRUE(a_->sink(address_b_)->try_push(batch));
  EXPECT_TRUE(batch.empty());
  ASSERT_TRUE(eventually([&] { return handler_b_.delivered.load() == 1; }));
  std::lock_guard lock(handler_b_.mutex);
  const worker::Envelope& e = handler_b_.kept.at(0);
  EXPECT_EQ(e.dest, TaskId(3));
  EXPECT_EQ(e.tuple.source(), stream_info(*plan_, "default"));
  EXPECT_EQ(e.tuple.values(), (Values{Value(std::int64_t{7}), Value("word"), Value(3.5)}));
  EXPECT_EQ(e.tuple.anchors()[0].root, 8u);
}

TEST_F(TwoWorkers, SlowReceiverHoldsTheSenderBackByItsBufferAndLosesNothing) {
  // A small sender buffer so the sink refuses soon after TCP's buffers fill.
  a_.reset();
  a_ = start("a", handler_a_, tasks_of_a(), log_a_, address_a_.port, 64 * 1024);
  ASSERT_NE(a_, nullptr);
  a_->set_peers({PeerWorker{address_b_, tasks_of_b()}});
  handler_b_.slow = true;
  worker::TupleSink* sink = a_->sink(address_b_);
  std::int64_t pushed = 0;
  bool refused = false;
  while (!refused && pushed < 5'000'000) {
    worker::Batch batch;
    for (int i = 0; i < 256; ++i) batch.push_back(data_envelope(*plan_, 3, pushed + i));
    if (!sink->try_push(batch)) {
      refused = true;
    } else {
      pushed += 256;
    }
  }
  ASSERT_TRUE(refused) << "the sink never refused after " << pushed << " envelopes";
  handler_b_.slow = false;
  ASSERT_TRUE(push_all(sink, *plan_, {3}, pushed, 10'000));
  ASSERT_TRUE(eventually(
      [&] { return handler_b_.delivered.load() == static_cast<std::uint64_t>(pushed + 10'000); }));
  std::lock_guard lock(handler_b_.mutex);
  EXPECT_EQ(handler_b_.out_of_order, 0u);
  EXPECT_EQ(handler_b_.next_seq, pushed + 10'000);
}

TEST_F(TwoWorkers, ControlMessagesPassAFullBufferAndAThrottledTask) {
  // The peer's buffer is full of data (a slow reader, a 64 KiB buffer) and the
  // acker task is throttled: data and ordinary acks are refused, but a forced
  // control batch (an acker's completion, a fail) is taken and arrives.
  a_.reset();
  a_ = start("a", handler_a_, tasks_of_a(), log_a_, address_a_.port, 64 * 1024);
  ASSERT_NE(a_, nullptr);
  a_->set_peers({PeerWorker{address_b_, tasks_of_b()}});
  worker::TupleSink* sink = a_->sink(address_b_);
  ASSERT_TRUE(push_all(sink, *plan_, {3}, 0, 1000));  // connected
  ASSERT_TRUE(eventually([&] { return handler_b_.delivered.load() == 1000; }));
  b_->set_backpressure({TaskId(kAckerTask)}, true);
  handler_b_.slow = true;
  std::int64_t seq = 1000;
  for (;;) {
    worker::Batch batch;
    for (int i = 0; i < 256; ++i) batch.push_back(data_envelope(*plan_, 3, seq + i));
    if (!sink->try_push(batch)) break;
    seq += 256;
  }
  auto control = [&](worker::MessageKind kind, std::uint64_t root) {
    worker::Envelope e;
    e.dest = TaskId(kAckerTask);
    e.set_control(kind, root, 7, TaskId(kSrcTask));
    return worker::Batch{std::move(e)};
  };
  // Acks pushed before the throttle reached us are taken: count them.
  std::uint64_t acks_taken = 0;
  ASSERT_TRUE(eventually([&] {
    worker::Batch ack = control(worker::MessageKind::kAck, 1);
    if (!sink->try_push(ack)) return true;
    ++acks_taken;
    return false;
  })) << "acks to a throttled acker were always taken";
  for (std::uint64_t root = 1; root <= 100; ++root) {
    worker::Batch fail = control(worker::MessageKind::kFail, root);
    sink->force_push(fail);
    EXPECT_TRUE(fail.empty());
  }
  handler_b_.slow = false;
  ASSERT_TRUE(eventually(
      [&] { return handler_b_.delivered.load() == static_cast<std::uint64_t>(seq) + 100 + acks_taken; }));
  std::lock_guard lock(handler_b_.mutex);
  EXPECT_EQ(handler_b_.controls, 100u + acks_taken);
  EXPECT_EQ(handler_b_.out_of_order, 0u);
}

TEST_F(TwoWorkers, BackpressureMakesTheSendersSinkRefuseThatTaskUntilRelief) {
  worker::TupleSink* sink = a_->sink(address_b_);
  ASSERT_TRUE(push_all(sink, *plan_, {3, 4}, 0, 1000));  // connected
  ASSERT_TRUE(eventually([&] { return handler_b_.delivered.load() == 1000; }));
  b_->set_backpressure({TaskId(3)}, true);
  std::int64_t seq = 1000;
  // Until the message arrives pushes still succeed; then task 3 is refused.
  ASSERT_TRUE(eventually([&] {
    worker::Batch batch{data_envelope(*plan_, 3, seq)};
    if (sink->try_push(batch)) {
      ++seq;
      return false;
    }
    return batch.size() == 1;
  }));
  worker::Batch to_4{data_envelope(*plan_, 4, seq)};
  EXPECT_TRUE(sink->try_push(to_4));  // other tasks still flow
  ++seq;
  EXPECT_EQ(a_->stats().remote_backpressure_events, 1u);
  EXPECT_EQ(b_->stats().local_backpressure_events, 1u);

  std::atomic<bool> woke{false};
  std::thread waiter([&] {
    worker::Batch batch{data_envelope(*plan_, 3, seq)};
    while (!sink->try_push(batch)) sink->wait_for_space(std::chrono::seconds(30));
    woke = true;
  });
  b_->set_backpressure({TaskId(3)}, false);
  waiter.join();
  EXPECT_TRUE(woke.load());
  ++seq;
  ASSERT_TRUE(eventually([&] { return handler_b_.delivered.load() == static_cast<std::uint64_t>(seq); }));
  EXPECT_GT(a_->stats().remote_throttled_ns, 0u);
  std::lock_guard lock(handler_b_.mutex);
  EXPECT_EQ(handler_b_.out_of_order, 0u);
}

TEST_F(TwoWorkers, SenderThatConnectsLaterLearnsTheThrottledTasks) {
  b_->set_backpressure({TaskId(4)}, true);
  // A fresh sender: C, listed by B, connecting after the throttle began.
  CapturedLog log_c{"c"};
  CountingHandler handler_c;
  auto c = start("c", handler_c, {TaskId(1), TaskId(2), TaskId(kSrcTask)}, log_c);
  ASSERT_NE(c, nullptr);
  b_->set_peers({PeerWorker{address_a_, {}}, PeerWorker{c->listen_address(), tasks_of_a()}});
  c->set_peers({PeerWorker{address_b_, tasks_of_b()}});
  worker::TupleSink* sink = c->sink(address_b_);
  ASSERT_TRUE(eventually([&] {
    worker::Batch probe{data_envelope(*plan_, 4, 0)};
    return c->stats().connects == 1 && !sink->try_push(probe);
  })) << "task 4 was never refused";
  EXPECT_EQ(handler_b_.delivered.load() + handler_c.undelivered.load(), 0u);
}

TEST_F(TwoWorkers, PeerRestartOnTheSamePortReconnectsAndLosesNoEnvelope) {
  handler_b_.track_each = true;
  handler_a_.track_each = true;
  worker::TupleSink* sink = a_->sink(address_b_);
  ASSERT_TRUE(push_all(sink, *plan_, {3, 4}, 0, 5000));
  ASSERT_TRUE(eventually([&] { return handler_b_.delivered.load() == 5000; }));

  b_.reset();  // the peer worker stops
  ASSERT_TRUE(eventually([&] { return a_->stats().peers_stopped == 1; }));
  // While it is down, the envelopes wait in A's buffer.
  ASSERT_TRUE(push_all(sink, *plan_, {3, 4}, 5000, 3000));

  CountingHandler handler_b2;
  handler_b2.track_each = true;
  std::unique_ptr<Transport> b2;
  ASSERT_TRUE(eventually([&] {
    TransportOptions o = options_for("t", tasks_of_b(), log_b_.logger, address_b_.port);
    auto t = Transport::start(*plan_, std::move(o), &handler_b2);
    if (t.is_ok()) b2 = std::move(*t);
    return t.is_ok();
  }));
  b2->set_peers({PeerWorker{address_a_, tasks_of_a()}});
  ASSERT_TRUE(push_all(sink, *plan_, {3, 4}, 8000, 2000));
  ASSERT_TRUE(eventually([&] {
    return handler_b2.delivered.load() + handler_a_.undelivered.load() == 5000;
  }));
  EXPECT_EQ(a_->stats().reconnects, 1u);
  std::lock_guard lock(handler_b2.mutex);
  std::lock_guard lock_a(handler_a_.mutex);
  for (std::int64_t seq = 5000; seq < 10000; ++seq) {
    const int n = handler_b2.seen[seq] + handler_a_.seen_undeliverable[seq];
    ASSERT_EQ(n, 1) << "sequence " << seq << " arrived " << n << " times";
  }
  b2.reset();
}

TEST_F(TwoWorkers, EnvelopesBufferedForARemovedPeerAreUndeliverable) {
  handler_a_.track_each = true;
  ASSERT_TRUE(eventually([&] { return a_->stats().connects == 1; }));
  b_.reset();
  ASSERT_TRUE(eventually([&] { return a_->stats().peers_stopped == 1; }));
  ASSERT_TRUE(push_all(a_->sink(address_b_), *plan_, {3, 4}, 0, 1234));
  a_->set_peers({});
  EXPECT_EQ(handler_a_.undelivered.load(), 1234u);
  EXPECT_EQ(a_->stats().undeliverable, 1234u);
  {
    std::lock_guard lock(handler_a_.mutex);
    EXPECT_NE(handler_a_.last_reason.find("no longer in the assignment"), std::string::npos);
  }
  // Later pushes to the removed peer go straight back.
  worker::Batch batch{data_envelope(*plan_, 3, 5000)};
  EXPECT_TRUE(a_->sink(address_b_)->try_push(batch));
  EXPECT_EQ(handler_a_.undelivered.load(), 1235u);
}

TEST_F(TwoWorkers, StopHandsUnsentEnvelopesToUndeliverable) {
  ASSERT_TRUE(eventually([&] { return a_->stats().connects == 1; }));
  b_.reset();
  ASSERT_TRUE(eventually([&] { return a_->stats().peers_stopped == 1; }));
  ASSERT_TRUE(push_all(a_->sink(address_b_), *plan_, {3}, 0, 777));
  a_->stop();
  EXPECT_EQ(handler_a_.undelivered.load(), 777u);
  worker::Batch batch{data_envelope(*plan_, 3, 1)};
  EXPECT_TRUE(a_->sink(address_b_)->try_push(batch));
  EXPECT_EQ(handler_a_.undelivered.load(), 778u);
}

TEST_F(TwoWorkers, StopWhileSendingEndsOnWholeFramesAndAccountsForEveryEnvelopeOnce) {
  // A sender that stops while a write is in flight lets that write end: the
  // receiver sees no frame cut in two, and every envelope is either delivered
  // or handed back as undeliverable, never both.
  CapturedLog log_c("c");
  CountingHandler handler_c;
  TransportOptions o = options_for("t", tasks_of_a(), log_c.logger);
  o.stop_flush = std::chrono::seconds(120);  // the write ends well before: no timing here
  auto c = Transport::start(*plan_, std::move(o), &handler_c);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  const WorkerAddress address_c = (*c)->listen_address();
  b_->set_peers({PeerWorker{address_c, tasks_of_a()}});
  (*c)->set_peers({PeerWorker{address_b_, tasks_of_b()}});
  // B reads slowly, so C's socket fills and its buffer with it: once a push
  // is refused, a write is in flight that cannot end until B reads on.
  handler_b_.slow = true;
  constexpr std::int64_t kTuples = 1'000'000;
  std::atomic<bool> refused{false};
  std::thread pusher([&] {
    worker::TupleSink* sink = (*c)->sink(address_b_);
    worker::Batch batch;
    for (std::int64_t seq = 0; seq < kTuples || !batch.empty();) {
      while (batch.size() < 256 && seq < kTuples) {
        batch.push_back(data_envelope(*plan_, seq % 2 == 0 ? 3 : 4, seq));
        ++seq;
      }
      while (!sink->try_push(batch)) {
        refused = true;
        sink->wait_for_space(std::chrono::milliseconds(5));
      }
    }
  });
  ASSERT_TRUE(eventually([&] { return refused.load(); }));
  std::thread stopper([&] { (*c)->stop(); });
  handler_b_.slow = false;
  stopper.join();
  pusher.join();
  ASSERT_TRUE(eventually([&] {
    return handler_b_.delivered.load() + handler_c.undelivered.load() ==
           static_cast<std::uint64_t>(kTuples);
  })) << handler_b_.delivered.load()
      << " delivered, " << handler_c.undelivered.load() << " undeliverable\nB: " << log_b_.all();
  EXPECT_TRUE(log_b_.lines_with("truncated frame").empty()) << log_b_.all();
  EXPECT_EQ(b_->stats().frames_rejected, 0u);
  std::lock_guard lock(handler_b_.mutex);
  EXPECT_EQ(handler_b_.out_of_order, 0u);
}

TEST_F(TwoWorkers, PeerThatStopsWhileWeSendSaysGoodbyeAndIsReportedAtInfoNotAsALostConnection) {
  // A receiver that stops in order (its worker killed or rebalanced away) says
  // goodbye: the sender reports it at info and counts it apart from lost
  // connections, even while its write is blocked on a full socket. C, the
  // receiver, waits as long as it takes for A to close (no timing here).
  CapturedLog log_c("c");
  CountingHandler handler_c;
  TransportOptions o = options_for("t", tasks_of_b(), log_c.logger);
  o.stop_flush = std::chrono::seconds(120);
  auto c = Transport::start(*plan_, std::move(o), &handler_c);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  const WorkerAddress address_c = (*c)->listen_address();
  // B leaves first, in order too: A's only peer is C.
  ASSERT_TRUE(eventually([&] { return a_->stats().connects == 1; }));
  b_.reset();
  ASSERT_TRUE(eventually([&] { return a_->stats().peers_stopped == 1; })) << log_a_.all();
  (*c)->set_peers({PeerWorker{address_a_, tasks_of_a()}});
  a_->set_peers({PeerWorker{address_c, tasks_of_b()}});
  handler_c.slow = true;  // C reads slowly: A's socket and buffer fill
  std::atomic<bool> refused{false}, done{false};
  std::thread pusher([&] {
    worker::TupleSink* sink = a_->sink(address_c);
    worker::Batch batch;
    for (std::int64_t seq = 0; !done.load(); batch.clear()) {
      for (; batch.size() < 256; ++seq) {
        batch.push_back(data_envelope(*plan_, static_cast<std::int32_t>(3 + seq % 2), seq));
      }
      if (!sink->try_push(batch)) {
        refused = true;
        sink->wait_for_space(std::chrono::milliseconds(5));
      }
    }
  });
  ASSERT_TRUE(eventually([&] { return refused.load(); }));
  handler_c.slow = false;
  (*c)->stop();  // the peer worker stops: it returns once A has closed
  const bool stopped = eventually([&] { return a_->stats().peers_stopped == 2; });
  done = true;
  pusher.join();
  ASSERT_TRUE(stopped) << log_a_.all();
  EXPECT_EQ(log_a_
                .lines_with("info worker " + address_c.to_string() +
                            " closed the connection: it is stopping; retrying")
                .size(),
            1u)
      << log_a_.all();
  // (Until both listed each other, A and C may have refused one another: a
  // warning of the set-up, not of the stop.)
  EXPECT_TRUE(log_a_.lines_with("connection to worker " + address_c.to_string() + " lost").empty())
      << log_a_.all();
  EXPECT_TRUE(log_a_.lines_with("reset").empty()) << log_a_.all();
  EXPECT_TRUE(log_a_.lines_with("error").empty()) << log_a_.all();
  EXPECT_EQ(a_->stats().connection_errors, 0u);
  EXPECT_TRUE(log_c.lines_with("truncated frame").empty()) << log_c.all();
}

TEST_F(TwoWorkers, SenderNotYetListedIsRefusedAndRetriesUntilListed) {
  b_->set_peers({});  // B closes A's connection; A reconnects and is refused
  ASSERT_TRUE(eventually([&] { return a_->stats().connection_errors == 1; }));
  ASSERT_TRUE(push_all(a_->sink(address_b_), *plan_, {3}, 0, 100));
  ASSERT_TRUE(eventually([&] {
    return !log_a_.lines_with("refused by the peer: worker " + address_a_.to_string() +
                              " is not in this topology's assignment")
                .empty();
  })) << log_a_.all();
  EXPECT_EQ(handler_b_.delivered.load(), 0u);
  b_->set_peers({PeerWorker{address_a_, tasks_of_a()}});
  ASSERT_TRUE(eventually([&] { return handler_b_.delivered.load() == 100; }))
      << handler_b_.delivered.load() << " delivered, " << a_->stats().tuples_sent
      << " sent\nA: " << log_a_.all() << "\nB: " << log_b_.all();
  EXPECT_EQ(handler_a_.undelivered.load(), 0u);
}

TEST_F(TwoWorkers, PeerNotListeningYetIsReportedAtInfoThenAsAWarningWhenItStaysSo) {
  // A port nothing listens on: a peer still starting, then one that never does.
  asio::io_context io;
  tcp::acceptor probe(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const WorkerAddress silent{"127.0.0.1", probe.local_endpoint().port()};
  probe.close();
  a_->set_peers({PeerWorker{address_b_, tasks_of_b()}, PeerWorker{silent, {}}});
  const std::string name = silent.to_string();
  ASSERT_TRUE(eventually([&] {
    return !log_a_.lines_with("warning cannot connect to worker " + name + ": ").empty();
  })) << log_a_.all();
  EXPECT_EQ(log_a_
                .lines_with("info cannot connect to worker " + name +
                            " yet: Connection refused (it may still be starting)")
                .size(),
            1u)
      << log_a_.all();
  EXPECT_EQ(log_a_
                .lines_with("warning cannot connect to worker " + name +
                            ": Connection refused (6 times in a row, and never connected)")
                .size(),
            1u)
      << log_a_.all();
}

TEST(TransportStart, PortAlreadyTakenIsAClearError) {
  auto plan = make_test_plan();
  CapturedLog log("x");
  CountingHandler h;
  auto first = Transport::start(*plan, options_for("t", {}, log.logger), &h);
  ASSERT_TRUE(first.is_ok());
  const int port = (*first)->listen_address().port;
  auto second = Transport::start(*plan, options_for("t", {}, log.logger, port), &h);
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.status().message(), "cannot listen for other workers on 127.0.0.1:" +
                                           std::to_string(port) + ": Address already in use");
}

// ---------------------------------------------------------- misbehaving peers

class BadPeer : public TwoWorkers {
 protected:
  // After each fault B still exchanges tuples with A.
  void expect_good_peer_still_served(std::int64_t first) {
    const std::uint64_t before = handler_b_.delivered.load();
    ASSERT_TRUE(push_all(a_->sink(address_b_), *plan_, {3, 4}, first, 1000));
    ASSERT_TRUE(eventually([&] { return handler_b_.delivered.load() == before + 1000; }));
  }
  ControlMessage decode_control(const std::string& body) {
    PlanIndex index(*plan_);
    FrameDecoder dec(index, nullptr);
    worker::Batch out;
    ControlMessage c;
    auto t = dec.decode(reinterpret_cast<const std::uint8_t*>(body.data()), body.size(), out, c);
    EXPECT_TRUE(t.is_ok());
    return c;
  }
};

TEST_F(BadPeer, OversizedFrameClosesThatConnectionWithOneLogLine) {
  expect_good_peer_still_served(0);
  RawPeer raw(address_b_);
  raw.hello("t", address_a_);
  ASSERT_NE(raw.read_frame(), "");  // hello ack
  raw.send(be32(2147483647));
  const std::string expected = "frame of 2147483647 bytes from " + raw.local() + " (worker " +
                               address_a_.to_string() +
                               ") exceeds worker.transport.max.frame.bytes (16777216); closing "
                               "the connection";
  ASSERT_TRUE(eventually([&] { return log_b_.lines_with(expected).size() == 1; })) << log_b_.all();
  EXPECT_EQ(log_b_.lines_with(expected)[0], "error " + expected + "\n");
  EXPECT_TRUE(raw.closed_by_peer());
  EXPECT_EQ(b_->stats().frames_rejected, 1u);
  expect_good_peer_still_served(1000);
}

TEST_F(BadPeer, GarbageBeforeAnyHelloIsRefusedAsAnOversizedFrame) {
  RawPeer raw(address_b_);
  raw.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string expected = "frame of 1195725856 bytes from " + raw.local() +
                               " exceeds worker.transport.max.frame.bytes (16777216)";
  ASSERT_TRUE(eventually([&] { return log_b_.lines_with(expected).size() == 1; })) << log_b_.all();
  EXPECT_TRUE(raw.closed_by_peer());
  expect_good_peer_still_served(0);
}

TEST_F(BadPeer, UndecodableFrameClosesThatConnectionWithOneLogLine) {
  RawPeer raw(address_b_);
  raw.hello("t", address_a_);
  ASSERT_NE(raw.read_frame(), "");
  raw.send(be32(16) + std::string("\x4c\x19\xfc\xff\xff\xff\xff\x0f garbage", 16));
  const std::string expected =
      "undecodable frame of 16 bytes from " + raw.local() + " (worker " + address_a_.to_string() + "): ";
  ASSERT_TRUE(eventually([&] { return log_b_.lines_with(expected).size() == 1; })) << log_b_.all();
  EXPECT_NE(log_b_.lines_with(expected)[0].find("; closing the connection"), std::string::npos);
  EXPECT_TRUE(raw.closed_by_peer());
  EXPECT_EQ(b_->stats().frames_rejected, 1u);
  expect_good_peer_still_served(0);
}

TEST_F(BadPeer, TupleForATaskThisWorkerDoesNotRunClosesThatConnection) {
  RawPeer raw(address_b_);
  raw.hello("t", address_a_);
  ASSERT_NE(raw.read_frame(), "");
  PlanIndex index(*plan_);
  worker::Batch batch{data_envelope(*plan_, 1, 0)};  // task 1 runs on A, not B
  FrameEncoder enc;
  ASSERT_EQ(enc.add_tuples(index, batch, 256), 1u);
  raw.send(enc);
  ASSERT_TRUE(eventually([&] {
    return log_b_.lines_with("an envelope for task 1, which this worker does not run; closing the "
                             "connection").size() == 1;
  })) << log_b_.all();
  EXPECT_TRUE(raw.closed_by_peer());
  EXPECT_EQ(handler_b_.delivered.load(), 0u);
  expect_good_peer_still_served(0);
}

TEST_F(BadPeer, TruncatedFrameIsDroppedWithOneLogLine) {
  RawPeer raw(address_b_);
  raw.hello("t", address_a_);
  ASSERT_NE(raw.read_frame(), "");
  raw.send(be32(1000) + std::string(10, 'x'));
  const std::string local = raw.local();
  raw.close();
  const std::string expected = "truncated frame from " + local + " (worker " +
                               address_a_.to_string() +
                               "): the connection ended after 14 of its 1004 bytes (closed by the "
                               "peer); frame dropped, closing the connection";
  ASSERT_TRUE(eventually([&] { return log_b_.lines_with(expected).size() == 1; })) << log_b_.all();
  EXPECT_EQ(b_->stats().frames_rejected, 1u);
  expect_good_peer_still_served(0);
}

TEST_F(BadPeer, HelloWithAnotherTopologyIdIsRefused) {
  RawPeer raw(address_b_);
  const std::string local = raw.local();
  raw.hello("other-topology", address_a_);
  const std::string body = raw.read_frame();
  ASSERT_NE(body, "");
  EXPECT_EQ(decode_control(body).reason, "topology 'other-topology' is not this worker's topology 't'");
  EXPECT_TRUE(raw.closed_by_peer());
  const std::string expected = "refused connection from " + local + " claiming to be worker " +
                               address_a_.to_string() +
                               ": topology 'other-topology' is not this worker's topology 't'";
  ASSERT_TRUE(eventually([&] { return log_b_.lines_with(expected).size() == 1; })) << log_b_.all();
  EXPECT_EQ(b_->stats().connections_refused, refused_before_ + 1);
  expect_good_peer_still_served(0);
}

TEST_F(BadPeer, HelloFromAnAddressNotInThePeersListIsRefused) {
  RawPeer raw(address_b_);
  const WorkerAddress stranger{"127.0.0.1", 1};
  raw.hello("t", stranger);
  const std::string body = raw.read_frame();
  ASSERT_NE(body, "");
  EXPECT_EQ(decode_control(body).reason,
            "worker 127.0.0.1:1 is not in this topology's assignment");
  EXPECT_TRUE(raw.closed_by_peer());
  ASSERT_TRUE(eventually([&] {
    return log_b_.lines_with("claiming to be worker 127.0.0.1:1: worker 127.0.0.1:1 is not in this "
                             "topology's assignment").size() == 1;
  })) << log_b_.all();
  EXPECT_EQ(b_->stats().connections_refused, refused_before_ + 1);
  expect_good_peer_still_served(0);
}

TEST(ConnectionLost, EnvelopesBufferedWhenAnEstablishedConnectionFailsAreUndeliverable) {
  auto plan = make_test_plan();
  CapturedLog log("a");
  CountingHandler handler;
  // A receiver that accepts the hello, then reads nothing and hangs up.
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const WorkerAddress receiver{"127.0.0.1", acceptor.local_endpoint().port()};
  TransportOptions o = options_for("t", tasks_of_a(), log.logger);
  o.max_buffered_bytes = 64 * 1024;
  auto a = Transport::start(*plan, std::move(o), &handler);
  ASSERT_TRUE(a.is_ok());
  (*a)->set_peers({PeerWorker{receiver, tasks_of_b()}});
  tcp::socket socket(io);
  acceptor.accept(socket);
  std::uint8_t header[4];
  asio::read(socket, asio::buffer(header));
  std::string hello(read_length_prefix(header), '\0');
  asio::read(socket, asio::buffer(hello.data(), hello.size()));
  FrameEncoder ack;
  ack.add_hello_ack();
  asio::write(socket, asio::buffer(ack.data(), ack.size()));
  ASSERT_TRUE(eventually([&] { return (*a)->stats().connects == 1; }));

  // Push until TCP's buffers and the sender's are full and the sink refuses.
  worker::TupleSink* sink = (*a)->sink(receiver);
  std::int64_t pushed = 0;
  for (bool refused = false; !refused && pushed < 5'000'000;) {
    worker::Batch batch;
    for (int i = 0; i < 256; ++i) batch.push_back(data_envelope(*plan, 3, pushed + i));
    refused = true;
    for (int attempt = 0; attempt < 100 && refused; ++attempt) {
      refused = !sink->try_push(batch);
      if (refused) sink->wait_for_space(std::chrono::milliseconds(5));
    }
    if (!refused) pushed += 256;
  }
  ASSERT_LT(pushed, 5'000'000);
  socket.close();  // unread data: the sender sees a reset
  ASSERT_TRUE(eventually([&] { return (*a)->stats().connection_errors == 1; }));
  // What was still in the sender's buffer comes back; what the kernel had
  // taken is lost with the connection (the spouts' timeouts replay it).
  EXPECT_GT(handler.undelivered.load(), 0u);
  EXPECT_LE(handler.undelivered.load(), static_cast<std::uint64_t>(pushed));
  EXPECT_EQ((*a)->stats().undeliverable, handler.undelivered.load());
  std::lock_guard lock(handler.mutex);
  EXPECT_NE(handler.last_reason.find("connection to worker " + receiver.to_string() + " lost"),
            std::string::npos)
      << handler.last_reason;
}

TEST_F(BadPeer, TuplesBeforeAHelloAreRefused) {
  RawPeer raw(address_b_);
  PlanIndex index(*plan_);
  worker::Batch batch{data_envelope(*plan_, 3, 0)};
  FrameEncoder enc;
  ASSERT_EQ(enc.add_tuples(index, batch, 256), 1u);
  raw.send(enc);
  ASSERT_TRUE(eventually([&] {
    return log_b_.lines_with("frame from " + raw.local() + " before its hello").size() == 1;
  })) << log_b_.all();
  EXPECT_TRUE(raw.closed_by_peer());
  EXPECT_EQ(handler_b_.delivered.load(), 0u);
}

}  // namespace
}  // namespace rstorm::transport
