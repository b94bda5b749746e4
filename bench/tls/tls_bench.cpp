// What secure mode costs per connection, on loopback, in one process:
//  - nimbus: connect, handshake and the first call (getLeader), mutual TLS
//    (EC P-256 certificates from a throw-away CA) against plaintext;
//  - data plane: from set_peers to the connection's first envelope delivered,
//    with the workers' HMAC challenge and response against without.
// Prints every figure as the median of --runs and the ratio of the two.
#include <thrift/Thrift.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSSLSocket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include "common/blob_store.hpp"
#include "common/in_memory_coordination.hpp"
#include "common/key_value_store.hpp"
#include "common/security/certificates.hpp"
#include "common/security/secrets.hpp"
#include "nimbus/nimbus.hpp"
#include "nimbus/nimbus_client.hpp"
#include "nimbus/nimbus_server.hpp"
#include "rstorm_thrift/Nimbus.h"
#include "transport/transport_test_support.hpp"

namespace {

using namespace rstorm;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Milliseconds of connect + getLeader, `runs` times.
std::vector<double> nimbus_connects(int port, const std::optional<security::TlsFiles>& tls,
                                    int runs) {
  std::vector<double> out;
  for (int i = 0; i < runs; ++i) {
    nimbus::NimbusClient::Options o;
    o.seeds = {{"127.0.0.1", port}};
    o.tls = tls;
    o.follow_leader = false;
    const auto start = Clock::now();
    auto client = nimbus::NimbusClient::connect(o);
    if (!client || !(*client)->leader()) {
      std::fprintf(stderr, "connect failed: %s\n",
                   client ? "getLeader" : client.status().to_string().c_str());
      std::exit(1);
    }
    out.push_back(ms_since(start));
  }
  return out;
}

// Milliseconds of a TLS handshake and a getLeader call on a new connection,
// with one client context made once (as a process that connects again does).
std::vector<double> tls_handshakes(int port, const security::TlsFiles& files, int runs) {
  namespace at = apache::thrift;
  auto factory = security::client_socket_factory(files);
  if (!factory) std::exit(1);
  std::vector<double> out;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    auto socket = (*factory)->createSocket("127.0.0.1", port);
    auto framed = std::make_shared<at::transport::TFramedTransport>(socket);
    auto protocol = std::make_shared<at::protocol::TBinaryProtocol>(framed);
    rstorm::thrift::NimbusClient client(protocol);
    framed->open();
    rstorm::thrift::NimbusSummary leader;
    client.getLeader(leader);
    out.push_back(ms_since(start));
    framed->close();
  }
  return out;
}

// Milliseconds from set_peers to the first envelope delivered on a new
// connection, `runs` times (a new receiver each time).
std::vector<double> data_plane_connects(const std::string& secret, int runs) {
  using namespace transport;
  using namespace transport::testing;
  auto plan = make_test_plan();
  std::vector<double> out;
  for (int i = 0; i < runs; ++i) {
    CapturedLog log_a{"a"}, log_b{"b"};
    CountingHandler ha, hb;
    auto options = [&](std::vector<TaskId> tasks, CapturedLog& log) {
      TransportOptions o = options_for("t", std::move(tasks), log.logger);
      o.authenticate = !secret.empty();
      o.secret = secret;
      return o;
    };
    auto a = Transport::start(*plan, options(tasks_of_a(), log_a), &ha);
    auto b = Transport::start(*plan, options(tasks_of_b(), log_b), &hb);
    if (!a || !b) std::exit(1);
    (*b)->set_peers({PeerWorker{(*a)->listen_address(), tasks_of_a()}});
    const auto start = Clock::now();
    (*a)->set_peers({PeerWorker{(*b)->listen_address(), tasks_of_b()}});
    worker::Batch batch{data_envelope(*plan, 3, 0)};
    while (!(*a)->sink((*b)->listen_address())->try_push(batch)) {
    }
    while (hb.delivered.load() == 0) std::this_thread::yield();
    out.push_back(ms_since(start));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rstorm-bench-tls: the cost of secure mode per connection"};
  int runs = 200;
  app.add_option("--runs", runs, "connections per figure")->default_val(200);
  CLI11_PARSE(app, argc, argv);
  apache::thrift::GlobalOutput.setOutputFunction([](const char*) {});

  const auto dir =
      std::filesystem::temp_directory_path() / ("rstorm-bench-tls-" + std::to_string(::getpid()));
  auto ca = security::CertificateAuthority::create("bench CA");
  if (!ca || !(*ca)->write_certificate(dir / "ca.pem")) return 1;
  security::CertificateRequest nimbus_cert{"nimbus", {"localhost"}, {"127.0.0.1"}};
  security::CertificateRequest user;
  user.common_name = "alice";
  if (!(*ca)->issue(nimbus_cert, dir / "nimbus.pem", dir / "nimbus-key.pem") ||
      !(*ca)->issue(user, dir / "alice.pem", dir / "alice-key.pem")) {
    return 1;
  }
  auto service = InMemoryCoordinationService::create();
  auto store = service->connect();
  InMemoryKeyValueStore kv;
  BlobStore blobs(kv, BlobStore::Options{});
  nimbus::NimbusOptions no;
  nimbus::Nimbus n(*store, blobs, no, Logger::null());
  nimbus::NimbusServer::Options so;
  so.port = 0;
  so.tls_port = 0;
  so.tls = security::TlsFiles{(dir / "nimbus.pem").string(), (dir / "nimbus-key.pem").string(),
                              (dir / "ca.pem").string()};
  so.authorizer.enabled = true;
  nimbus::NimbusServer server(n, so, Logger::null());
  if (!server.start() || !n.start(server.port(), server.tls_port())) return 1;
  while (!n.is_leader()) std::this_thread::sleep_for(std::chrono::milliseconds(10));

  const security::TlsFiles alice{(dir / "alice.pem").string(), (dir / "alice-key.pem").string(),
                                 (dir / "ca.pem").string()};
  const double plain = median(nimbus_connects(server.port(), std::nullopt, runs));
  const double tls = median(nimbus_connects(server.tls_port(), alice, runs));
  std::printf(
      "nimbus connect + first call, median of %d: plaintext %.3f ms, mutual TLS %.3f ms "
      "(%.1fx)\n",
      runs, plain, tls, tls / plain);
  const double handshake = median(tls_handshakes(server.tls_port(), alice, runs));
  std::printf(
      "mutual TLS handshake + first call on a client context made once, median of %d: %.3f ms\n",
      runs, handshake);
  const double open = median(data_plane_connects("", runs));
  const double authed = median(data_plane_connects(security::random_bytes(32), runs));
  std::printf(
      "data plane connect to first envelope, median of %d: open %.3f ms, authenticated "
      "%.3f ms (%.2fx)\n",
      runs, open, authed, authed / open);
  server.stop();
  n.stop();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}
