// A real nimbus Thrift server in secure mode (mutual TLS on its port, the
// simple-acl authorizer) over the in-memory stores, reached by the real
// NimbusClient with certificates from a throw-away CA: who gets in, and what
// each user may do to another's topology.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSSLSocket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "common/blob_store.hpp"
#include "common/in_memory_coordination.hpp"
#include "common/key_value_store.hpp"
#include "common/security/certificates.hpp"
#include "common/security/secrets.hpp"
#include "common/thrift/codec.hpp"
#include "nimbus/nimbus.hpp"
#include "nimbus/nimbus_client.hpp"
#include "nimbus/nimbus_server.hpp"
#include "rstorm_thrift/Nimbus.h"
#include "tests/common/captured_log.hpp"
#include "tests/common/poll.hpp"
#include "tests/common/temp_dir.hpp"

namespace rstorm::nimbus {
namespace {

using security::TlsFiles;

thrift::ComponentDef component(const std::string& id, bool spout) {
  thrift::ComponentDef c;
  c.id = id;
  c.kind = spout ? thrift::ComponentKind::SPOUT : thrift::ComponentKind::BOLT;
  thrift::StreamDef s;
  s.name = "default";
  s.fields = {"word"};
  c.streams.push_back(s);
  c.parallelism = 1;
  if (!spout) {
    thrift::InputDef in;
    in.component = "words";
    in.stream = "default";
    in.grouping.type = thrift::GroupingType::SHUFFLE;
    c.inputs.push_back(in);
  }
  return c;
}

thrift::TopologyStructure structure() {
  thrift::TopologyStructure s;
  s.components = {component("words", true), component("count", false)};
  return s;
}

class SecureNimbusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ca = security::CertificateAuthority::create("test CA");
    ASSERT_TRUE(ca) << ca.status().to_string();
    ASSERT_TRUE((*ca)->write_certificate(dir_.path() / "ca.pem"));
    security::CertificateRequest server{"nimbus", {"localhost"}, {"127.0.0.1"}};
    ASSERT_TRUE((*ca)->issue(server, dir_.path() / "nimbus.pem", dir_.path() / "nimbus-key.pem"));
    for (const char* user : {"alice", "bob", "carol", "dave", "admin", "supervisor", "ui"}) {
      security::CertificateRequest r;
      r.common_name = user;
      ASSERT_TRUE((*ca)->issue(r, dir_.path() / (std::string(user) + ".pem"),
                               dir_.path() / (std::string(user) + "-key.pem")));
    }
    // Another CA, trusted by nobody here, issues an "alice" too.
    auto other = security::CertificateAuthority::create("other CA");
    ASSERT_TRUE(other);
    ASSERT_TRUE((*other)->write_certificate(dir_.path() / "other-ca.pem"));
    security::CertificateRequest mallory;
    mallory.common_name = "alice";
    ASSERT_TRUE(
        (*other)->issue(mallory, dir_.path() / "forged.pem", dir_.path() / "forged-key.pem"));

    store_ = service_->connect();
    blobs_ = std::make_unique<BlobStore>(kv_, BlobStore::Options{});
    NimbusOptions o;
    o.root = "/rstorm";
    o.monitor_period = std::chrono::milliseconds(200);
    nimbus_ = std::make_unique<Nimbus>(*store_, *blobs_, o, Logger::null());
    NimbusServer::Options so;
    so.host = "127.0.0.1";
    so.port = 0;
    so.plaintext = true;  // also plaintext, to show that it grants nothing
    so.tls = TlsFiles{path("nimbus.pem"), path("nimbus-key.pem"), path("ca.pem")};
    so.tls_port = 0;
    so.authorizer.enabled = true;
    so.authorizer.admins = {"admin"};
    so.authorizer.supervisor_users = {"supervisor"};
    // Carol and Dave are in groups (the fixed mapping; tests/security's
    // authorizer_test reads the system's groups too).
    so.authorizer.groups = security::GroupMapping::fixed({"carol: sales", "dave: auditors"});
    // rstorm-ui may act for anyone, from this host only.
    so.authorizer.daemon_users = {"ui"};
    so.authorizer.impersonation.emplace(
        security::Authorizer::parse_impersonation_rule("ui: users=*; hosts=127.0.0.1"));
    server_ = std::make_unique<NimbusServer>(*nimbus_, so, Logger::null());
    ASSERT_TRUE(server_->start());
    ASSERT_TRUE(nimbus_->start(server_->port(), server_->tls_port()));
    ASSERT_TRUE(rstorm::testing::eventually([&] { return nimbus_->is_leader(); }));
  }
  void TearDown() override {
    if (nimbus_) nimbus_->stop();
    if (server_) server_->stop();
  }

  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }
  TlsFiles files_of(const std::string& user, const std::string& ca = "ca.pem") const {
    return TlsFiles{path(user + ".pem"), path(user + "-key.pem"), path(ca)};
  }

  Result<std::unique_ptr<NimbusClient>> connect_as(const std::string& user) {
    NimbusClient::Options o;
    o.seeds = {{"127.0.0.1", server_->tls_port()}};
    o.timeout = std::chrono::milliseconds(10000);
    o.tls = files_of(user);
    return NimbusClient::connect(o);
  }
  // `user`'s certificate, making its calls for `principal`.
  Result<std::unique_ptr<NimbusClient>> connect_acting(const std::string& user,
                                                       const std::string& principal) {
    NimbusClient::Options o;
    o.seeds = {{"127.0.0.1", server_->tls_port()}};
    o.timeout = std::chrono::milliseconds(10000);
    o.tls = files_of(user);
    o.act_as = principal;
    return NimbusClient::connect(o);
  }
  std::unique_ptr<NimbusClient> as(const std::string& user) {
    auto client = connect_as(user);
    EXPECT_TRUE(client) << client.status().to_string();
    return client ? std::move(*client) : nullptr;
  }

  // Alice's word count, with `yaml` config entries (topology.users ...).
  std::string submit_as_alice(std::map<std::string, std::string> yaml = {}) {
    auto alice = as("alice");
    auto uploaded = alice->upload_blob("wc-code", "pretend this is an ELF library");
    EXPECT_TRUE(uploaded) << uploaded.status().to_string();
    std::map<std::string, thrift::ConfigEntry> config;
    for (auto& [k, v] : yaml) {
      config[k].value_yaml = v;
      config[k].origin = "test";
    }
    auto id = alice->submit_topology("wc", structure(), config, "wc-code");
    EXPECT_TRUE(id) << id.status().to_string();
    return id ? *id : std::string();
  }

  rstorm::testing::TempDir dir_;
  std::shared_ptr<InMemoryCoordinationService> service_ = InMemoryCoordinationService::create();
  InMemoryKeyValueStore kv_;
  std::unique_ptr<CoordinationStore> store_;
  std::unique_ptr<BlobStore> blobs_;
  std::unique_ptr<Nimbus> nimbus_;
  std::unique_ptr<NimbusServer> server_;
};

TEST_F(SecureNimbusTest, ClientWithACertificateOfTheCaIsServedAsItsCommonName) {
  const std::string id = submit_as_alice();
  auto acl = nimbus_->topology_acl(id);
  ASSERT_TRUE(acl);
  EXPECT_EQ(acl->owner, "alice");
  auto info = as("alice")->topology_info("wc");
  ASSERT_TRUE(info) << info.status().to_string();
  EXPECT_EQ(info->summary.id, id);
}

TEST_F(SecureNimbusTest, PlaintextClientOnTheTlsPortIsToldThePortSpeaksTls) {
  NimbusClient::Options o;
  o.seeds = {{"127.0.0.1", server_->tls_port()}};
  o.timeout = std::chrono::milliseconds(10000);
  auto client = NimbusClient::connect(o);
  ASSERT_FALSE(client);
  EXPECT_NE(client.status().message().find("TLS"), std::string::npos) << client.status().message();
}

TEST_F(SecureNimbusTest, TlsClientOnThePlaintextPortIsToldItDoesNotSpeakTls) {
  NimbusClient::Options o;
  o.seeds = {{"127.0.0.1", server_->port()}};
  o.timeout = std::chrono::milliseconds(10000);
  o.tls = files_of("alice");
  auto client = NimbusClient::connect(o);
  ASSERT_FALSE(client);
  EXPECT_NE(client.status().message().find("does not speak TLS"), std::string::npos)
      << client.status().message();
}

// The refusal names the client's certificate, never the server's: with TLS
// 1.3 the server's refusal races the client's own check of the server, which
// once blamed the server's certificate about a third of the time (so, many
// tries).
TEST_F(SecureNimbusTest, CertificateFromAnotherCaIsRefused) {
  NimbusClient::Options o;
  o.seeds = {{"127.0.0.1", server_->tls_port()}};
  o.timeout = std::chrono::milliseconds(10000);
  o.tls = TlsFiles{path("forged.pem"), path("forged-key.pem"), path("ca.pem")};
  for (int attempt = 0; attempt < 30; ++attempt) {
    std::string message;
    auto client = NimbusClient::connect(o);
    if (client) {
      // The client's side of the handshake may end before the server has
      // checked its certificate; the refusal then comes with the first call.
      auto list = (*client)->cluster_info();
      ASSERT_FALSE(list);
      message = list.status().message();
    } else {
      message = client.status().message();
    }
    EXPECT_NE(message.find("client's certificate"), std::string::npos) << attempt << ": " << message;
    EXPECT_EQ(message.find("server's certificate"), std::string::npos) << attempt << ": " << message;
  }
}

TEST_F(SecureNimbusTest, ServerWhoseCertificateIsNotFromTheClientsCaIsRefused) {
  NimbusClient::Options o;
  o.seeds = {{"127.0.0.1", server_->tls_port()}};
  o.timeout = std::chrono::milliseconds(10000);
  o.tls = files_of("alice", "other-ca.pem");
  auto client = NimbusClient::connect(o);
  ASSERT_FALSE(client);
  EXPECT_NE(client.status().message().find("certificate"), std::string::npos)
      << client.status().message();
}

// A raw Thrift TLS client that presents no certificate; what getClusterInfo
// did: "" or the error.
std::string call_without_certificate(int port, const std::string& ca) {
  using namespace apache::thrift;
  try {
    auto factory = std::make_shared<transport::TSSLSocketFactory>(transport::SSLTLS);
    factory->loadTrustedCertificates(ca.c_str());
    factory->authenticate(true);
    auto socket = factory->createSocket("127.0.0.1", port);
    socket->setRecvTimeout(10000);
    auto framed = std::make_shared<transport::TFramedTransport>(socket);
    auto protocol = std::make_shared<protocol::TBinaryProtocol>(framed);
    thrift::NimbusClient client(protocol);
    framed->open();
    thrift::ClusterSummary out;
    client.getClusterInfo(out);
    return "";
  } catch (const std::exception& e) {
    return std::string("error: ") + e.what();
  }
}

// Whether a TLS handshake capped at `max_version`, presenting `cert`,
// succeeds against the port.
bool handshake_at_most(int port, int max_version, const std::string& cert, const std::string& key) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return false;
  }
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_security_level(ctx, 0);  // let this client really offer old versions
  SSL_CTX_set_min_proto_version(ctx, TLS1_VERSION);
  SSL_CTX_set_max_proto_version(ctx, max_version);
  SSL_CTX_use_certificate_file(ctx, cert.c_str(), SSL_FILETYPE_PEM);
  SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM);
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  const bool ok = SSL_connect(ssl) == 1;
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  ::close(fd);
  return ok;
}

TEST(ThriftOutput, APortCheckIsLoggedAtDebugAndAFailedHandshakeAsAWarning) {
  testing::CapturedLog log;
  log.logger->set_level(spdlog::level::debug);
  const Logger logger(log.logger);
  log_thrift_output(logger,
                    "Wed Dec  2 06:55:16 2026 TConnectedClient died: TLS handshake with "
                    "127.0.0.1:38424 failed: SSL_accept: unexpected eof while reading");
  log_thrift_output(logger,
                    "Wed Dec  2 06:55:17 2026 TConnectedClient died: TLS handshake with "
                    "127.0.0.1:38426 failed: SSL_accept: wrong version number");
  log_thrift_output(logger, "Wed Dec  2 06:55:17 2026 TSSLSocket::close SSL_shutdown: x");
  EXPECT_EQ(log.lines_with("debug connection closed before its TLS handshake (a port check?): "
                           "TLS handshake with 127.0.0.1:38424")
                .size(),
            1u)
      << log.all();
  EXPECT_EQ(log.lines_with("warning connection ended: TLS handshake with 127.0.0.1:38426 failed: "
                           "SSL_accept: wrong version number")
                .size(),
            1u)
      << log.all();
  EXPECT_TRUE(log.lines_with("SSL_shutdown").empty()) << log.all();
}

TEST_F(SecureNimbusTest, ProtocolsBelowTls12AreRefused) {
  const std::string cert = path("alice.pem");
  const std::string key = path("alice-key.pem");
  EXPECT_TRUE(handshake_at_most(server_->tls_port(), TLS1_2_VERSION, cert, key));
  EXPECT_FALSE(handshake_at_most(server_->tls_port(), TLS1_1_VERSION, cert, key));
  EXPECT_FALSE(handshake_at_most(server_->tls_port(), TLS1_VERSION, cert, key));
}

TEST_F(SecureNimbusTest, ClientWithoutACertificateIsRefused) {
  const std::string result = call_without_certificate(server_->tls_port(), path("ca.pem"));
  EXPECT_NE(result.find("no client certificate"), std::string::npos)
      << "a client without a certificate was served: " << result;
}

// ---- worker tokens

// A worker's client: no certificate, the CA, and `token`.
Result<std::unique_ptr<NimbusClient>> connect_as_worker(int port, const std::string& ca,
                                                        const thrift::WorkerToken& token) {
  NimbusClient::Options o;
  o.seeds = {{"127.0.0.1", port}};
  o.timeout = std::chrono::milliseconds(10000);
  o.tls = TlsFiles{"", "", ca};
  o.worker_token = token;
  return NimbusClient::connect(o);
}

TEST_F(SecureNimbusTest, SupervisorsGetAWorkerTokenWithTheSecretUsersDoNot) {
  const std::string id = submit_as_alice();
  auto for_supervisor = as("supervisor")->topology_info(id);
  ASSERT_TRUE(for_supervisor) << for_supervisor.status().to_string();
  ASSERT_TRUE(for_supervisor->__isset.worker_token);
  auto info = read_worker_token_info(for_supervisor->worker_token);
  ASSERT_TRUE(info) << info.status().to_string();
  EXPECT_EQ(info->topology_id, id);
  EXPECT_EQ(info->user, "alice");
  EXPECT_EQ(info->expiration_ms - info->issued_ms, 24LL * 3600 * 1000);  // the default life
  EXPECT_EQ(for_supervisor->worker_token.signature.size(), 32u);         // HMAC-SHA256
  auto for_alice = as("alice")->topology_info(id);
  ASSERT_TRUE(for_alice);
  EXPECT_FALSE(for_alice->__isset.worker_token);
  EXPECT_TRUE(for_alice->secret.empty());
}

TEST_F(SecureNimbusTest, AWorkerTokenLetsAWorkerDescribeItsTopologyAndFetchItsCodeOnly) {
  const std::string id = submit_as_alice();
  auto bob = as("bob");
  ASSERT_TRUE(bob->upload_blob("bobs-code", "bob's library"));
  auto bobs = bob->submit_topology("bobs", structure(), {}, "bobs-code");
  ASSERT_TRUE(bobs) << bobs.status().to_string();
  auto info = as("supervisor")->topology_info(id);
  ASSERT_TRUE(info && info->__isset.worker_token);

  auto worker = connect_as_worker(server_->tls_port(), path("ca.pem"), info->worker_token);
  ASSERT_TRUE(worker) << worker.status().to_string();
  auto own = (*worker)->topology_info(id);
  ASSERT_TRUE(own) << own.status().to_string();
  EXPECT_EQ(own->summary.name, "wc");
  EXPECT_TRUE(own->secret.empty());  // workers get theirs from the supervisor
  EXPECT_FALSE(own->__isset.worker_token);
  EXPECT_TRUE((*worker)->placement(id));
  auto code = (*worker)->download_blob("wc-code");
  ASSERT_TRUE(code) << code.status().to_string();
  EXPECT_EQ(*code, "pretend this is an ELF library");

  auto kill = (*worker)->kill_topology("wc", 0);
  EXPECT_EQ(kill.code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(kill.message().find("a worker of topology '" + id + "' may not kill topology 'wc'"),
            std::string::npos)
      << kill.to_string();
  auto other = (*worker)->topology_info("bobs");
  EXPECT_EQ(other.code(), ErrorCode::kPermissionDenied) << other.status().to_string();
  EXPECT_NE(other.status().message().find("may not describe topology 'bobs'"), std::string::npos)
      << other.status().to_string();
  EXPECT_EQ((*worker)->download_blob("bobs-code").code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ((*worker)->cluster_info().code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ((*worker)->upload_blob("evil", "x").code(), ErrorCode::kPermissionDenied);
  // Nor may a worker act for a user.
  NimbusClient::Options acting;
  acting.seeds = {{"127.0.0.1", server_->tls_port()}};
  acting.tls = TlsFiles{"", "", path("ca.pem")};
  acting.worker_token = info->worker_token;
  acting.act_as = "alice";
  EXPECT_EQ(NimbusClient::connect(acting).code(), ErrorCode::kPermissionDenied);
  EXPECT_TRUE(as("alice")->topology_info(id));  // nothing changed for alice
}

TEST_F(SecureNimbusTest, ForgedExpiredAndUnknownKeyWorkerTokensAreRefused) {
  const std::string id = submit_as_alice();
  auto supervisor = as("supervisor");
  auto info = supervisor->topology_info(id);
  ASSERT_TRUE(info && info->__isset.worker_token);
  const thrift::WorkerToken genuine = info->worker_token;
  const auto refused = [&](const thrift::WorkerToken& token) {
    auto client = connect_as_worker(server_->tls_port(), path("ca.pem"), token);
    EXPECT_FALSE(client) << "a bad worker token was accepted";
    if (client) return std::string();
    EXPECT_EQ(client.code(), ErrorCode::kPermissionDenied) << client.status().to_string();
    return client.status().message();
  };

  thrift::WorkerToken flipped = genuine;
  flipped.signature[5] = static_cast<char>(flipped.signature[5] ^ 1);
  EXPECT_NE(refused(flipped).find("worker token for topology '" + id +
                                  "' is forged or damaged (its signature does not match)"),
            std::string::npos);

  // Another topology's id under the genuine signature.
  auto claims = read_worker_token_info(genuine);
  ASSERT_TRUE(claims);
  thrift::WorkerTokenInfo other = *claims;
  other.topology_id = "bobs-1";
  thrift::WorkerToken moved = genuine;
  moved.info = encode_thrift(other);
  EXPECT_NE(refused(moved).find("'bobs-1' is forged or damaged"), std::string::npos);

  // Signed with nimbus's real key, but expired; and a key it never had.
  auto key_node = store_->get("/rstorm/worker-token-keys/0000000001");
  ASSERT_TRUE(key_node) << key_node.status().to_string();
  const std::string stored = key_node->data;
  auto key = security::from_hex(stored.substr(stored.find(' ') + 1));
  ASSERT_TRUE(key && key->size() == 32u);
  thrift::WorkerTokenInfo old = *claims;
  old.issued_ms -= 48LL * 3600 * 1000;
  old.expiration_ms = old.issued_ms + 24LL * 3600 * 1000;
  EXPECT_NE(refused(sign_worker_token(old, *key)).find("expired at 20"), std::string::npos);
  thrift::WorkerTokenInfo unknown = *claims;
  unknown.key_version = 99;
  EXPECT_NE(
      refused(sign_worker_token(unknown, *key)).find("key version 99, which nimbus does not have"),
      std::string::npos);
  thrift::WorkerToken garbage;
  garbage.info = "not thrift";
  garbage.signature = std::string(32, 'x');
  EXPECT_NE(refused(garbage).find("worker token cannot be read"), std::string::npos);

  // The genuine one still works, and stops working once its topology is gone.
  ASSERT_TRUE(connect_as_worker(server_->tls_port(), path("ca.pem"), genuine));
  ASSERT_TRUE(as("alice")->kill_topology("wc", 0));
  ASSERT_TRUE(rstorm::testing::eventually([&] { return !nimbus_->topology_acl(id); }));
  EXPECT_NE(refused(genuine).find("which is not running any more"), std::string::npos);
}

TEST_F(SecureNimbusTest, WorkerTokensAreRefusedOnThePlaintextPort) {
  const std::string id = submit_as_alice();
  auto info = as("supervisor")->topology_info(id);
  ASSERT_TRUE(info && info->__isset.worker_token);
  NimbusClient::Options o;
  o.seeds = {{"127.0.0.1", server_->port()}};
  o.follow_leader = false;
  o.worker_token = info->worker_token;
  auto client = NimbusClient::connect(o);
  ASSERT_FALSE(client);
  EXPECT_NE(client.status().message().find("worker tokens are accepted on nimbus's TLS port only"),
            std::string::npos)
      << client.status().message();
}

TEST_F(SecureNimbusTest, PlaintextPortServesNothingButTheLeader) {
  const std::string id = submit_as_alice();
  NimbusClient::Options o;
  o.seeds = {{"127.0.0.1", server_->port()}};
  o.follow_leader = false;
  auto client = NimbusClient::connect(o);
  ASSERT_TRUE(client) << client.status().to_string();
  EXPECT_TRUE((*client)->leader());
  auto list = (*client)->cluster_info();
  ASSERT_FALSE(list);
  EXPECT_EQ(list.code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(list.status().message().find("unauthenticated"), std::string::npos)
      << list.status().message();
  EXPECT_EQ((*client)->kill_topology("wc", 0).code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ((*client)->download_blob("wc-code").code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ((*client)->upload_blob("evil", "x").code(), ErrorCode::kPermissionDenied);
  EXPECT_TRUE(nimbus_->topology_acl(id));
}

TEST_F(SecureNimbusTest, BobMayNotTouchAlicesTopologyButAnAdminMay) {
  const std::string id = submit_as_alice();
  auto bob = as("bob");
  Status kill = bob->kill_topology("wc", 0);
  EXPECT_EQ(kill.code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(kill.message().find("user 'bob' may not kill topology 'wc' (owner 'alice')"),
            std::string::npos)
      << kill.message();
  thrift::RebalanceOptions rebalance;
  rebalance.__set_num_workers(2);
  EXPECT_EQ(bob->rebalance("wc", rebalance).code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(bob->deactivate("wc").code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(bob->topology_info("wc").code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(bob->placement(id).code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(bob->download_blob("wc-code").code(), ErrorCode::kPermissionDenied);
  // Nor replace its code, nor plant a structure blob.
  auto replaced = bob->upload_blob("wc-code", "evil code");
  EXPECT_EQ(replaced.code(), ErrorCode::kPermissionDenied) << replaced.status().to_string();
  EXPECT_EQ(bob->upload_blob(id + ".topology", "x").code(), ErrorCode::kPermissionDenied);
  // Nor heartbeat as a supervisor.
  thrift::SupervisorHeartbeat beat;
  beat.info.id = "fake";
  beat.info.host = "127.0.0.1";
  EXPECT_EQ(bob->supervisor_heartbeat(beat).code(), ErrorCode::kPermissionDenied);
  // Bob may still submit his own, and list.
  EXPECT_TRUE(bob->cluster_info());
  auto admin = as("admin");
  auto code = admin->download_blob("wc-code");
  ASSERT_TRUE(code) << code.status().to_string();
  EXPECT_EQ(*code, "pretend this is an ELF library");
  EXPECT_TRUE(admin->kill_topology("wc", 0));
}

TEST_F(SecureNimbusTest, UiActsForTheUserItNamesWithThatUsersRightsOnly) {
  const std::string id = submit_as_alice();
  // rstorm-ui for bob: bob's rights, not rstorm-ui's (a daemon that may describe).
  auto for_bob = connect_acting("ui", "bob");
  ASSERT_TRUE(for_bob) << for_bob.status().to_string();
  Status kill = (*for_bob)->kill_topology("wc", 0);
  EXPECT_EQ(kill.code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(kill.message().find("user 'bob' may not kill topology 'wc' (owner 'alice')"),
            std::string::npos)
      << kill.message();
  EXPECT_EQ((*for_bob)->topology_info("wc").code(), ErrorCode::kPermissionDenied);
  EXPECT_TRUE((*for_bob)->cluster_info());
  // What bob submits through it is bob's.
  ASSERT_TRUE((*for_bob)->upload_blob("bob-code", "bob's library"));
  auto bobs = (*for_bob)->submit_topology("bobs", structure(), {}, "bob-code");
  ASSERT_TRUE(bobs) << bobs.status().to_string();
  auto acl = nimbus_->topology_acl(*bobs);
  ASSERT_TRUE(acl);
  EXPECT_EQ(acl->owner, "bob");
  // rstorm-ui for alice: alice's rights.
  auto for_alice = connect_acting("ui", "alice");
  ASSERT_TRUE(for_alice) << for_alice.status().to_string();
  auto info = (*for_alice)->topology_info(id);
  ASSERT_TRUE(info) << info.status().to_string();
  EXPECT_TRUE(info->secret.empty());  // alice is no supervisor
  EXPECT_TRUE((*for_alice)->kill_topology("wc", 0));
}

TEST_F(SecureNimbusTest, NoOneElseMayActForAnotherUser) {
  submit_as_alice();
  auto bob = connect_acting("bob", "alice");
  ASSERT_FALSE(bob);
  EXPECT_EQ(bob.code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(bob.status().message().find(
                "user 'bob' may not act for user 'alice': no nimbus.impersonation.acl rule for "
                "'bob'"),
            std::string::npos)
      << bob.status().message();
  // Nor a client without a certificate, on the plaintext port.
  NimbusClient::Options o;
  o.seeds = {{"127.0.0.1", server_->port()}};
  o.follow_leader = false;
  o.act_as = "alice";
  auto anonymous = NimbusClient::connect(o);
  ASSERT_FALSE(anonymous);
  EXPECT_NE(anonymous.status().message().find("an unauthenticated client may not act for user "
                                              "'alice'"),
            std::string::npos)
      << anonymous.status().message();
  // Acting as oneself needs no rule.
  auto alice = connect_acting("alice", "alice");
  ASSERT_TRUE(alice) << alice.status().to_string();
  EXPECT_TRUE((*alice)->kill_topology("wc", 0));
}

TEST_F(SecureNimbusTest, TopologyUsersMayChangeItReadOnlyUsersMayOnlyDescribeIt) {
  submit_as_alice({{"topology.users", "[carol]"}, {"topology.readonly.users", "[dave]"}});
  auto dave = as("dave");
  EXPECT_TRUE(dave->topology_info("wc"));
  EXPECT_EQ(dave->kill_topology("wc", 0).code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(dave->download_blob("wc-code").code(), ErrorCode::kPermissionDenied);
  auto carol = as("carol");
  EXPECT_TRUE(carol->topology_info("wc"));
  auto code = carol->download_blob("wc-code");
  EXPECT_TRUE(code) << code.status().to_string();
  // Allowed (no supervisor here, so it fails for another reason).
  EXPECT_NE(carol->deactivate("wc").code(), ErrorCode::kPermissionDenied);
  EXPECT_TRUE(carol->kill_topology("wc", 0));
}

TEST_F(SecureNimbusTest, TopologyGroupsGrantTheirMembersWhatTheirUsersKeysGrant) {
  submit_as_alice({{"topology.groups", "[sales]"}, {"topology.readonly.groups", "[auditors]"}});
  auto dave = as("dave");  // in auditors
  EXPECT_TRUE(dave->topology_info("wc"));
  Status denied = dave->kill_topology("wc", 0);
  EXPECT_EQ(denied.code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(denied.message().find("user 'dave' may not kill topology 'wc' (owner 'alice'): not "
                                  "in its topology.users or topology.groups"),
            std::string::npos)
      << denied.message();
  auto bob = as("bob");  // in no group
  EXPECT_EQ(bob->topology_info("wc").code(), ErrorCode::kPermissionDenied);
  auto carol = as("carol");  // in sales
  EXPECT_TRUE(carol->topology_info("wc"));
  EXPECT_TRUE(carol->kill_topology("wc", 0));
}

TEST_F(SecureNimbusTest, SupervisorsHeartbeatAndReadCode) {
  submit_as_alice();
  auto supervisor = as("supervisor");
  auto code = supervisor->download_blob("wc-code");
  ASSERT_TRUE(code) << code.status().to_string();
  EXPECT_TRUE(supervisor->topology_info("wc"));
  EXPECT_EQ(supervisor->kill_topology("wc", 0).code(), ErrorCode::kPermissionDenied);
}

}  // namespace
}  // namespace rstorm::nimbus
