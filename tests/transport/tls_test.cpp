// TLS on the data plane (storm.messaging.netty.tls.*): workers with the
// cluster's certificates exchange tuples as before over an encrypted stream;
// a plaintext peer, a peer with another CA's certificate and a receiver whose
// certificate does not name its host are refused, the refusal names them,
// and no tuple of theirs is read.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "common/poll.hpp"
#include "common/security/certificates.hpp"
#include "common/security/secrets.hpp"
#include "common/temp_dir.hpp"
#include "transport_test_support.hpp"
#include "worker/transport/codec.hpp"

namespace rstorm::transport {
namespace {

using rstorm::testing::eventually;
using rstorm::testing::TempDir;
using namespace rstorm::transport::testing;
namespace asio = boost::asio;
using asio::ip::tcp;

// A TCP relay that records what the sender writes: the bytes an eavesdropper
// on the wire between two workers would see.
class RecordingRelay {
 public:
  explicit RecordingRelay(WorkerAddress to) : to_(std::move(to)), acceptor_(io_) {
    acceptor_.open(tcp::v4());
    acceptor_.bind(tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    acceptor_.listen();
    thread_ = std::thread([this] { run(); });
  }
  ~RecordingRelay() {
    stopping_ = true;
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
    {
      std::lock_guard lock(mutex_);
      for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    }
    thread_.join();
    for (auto& t : pumps_) t.join();
  }
  WorkerAddress address() const {
    return WorkerAddress{"127.0.0.1", acceptor_.local_endpoint().port()};
  }
  std::string sent() const {
    std::lock_guard lock(mutex_);
    return sent_;
  }

 private:
  void run() {
    while (!stopping_) {
      auto from = std::make_shared<tcp::socket>(io_);
      boost::system::error_code ec;
      acceptor_.accept(*from, ec);
      if (ec) return;
      auto to = std::make_shared<tcp::socket>(io_);
      to->connect(
          tcp::endpoint(asio::ip::make_address(to_.host), static_cast<unsigned short>(to_.port)),
          ec);
      if (ec) continue;
      std::lock_guard lock(mutex_);
      fds_.push_back(from->native_handle());
      fds_.push_back(to->native_handle());
      pumps_.emplace_back([this, from, to] { pump(*from, *to, true); });
      pumps_.emplace_back([this, from, to] { pump(*to, *from, false); });
    }
  }
  void pump(tcp::socket& in, tcp::socket& out, bool record) {
    char buf[16384];
    for (;;) {
      boost::system::error_code ec;
      const std::size_t n = in.read_some(asio::buffer(buf), ec);
      if (ec) break;
      if (record) {
        std::lock_guard lock(mutex_);
        sent_.append(buf, n);
      }
      asio::write(out, asio::buffer(buf, n), ec);
      if (ec) break;
    }
    ::shutdown(out.native_handle(), SHUT_RDWR);
  }

  WorkerAddress to_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::string sent_;                // GUARDED_BY(mutex_)
  std::vector<int> fds_;            // GUARDED_BY(mutex_)
  std::vector<std::thread> pumps_;  // joined by the destructor only
  std::thread thread_;
};

class TlsWorkers : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const auto d = dir_->path();
    auto ca = security::CertificateAuthority::create("cluster CA");
    ASSERT_TRUE(ca.is_ok()) << ca.status().message();
    ASSERT_TRUE((*ca)->write_certificate(d / "ca.pem"));
    security::CertificateRequest supervisor;
    supervisor.common_name = "supervisor";
    supervisor.ip_addresses = {"127.0.0.1"};
    ASSERT_TRUE((*ca)->issue(supervisor, d / "supervisor.pem", d / "supervisor-key.pem"));
    security::CertificateRequest nameless;  // signed by the cluster CA, names no host
    nameless.common_name = "worker";
    ASSERT_TRUE((*ca)->issue(nameless, d / "nameless.pem", d / "nameless-key.pem"));
    auto other = security::CertificateAuthority::create("another CA");
    ASSERT_TRUE(other.is_ok());
    ASSERT_TRUE((*other)->issue(supervisor, d / "other.pem", d / "other-key.pem"));
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static security::TlsFiles files(const std::string& name) {
    const auto d = dir_->path();
    return security::TlsFiles{.cert = (d / (name + ".pem")).string(),
                              .key = (d / (name + "-key.pem")).string(),
                              .ca = (d / "ca.pem").string()};
  }

  void SetUp() override {
    a_ = start(handler_a_, tasks_of_a(), log_a_, files("supervisor"));
    b_ = start(handler_b_, tasks_of_b(), log_b_, files("supervisor"));
    address_a_ = a_->listen_address();
    address_b_ = b_->listen_address();
  }

  void connect_a_and_b() {
    a_->set_peers({PeerWorker{address_b_, tasks_of_b()}});
    b_->set_peers({PeerWorker{address_a_, tasks_of_a()}});
    ASSERT_TRUE(eventually([&] { return a_->stats().connects == 1 && b_->stats().connects == 1; }));
  }

  // `tls` unset: plaintext.
  std::unique_ptr<Transport> start(CountingHandler& handler, std::vector<TaskId> local,
                                   CapturedLog& log, std::optional<security::TlsFiles> tls,
                                   const std::string& topology = "t") {
    TransportOptions o = options_for(topology, std::move(local), log.logger);
    o.tls = std::move(tls);
    o.authenticate = true;
    o.secret = secret_;
    auto t = Transport::start(*plan_, std::move(o), &handler);
    EXPECT_TRUE(t.is_ok()) << t.status().message();
    return t.is_ok() ? std::move(*t) : nullptr;
  }

  // C, a third worker that B knows as a peer of the assignment, sends to B.
  void c_sends_to_b(std::optional<security::TlsFiles> tls) {
    c_ = start(handler_c_, {TaskId(1), TaskId(2)}, log_c_, std::move(tls));
    ASSERT_NE(c_, nullptr);
    b_->set_peers({PeerWorker{c_->listen_address(), {TaskId(1), TaskId(2)}},
                   PeerWorker{address_a_, {TaskId(kSrcTask)}}});
    c_->set_peers({PeerWorker{address_b_, tasks_of_b()}});
    ASSERT_TRUE(push_all(c_->sink(address_b_), *plan_, {3, 4}, 0, 10));
  }

  void expect_good_peer_still_served() {
    a_->set_peers({PeerWorker{address_b_, tasks_of_b()}});
    const std::uint64_t before = handler_b_.delivered.load();
    ASSERT_TRUE(push_all(a_->sink(address_b_), *plan_, {3, 4}, 0, 1000));
    ASSERT_TRUE(eventually([&] { return handler_b_.delivered.load() == before + 1000; }))
        << log_a_.all() << log_b_.all();
  }

  static TempDir* dir_;
  std::string secret_ = security::random_bytes(32);
  std::unique_ptr<worker::TopologyPlan> plan_ = make_test_plan();
  CapturedLog log_a_{"a"}, log_b_{"b"}, log_c_{"c"};
  CountingHandler handler_a_, handler_b_, handler_c_;
  std::unique_ptr<Transport> a_, b_, c_;
  WorkerAddress address_a_, address_b_;
};

TempDir* TlsWorkers::dir_ = nullptr;

TEST_F(TlsWorkers, ExchangeEnvelopesWithExactCounts) {
  connect_a_and_b();
  ASSERT_TRUE(push_all(a_->sink(address_b_), *plan_, {3, 4}, 0, 100000));
  ASSERT_TRUE(push_all(b_->sink(address_a_), *plan_, {1, 2}, 0, 100000));
  EXPECT_TRUE(eventually([&] { return handler_b_.delivered.load() == 100000; }));
  EXPECT_TRUE(eventually([&] { return handler_a_.delivered.load() == 100000; }));
  EXPECT_EQ(a_->stats().connections_refused + b_->stats().connections_refused, 0u);
  EXPECT_EQ(a_->stats().frames_rejected + b_->stats().frames_rejected, 0u);
}

// Receivers that stop while the sender is writing to them, round after
// round: each stop closes the connection with a TLS write in flight, whose
// bytes come back as undeliverable while the write may still be encrypting
// them. The sender keeps running and hands each envelope back once at most
// (one in flight may also have arrived: its tree fails and is replayed, at
// least once), and still delivers everything to a receiver that stays.
// Built with RSTORM_SANITIZE, a sender that freed the bytes of the write in
// flight shows here as a heap-use-after-free in SSL_write in most runs.
TEST_F(TlsWorkers, ReceiversStoppingMidWriteLeaveTheSenderRunningAndHandingEachEnvelopeBackOnce) {
  b_.reset();
  handler_a_.track_each = true;
  constexpr std::int64_t kPerRound = 20000;
  constexpr int kRounds = 80;
  for (int round = 0; round < kRounds; ++round) {
    CapturedLog log_r{"r"};
    CountingHandler handler_r;
    handler_r.track_each = true;
    auto r = start(handler_r, tasks_of_b(), log_r, files("supervisor"));
    ASSERT_NE(r, nullptr);
    const WorkerAddress address_r = r->listen_address();
    r->set_peers({PeerWorker{address_a_, tasks_of_a()}});
    a_->set_peers({PeerWorker{address_r, tasks_of_b()}});
    std::atomic<bool> pushed{false};
    std::thread pusher([&] {
      pushed = push_all(a_->sink(address_r), *plan_, {3, 4}, round * kPerRound, kPerRound);
    });
    // Stop the receiver as soon as tuples flow: the sender is mid-write.
    EXPECT_TRUE(eventually([&] { return handler_r.delivered.load() > 0; })) << log_a_.all();
    r.reset();
    // Unlisted, the peer's buffered envelopes (and later pushes) come back.
    a_->set_peers({});
    pusher.join();
    EXPECT_TRUE(pushed.load()) << "round " << round;
    std::lock_guard lock(handler_r.mutex);
    for (const auto& [seq, n] : handler_r.seen) {
      ASSERT_EQ(n, 1) << "round " << round << ": sequence " << seq << " delivered " << n
                      << " times";
    }
  }
  {
    std::lock_guard lock(handler_a_.mutex);
    for (const auto& [seq, n] : handler_a_.seen_undeliverable) {
      ASSERT_EQ(n, 1) << "sequence " << seq << " handed back " << n << " times";
    }
  }
  EXPECT_EQ(a_->stats().undeliverable, handler_a_.undelivered.load());
  // A receiver that stays gets every envelope of a last push.
  CapturedLog log_last{"last"};
  CountingHandler handler_last;
  auto last = start(handler_last, tasks_of_b(), log_last, files("supervisor"));
  ASSERT_NE(last, nullptr);
  last->set_peers({PeerWorker{address_a_, tasks_of_a()}});
  a_->set_peers({PeerWorker{last->listen_address(), tasks_of_b()}});
  ASSERT_TRUE(push_all(a_->sink(last->listen_address()), *plan_, {3, 4}, 0, 5000));
  EXPECT_TRUE(eventually([&] { return handler_last.delivered.load() == 5000; }))
      << log_a_.all() << log_last.all();
}

TEST_F(TlsWorkers, TheWireCarriesNoPlaintext) {
  // What a relay between two workers sees, with TLS on and (as a control that
  // the check can fail) off. The hello carries the topology id in the clear
  // when nothing encrypts it.
  const std::string topology = "payroll-topology-4f1c2a";
  auto sent_through_relay = [&](std::optional<security::TlsFiles> tls) {
    CapturedLog log_s{"s"}, log_r{"r"};
    CountingHandler handler_s, handler_r;
    auto sender = start(handler_s, tasks_of_a(), log_s, tls, topology);
    auto receiver = start(handler_r, tasks_of_b(), log_r, tls, topology);
    EXPECT_TRUE(sender && receiver);
    if (!sender || !receiver) return std::string();
    RecordingRelay relay(receiver->listen_address());
    sender->set_peers({PeerWorker{relay.address(), tasks_of_b()}});
    receiver->set_peers({PeerWorker{sender->listen_address(), tasks_of_a()}});
    EXPECT_TRUE(push_all(sender->sink(relay.address()), *plan_, {3, 4}, 0, 5000));
    EXPECT_TRUE(eventually([&] { return handler_r.delivered.load() == 5000; }))
        << log_s.all() << log_r.all();
    sender->stop();
    receiver->stop();
    return relay.sent();
  };
  const std::string plain = sent_through_relay(std::nullopt);
  ASSERT_NE(plain.find(topology), std::string::npos);
  const std::string encrypted = sent_through_relay(files("supervisor"));
  ASSERT_GT(encrypted.size(), 5000u);
  EXPECT_EQ(encrypted.find(topology), std::string::npos);
  EXPECT_EQ(encrypted[0], '\x16');  // a TLS handshake record ...
  EXPECT_EQ(encrypted[1], '\x03');  // ... of TLS 1.x
}

TEST_F(TlsWorkers, PlaintextPeerIsRefusedAndNamed) {
  connect_a_and_b();
  RawPeer raw(address_b_);
  const std::string local = raw.local();
  raw.hello("t", address_a_);
  EXPECT_TRUE(raw.closed_by_peer());
  ASSERT_TRUE(eventually([&] {
    return log_b_
               .lines_with("refused connection from " + local +
                           ": TLS handshake failed: "
                           "wrong version number (the other side does not speak TLS")
               .size() == 1;
  })) << log_b_.all();
  EXPECT_EQ(handler_b_.delivered.load(), 0u);
  EXPECT_GE(b_->stats().connections_refused, 1u);
  expect_good_peer_still_served();
}

TEST_F(TlsWorkers, PlaintextWorkerCannotSendToATlsWorker) {
  connect_a_and_b();
  c_sends_to_b(std::nullopt);
  ASSERT_TRUE(eventually([&] {
    return !log_b_.lines_with("TLS handshake failed: wrong version number").empty() &&
           !log_c_.lines_with("cannot connect to worker " + address_b_.to_string()).empty();
  })) << log_b_.all()
      << log_c_.all();
  EXPECT_EQ(handler_b_.delivered.load(), 0u);
  expect_good_peer_still_served();
}

TEST_F(TlsWorkers, TlsWorkerToAPlaintextWorkerIsRefusedOnBothSides) {
  CapturedLog log_p{"p"};
  CountingHandler handler_p;
  auto plain = start(handler_p, tasks_of_b(), log_p, std::nullopt);
  ASSERT_NE(plain, nullptr);
  const WorkerAddress p = plain->listen_address();
  plain->set_peers({PeerWorker{address_a_, tasks_of_a()}});
  a_->set_peers({PeerWorker{p, tasks_of_b()}});
  ASSERT_TRUE(push_all(a_->sink(p), *plan_, {3, 4}, 0, 10));
  ASSERT_TRUE(eventually([&] {
    return !log_p
                .lines_with(
                    "it speaks TLS, and storm.messaging.netty.tls.enable is off on this "
                    "worker")
                .empty() &&
           !log_a_.lines_with("cannot connect to worker " + p.to_string()).empty();
  })) << log_p.all()
      << log_a_.all();
  EXPECT_EQ(handler_p.delivered.load(), 0u);
  EXPECT_EQ(plain->stats().frames_rejected, 0u);  // refused, not mistaken for a huge frame
}

TEST_F(TlsWorkers, CertificateFromAnotherCaIsRefused) {
  connect_a_and_b();
  security::TlsFiles other = files("other");  // trusts the cluster CA, presents another's
  c_sends_to_b(other);
  ASSERT_TRUE(eventually([&] {
    return !log_b_
                .lines_with(
                    "TLS handshake failed: certificate verify failed (its certificate "
                    "is not signed by storm.messaging.netty.tls.ca.path's CA)")
                .empty();
  })) << log_b_.all();
  ASSERT_TRUE(eventually([&] {
    // In TLS 1.3 the sender learns only after its handshake that the receiver
    // refused its certificate: the refusal arrives as an alert on the first read.
    return !log_c_.lines_with("cannot connect to worker " + address_b_.to_string()).empty();
  })) << log_c_.all();
  EXPECT_EQ(handler_b_.delivered.load(), 0u);
  expect_good_peer_still_served();
}

TEST_F(TlsWorkers, ReceiverWhoseCertificateDoesNotNameItsHostIsRefused) {
  CapturedLog log_n{"n"};
  CountingHandler handler_n;
  auto nameless = start(handler_n, tasks_of_b(), log_n, files("nameless"));
  ASSERT_NE(nameless, nullptr);
  const WorkerAddress n = nameless->listen_address();
  nameless->set_peers({PeerWorker{address_a_, tasks_of_a()}});
  a_->set_peers({PeerWorker{n, tasks_of_b()}});
  ASSERT_TRUE(push_all(a_->sink(n), *plan_, {3, 4}, 0, 10));
  ASSERT_TRUE(eventually([&] {
    return !log_a_
                .lines_with("cannot connect to worker " + n.to_string() +
                            ": TLS handshake failed: certificate verify failed (the receiving "
                            "worker's certificate is not signed by")
                .empty();
  })) << log_a_.all();
  EXPECT_EQ(handler_n.delivered.load(), 0u);
}

TEST_F(TlsWorkers, UnreadableCertificateIsRefusedAtStartNamingTheFile) {
  security::TlsFiles missing = files("supervisor");
  missing.key = (dir_->path() / "no-such-key.pem").string();
  CapturedLog log{"x"};
  CountingHandler handler;
  TransportOptions o = options_for("t", tasks_of_a(), log.logger);
  o.tls = missing;
  auto t = Transport::start(*plan_, std::move(o), &handler);
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(t.status().message().find("cannot load the private key '" + missing.key + "'"),
            std::string::npos)
      << t.status().message();
}

}  // namespace
}  // namespace rstorm::transport
