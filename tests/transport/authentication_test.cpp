// Authentication on the data plane: workers that hold the topology's secret
// exchange tuples as before; a peer that cannot prove it holds the secret is
// refused before any tuple is read, and the refusal names it.
#include "worker/transport/authentication.hpp"

#include <gtest/gtest.h>

#include "common/poll.hpp"
#include "common/security/secrets.hpp"
#include "transport_test_support.hpp"
#include "worker/transport/codec.hpp"

namespace rstorm::transport {
namespace {

using rstorm::testing::eventually;
using namespace rstorm::transport::testing;

const std::string kSecret = security::random_bytes(32);

class AuthenticatedWorkers : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = start(handler_a_, tasks_of_a(), log_a_, kSecret);
    b_ = start(handler_b_, tasks_of_b(), log_b_, kSecret);
    address_a_ = a_->listen_address();
    address_b_ = b_->listen_address();
    a_->set_peers({PeerWorker{address_b_, tasks_of_b()}});
    b_->set_peers({PeerWorker{address_a_, tasks_of_a()}});
    ASSERT_TRUE(eventually([&] { return a_->stats().connects == 1 && b_->stats().connects == 1; }));
    refused_before_ = b_->stats().connections_refused;
  }

  // `secret` empty: authentication off.
  std::unique_ptr<Transport> start(CountingHandler& handler, std::vector<TaskId> local,
                                   CapturedLog& log, const std::string& secret) {
    TransportOptions o = options_for("t", std::move(local), log.logger);
    o.authenticate = !secret.empty();
    o.secret = secret;
    auto t = Transport::start(*plan_, std::move(o), &handler);
    EXPECT_TRUE(t.is_ok()) << t.status().message();
    return t.is_ok() ? std::move(*t) : nullptr;
  }

  ControlMessage decode(const std::string& body, FrameType want) {
    PlanIndex index(*plan_);
    FrameDecoder decoder(index, nullptr);
    worker::Batch out;
    ControlMessage c;
    auto type =
        decoder.decode(reinterpret_cast<const std::uint8_t*>(body.data()), body.size(), out, c);
    EXPECT_TRUE(type.is_ok());
    if (type.is_ok()) {
      EXPECT_EQ(static_cast<int>(*type), static_cast<int>(want));
    }
    return c;
  }

  // A tuple for task 3 (run by B), as a forger would send it.
  std::string forged_tuples() {
    PlanIndex index(*plan_);
    worker::Batch batch{data_envelope(*plan_, 3, 0)};
    FrameEncoder enc;
    EXPECT_EQ(enc.add_tuples(index, batch, 256), 1u);
    return std::string(reinterpret_cast<const char*>(enc.data()), enc.size());
  }

  void expect_good_peer_still_served() {
    const std::uint64_t before = handler_b_.delivered.load();
    ASSERT_TRUE(push_all(a_->sink(address_b_), *plan_, {3, 4}, 0, 1000));
    ASSERT_TRUE(eventually([&] { return handler_b_.delivered.load() == before + 1000; }));
  }

  std::unique_ptr<worker::TopologyPlan> plan_ = make_test_plan();
  CapturedLog log_a_{"a"}, log_b_{"b"}, log_c_{"c"};
  CountingHandler handler_a_, handler_b_, handler_c_;
  std::unique_ptr<Transport> a_, b_;
  WorkerAddress address_a_, address_b_;
  std::uint64_t refused_before_ = 0;
};

TEST_F(AuthenticatedWorkers, ExchangeEnvelopesWithExactCounts) {
  ASSERT_TRUE(push_all(a_->sink(address_b_), *plan_, {3, 4}, 0, 100000));
  ASSERT_TRUE(push_all(b_->sink(address_a_), *plan_, {1, 2}, 0, 100000));
  EXPECT_TRUE(eventually([&] { return handler_b_.delivered.load() == 100000; }));
  EXPECT_TRUE(eventually([&] { return handler_a_.delivered.load() == 100000; }));
  EXPECT_EQ(b_->stats().connections_refused, refused_before_);
}

TEST_F(AuthenticatedWorkers, HelloWithoutCredentialsIsRefusedAndItsTuplesAreNeverRead) {
  RawPeer raw(address_b_);
  const std::string local = raw.local();
  raw.hello("t", address_a_);  // claims to be A, which is in the assignment
  raw.send(forged_tuples());
  const std::string body = raw.read_frame();
  ASSERT_NE(body, "");
  EXPECT_EQ(decode(body, FrameType::kRefused).reason,
            "it presents no credentials for topology 't' (storm.messaging.netty.authentication "
            "is on here)");
  EXPECT_TRUE(raw.closed_by_peer());
  const std::string expected = "refused connection from " + local + " claiming to be worker " +
                               address_a_.to_string() + ": it presents no credentials";
  ASSERT_TRUE(eventually([&] { return log_b_.lines_with(expected).size() == 1; })) << log_b_.all();
  EXPECT_EQ(handler_b_.delivered.load(), 0u);
  EXPECT_EQ(b_->stats().connections_refused, refused_before_ + 1);
  expect_good_peer_still_served();
}

TEST_F(AuthenticatedWorkers, WrongProofIsRefusedAndItsTuplesAreNeverRead) {
  RawPeer raw(address_b_);
  const std::string local = raw.local();
  const std::string nonce = security::random_bytes(kNonceBytes);
  raw.hello("t", address_a_, nonce);
  const ControlMessage challenge = decode(raw.read_frame(), FrameType::kChallenge);
  // The receiver proved it holds the secret ...
  EXPECT_EQ(challenge.proof, receiver_proof(kSecret, "t", nonce, challenge.nonce));
  // ... the forger, who does not, guesses.
  FrameEncoder proof;
  proof.add_proof(sender_proof(security::random_bytes(32), "t", nonce, challenge.nonce));
  raw.send(proof);
  raw.send(forged_tuples());
  const std::string body = raw.read_frame();
  ASSERT_NE(body, "");
  EXPECT_EQ(decode(body, FrameType::kRefused).reason,
            "it does not hold topology 't''s credentials (its proof is wrong)");
  EXPECT_TRUE(raw.closed_by_peer());
  ASSERT_TRUE(eventually([&] {
    return log_b_.lines_with("refused connection from " + local).size() == 1;
  })) << log_b_.all();
  EXPECT_EQ(handler_b_.delivered.load(), 0u);
  expect_good_peer_still_served();
}

TEST_F(AuthenticatedWorkers, ProofFromAnotherConnectionCannotBeReplayed) {
  // A proof is bound to both nonces: one seen on the wire is useless later.
  RawPeer first(address_b_);
  const std::string nonce = security::random_bytes(kNonceBytes);
  first.hello("t", address_a_, nonce);
  const ControlMessage c1 = decode(first.read_frame(), FrameType::kChallenge);
  const std::string sniffed = sender_proof(kSecret, "t", nonce, c1.nonce);
  first.close();
  RawPeer second(address_b_);
  second.hello("t", address_a_, nonce);  // the same sender nonce, replayed
  const ControlMessage c2 = decode(second.read_frame(), FrameType::kChallenge);
  EXPECT_NE(c1.nonce, c2.nonce);
  FrameEncoder proof;
  proof.add_proof(sniffed);
  second.send(proof);
  second.send(forged_tuples());
  EXPECT_EQ(decode(second.read_frame(), FrameType::kRefused).reason,
            "it does not hold topology 't''s credentials (its proof is wrong)");
  EXPECT_EQ(handler_b_.delivered.load(), 0u);
}

TEST_F(AuthenticatedWorkers, TuplesInsteadOfAProofAreRefused) {
  RawPeer raw(address_b_);
  raw.hello("t", address_a_, security::random_bytes(kNonceBytes));
  decode(raw.read_frame(), FrameType::kChallenge);
  raw.send(forged_tuples());
  EXPECT_EQ(decode(raw.read_frame(), FrameType::kRefused).reason,
            "it sent a message before proving it holds topology 't''s credentials");
  EXPECT_TRUE(raw.closed_by_peer());
  EXPECT_EQ(handler_b_.delivered.load(), 0u);
  expect_good_peer_still_served();
}

TEST_F(AuthenticatedWorkers, WorkerWithAnotherSecretIsNotSentTuplesAndSendsNone) {
  // C runs A's tasks with the wrong secret, at an address B accepts.
  auto c = start(handler_c_, tasks_of_a(), log_c_, security::random_bytes(32));
  ASSERT_TRUE(c);
  const WorkerAddress address_c = c->listen_address();
  b_->set_peers({PeerWorker{address_a_, tasks_of_a()}, PeerWorker{address_c, tasks_of_a()}});
  c->set_peers({PeerWorker{address_b_, tasks_of_b()}});
  worker::Batch batch{data_envelope(*plan_, 3, 0)};
  (void)c->sink(address_b_)->try_push(batch);
  // C checks B's proof and finds it wrong: it names B and sends nothing.
  ASSERT_TRUE(eventually([&] {
    return log_c_
               .lines_with("cannot connect to worker " + address_b_.to_string() +
                           ": it does not hold topology 't''s credentials")
               .size() >= 1;
  })) << log_c_.all();
  EXPECT_EQ(handler_b_.delivered.load(), 0u);
  expect_good_peer_still_served();
}

TEST_F(AuthenticatedWorkers, ReceiverWithoutAuthenticationIsNotSentTuples) {
  auto open = start(handler_c_, tasks_of_b(), log_c_, "");
  ASSERT_TRUE(open);
  const WorkerAddress address_open = open->listen_address();
  open->set_peers({PeerWorker{address_a_, tasks_of_a()}});
  a_->set_peers({PeerWorker{address_b_, tasks_of_b()}, PeerWorker{address_open, tasks_of_b()}});
  worker::Batch batch{data_envelope(*plan_, 3, 0)};
  (void)a_->sink(address_open)->try_push(batch);
  ASSERT_TRUE(eventually([&] {
    return log_a_
               .lines_with("cannot connect to worker " + address_open.to_string() +
                           ": it accepted the connection without proving")
               .size() >= 1;
  })) << log_a_.all();
  EXPECT_EQ(handler_c_.delivered.load(), 0u);
}

}  // namespace
}  // namespace rstorm::transport
