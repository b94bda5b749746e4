// Guarded /metrics: basic authentication and HTTPS on a MetricsServer (through
// prometheus-cpp and civetweb), the storm.metrics.tls.* and .auth.* keys, the
// file SD entry of an HTTPS endpoint, and a real Prometheus server scraping one.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/config_loader.hpp"
#include "common/metrics/endpoint.hpp"
#include "common/metrics/exposer.hpp"
#include "common/metrics/http_get.hpp"
#include "common/metrics/prometheus_server.hpp"
#include "common/metrics/security_config.hpp"
#include "exposition.hpp"
#include "prometheus_harness.hpp"
#include "test_certificates.hpp"

namespace rstorm::metrics {
namespace {

using testing::poll_until_equals;
using testing::sum_series;

constexpr const char* kUser = "prometheus";
constexpr const char* kPassword = "s3cret:with a colon";

HttpClientOptions credentials(std::string user, std::string password) {
  HttpClientOptions o;
  o.user = std::move(user);
  o.password = std::move(password);
  return o;
}

// A temp folder, removed with everything in it when the test ends.
struct ScopedDir {
  explicit ScopedDir(const std::string& tag) : path(testing::temp_dir(tag)) {}
  ~ScopedDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  const std::filesystem::path path;
};

// The CA and server certificate every test of this file uses.
const testing::TestPki& pki() {
  static const ScopedDir dir("metrics-pki");
  static const testing::TestPki pki = testing::make_test_pki(dir.path);
  return pki;
}

TEST(MetricsAuth, RequestWithoutOrWithWrongCredentialsGets401) {
  Registry registry;
  registry.counter("rstorm_test_guarded_total", "guarded").increment(4);
  ServerSecurity security;
  security.auth_user = kUser;
  security.auth_password = kPassword;
  auto server = MetricsServer::start("127.0.0.1", 0, registry, security);
  ASSERT_TRUE(server.ok()) << server.status().message();
  const int port = (*server)->port();
  EXPECT_EQ((*server)->url(), "http://127.0.0.1:" + std::to_string(port) + "/metrics");

  auto anonymous = http_get("127.0.0.1", port, "/metrics");
  ASSERT_TRUE(anonymous.ok()) << anonymous.status().message();
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_EQ(anonymous->body, "");
  for (const auto& [user, password] : {std::pair{kUser, "s3cret"}, {"admin", kPassword}}) {
    auto wrong = http_get("127.0.0.1", port, "/metrics", credentials(user, password));
    ASSERT_TRUE(wrong.ok()) << wrong.status().message();
    EXPECT_EQ(wrong->status, 401) << user << ":" << password;
  }
  auto right = http_get("127.0.0.1", port, "/metrics", credentials(kUser, kPassword));
  ASSERT_TRUE(right.ok()) << right.status().message();
  EXPECT_EQ(right->status, 200);
  EXPECT_EQ(sum_series(right->body, "rstorm_test_guarded_total"), 4);
}

// One HTTPS server with basic authentication for the tests below (a server
// takes about 2 s to stop once it served a request).
struct TlsServer {
  Registry registry;
  std::unique_ptr<MetricsServer> server;
};

TlsServer& tls_server() {
  // Stopped at exit (civetweb takes about 2 s), before OpenSSL's own exit
  // cleanup runs: a process that exited with the server's threads still in
  // a TLS connection (the refused handshake of ClientTrustingAnotherCa...)
  // crashed now and then after its test had passed.
  static const std::unique_ptr<TlsServer> s = [] {
    auto t = std::make_unique<TlsServer>();
    ServerSecurity security;
    security.tls_cert_path = pki().server_cert.string();
    security.tls_key_path = pki().server_key.string();
    security.auth_user = kUser;
    security.auth_password = kPassword;
    auto started = MetricsServer::start("127.0.0.1", 0, t->registry, security);
    EXPECT_TRUE(started.ok()) << started.status().message();
    if (started.ok()) t->server = std::move(started).value();
    return t;
  }();
  return *s;
}

HttpClientOptions https_client(std::string ca_file) {
  HttpClientOptions o = credentials(kUser, kPassword);
  o.https = true;
  o.ca_file = std::move(ca_file);
  return o;
}

TEST(MetricsTls, ServesHttpsCheckedAgainstItsCa) {
  TlsServer& s = tls_server();
  ASSERT_NE(s.server, nullptr);
  const int port = s.server->port();
  EXPECT_EQ(s.server->url(), "https://127.0.0.1:" + std::to_string(port) + "/metrics");
  s.registry.counter("rstorm_test_tls_total", "over TLS").increment(6);
  auto r = http_get("127.0.0.1", port, "/metrics", https_client(pki().ca_cert.string()));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(sum_series(r->body, "rstorm_test_tls_total"), 6);
}

TEST(MetricsTls, HttpsWithoutCredentialsGets401) {
  TlsServer& s = tls_server();
  ASSERT_NE(s.server, nullptr);
  HttpClientOptions anonymous = https_client(pki().ca_cert.string());
  anonymous.user.clear();
  auto r = http_get("127.0.0.1", s.server->port(), "/metrics", anonymous);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 401);
}

TEST(MetricsTls, PlainHttpOnTheHttpsPortGetsNoAnswer) {
  TlsServer& s = tls_server();
  ASSERT_NE(s.server, nullptr);
  auto r = http_get("127.0.0.1", s.server->port(), "/metrics", credentials(kUser, kPassword));
  EXPECT_FALSE(r.ok()) << "status " << r->status << ": " << r->body;
}

TEST(MetricsTls, ClientTrustingAnotherCaRefusesTheServer) {
  TlsServer& s = tls_server();
  ASSERT_NE(s.server, nullptr);
  const ScopedDir dir("metrics-other-pki");
  const auto other = testing::make_test_pki(dir.path);
  auto r =
      http_get("127.0.0.1", s.server->port(), "/metrics", https_client(other.ca_cert.string()));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("certificate verify failed"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("https://127.0.0.1:"), std::string::npos)
      << r.status().message();
}

TEST(MetricsTls, KeyThatDoesNotMatchTheCertificateIsAClearError) {
  const ScopedDir dir("metrics-mismatch");
  const auto other = testing::make_test_pki(dir.path);
  Registry registry;
  ServerSecurity security;
  security.tls_cert_path = pki().server_cert.string();
  security.tls_key_path = other.server_key.string();
  auto server = MetricsServer::start("127.0.0.1", 0, registry, security);
  ASSERT_FALSE(server.ok());
  // OpenSSL checks the key against the certificate as it loads it.
  EXPECT_NE(server.status().message().find("cannot load the TLS key '" + other.server_key.string() +
                                           "': "),
            std::string::npos)
      << server.status().message();
  EXPECT_NE(server.status().message().find("key values mismatch"), std::string::npos)
      << server.status().message();
}

TEST(MetricsTls, CertificateThatIsNotPemIsAClearError) {
  const ScopedDir scoped("metrics-not-pem");
  const auto& dir = scoped.path;
  std::ofstream(dir / "cert.pem") << "not a certificate\n";
  Registry registry;
  ServerSecurity security;
  security.tls_cert_path = (dir / "cert.pem").string();
  security.tls_key_path = pki().server_key.string();
  auto server = MetricsServer::start("127.0.0.1", 0, registry, security);
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.status().message().find("cannot serve metrics over TLS on 127.0.0.1:0: "
                                           "cannot load the TLS certificate '" +
                                           (dir / "cert.pem").string() + "'"),
            std::string::npos)
      << server.status().message();
}

TEST(MetricsEndpoint, HttpsEndpointAnnouncesItsSchemeInItsFileSdEntry) {
  const ScopedDir scoped("metrics-sd-https");
  const auto& dir = scoped.path;
  EndpointOptions o;
  o.security.tls_cert_path = pki().server_cert.string();
  o.security.tls_key_path = pki().server_key.string();
  o.sd_file = (dir / "nimbus-1.json").string();
  o.sd_labels = {{"role", "nimbus"}};
  auto endpoint = MetricsEndpoint::start(std::move(o));
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().message();
  std::ifstream in(dir / "nimbus-1.json");
  const auto json = nlohmann::json::parse(in);
  ASSERT_EQ(json.size(), 1u);
  EXPECT_EQ(json[0]["targets"][0], (*endpoint)->server().target());
  EXPECT_EQ(json[0]["labels"], nlohmann::json({{"role", "nimbus"}, {"__scheme__", "https"}}));
  // Plain HTTP adds nothing: Prometheus's default scheme is http.
  EXPECT_EQ(sd_labels_for(ServerSecurity{}, {{"role", "nimbus"}}), Labels({{"role", "nimbus"}}));
}

// Config: the keys a daemon reads.

Config config_of(const std::vector<std::pair<std::string, ConfigValue>>& entries) {
  Config c = default_config();
  for (const auto& [k, v] : entries) c.set(k, v, "test");
  return c;
}

std::string config_error(const Config& c) {
  try {
    (void)server_security_from_config(c);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// A file holding `text` in this test's folder.
std::filesystem::path password_file(const ScopedDir& dir, const std::string& text) {
  static int n = 0;
  const auto path = dir.path / ("password-" + std::to_string(++n));
  std::ofstream(path) << text;
  return path;
}

TEST(MetricsSecurityConfig, NullDefaultsMeanPlainHttpWithoutAuthentication) {
  const ServerSecurity s = server_security_from_config(default_config());
  EXPECT_FALSE(s.tls());
  EXPECT_FALSE(s.auth());
  const HttpClientOptions c = scrape_client_from_config(default_config());
  EXPECT_FALSE(c.https);
  EXPECT_EQ(c.user, "");
}

TEST(MetricsSecurityConfig, AllKeysSetGiveHttpsWithBasicAuthentication) {
  const ScopedDir dir("metrics-config");
  const Config c = config_of({{"storm.metrics.tls.cert.path", pki().server_cert.string()},
                              {"storm.metrics.tls.key.path", pki().server_key.string()},
                              {"storm.metrics.tls.ca.path", pki().ca_cert.string()},
                              {"storm.metrics.auth.user", kUser},
                              {"storm.metrics.auth.password.file",
                               password_file(dir, std::string("  ") + kPassword + "\n").string()}});
  const ServerSecurity s = server_security_from_config(c);
  EXPECT_EQ(s.tls_cert_path, pki().server_cert.string());
  EXPECT_EQ(s.tls_key_path, pki().server_key.string());
  EXPECT_EQ(s.auth_user, kUser);
  EXPECT_EQ(s.auth_password, kPassword);  // surrounding whitespace dropped, as Prometheus does
  const HttpClientOptions client = scrape_client_from_config(c);
  EXPECT_TRUE(client.https);
  EXPECT_EQ(client.ca_file, pki().ca_cert.string());
  EXPECT_EQ(client.user, kUser);
  EXPECT_EQ(client.password, kPassword);
}

TEST(MetricsSecurityConfig, HalfSetPairNamesTheMissingKey) {
  const ScopedDir dir("metrics-config");
  const std::string password = password_file(dir, "pw").string();
  EXPECT_EQ(config_error(config_of({{"storm.metrics.tls.cert.path", pki().server_cert.string()}})),
            "storm.metrics.tls.key.path is not set; TLS on /metrics needs "
            "storm.metrics.tls.cert.path and storm.metrics.tls.key.path together");
  EXPECT_EQ(config_error(config_of({{"storm.metrics.tls.key.path", pki().server_key.string()}})),
            "storm.metrics.tls.cert.path is not set; TLS on /metrics needs "
            "storm.metrics.tls.cert.path and storm.metrics.tls.key.path together");
  EXPECT_EQ(config_error(config_of({{"storm.metrics.auth.user", kUser}})),
            "storm.metrics.auth.password.file is not set; basic authentication of /metrics needs "
            "storm.metrics.auth.user and storm.metrics.auth.password.file together");
  EXPECT_EQ(config_error(config_of({{"storm.metrics.auth.password.file", password}})),
            "storm.metrics.auth.user is not set; basic authentication of /metrics needs "
            "storm.metrics.auth.user and storm.metrics.auth.password.file together");
}

TEST(MetricsSecurityConfig, WrongTypeNamesTheKey) {
  const std::string error = config_error(
      config_of({{"storm.metrics.tls.cert.path", 5}, {"storm.metrics.tls.key.path", "k.pem"}}));
  EXPECT_NE(error.find("storm.metrics.tls.cert.path"), std::string::npos) << error;
  // The schema rejects it before any daemon reads it.
  auto parsed = parse_overrides({"storm.metrics.auth.user=[a, b]"});
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.status().message(),
            "storm.metrics.auth.user: [\"a\", \"b\"] (command line) is a list: expected a string "
            "or null");
}

TEST(MetricsSecurityConfig, UnreadableFileNamesTheKeyAndPath) {
  EXPECT_EQ(config_error(config_of({{"storm.metrics.tls.cert.path", "/nonexistent/cert.pem"},
                                    {"storm.metrics.tls.key.path", pki().server_key.string()}})),
            "storm.metrics.tls.cert.path: '/nonexistent/cert.pem' (test) is not a readable file");
  EXPECT_EQ(config_error(config_of({{"storm.metrics.auth.user", kUser},
                                    {"storm.metrics.auth.password.file", "/nonexistent/pw"}})),
            "storm.metrics.auth.password.file: '/nonexistent/pw' (test) is not a readable file");
}

TEST(MetricsSecurityConfig, EmptyPasswordAndUserWithColonAreRefused) {
  const ScopedDir dir("metrics-config");
  const std::string blank = password_file(dir, " \n").string();
  EXPECT_EQ(config_error(config_of(
                {{"storm.metrics.auth.user", kUser}, {"storm.metrics.auth.password.file", blank}})),
            "storm.metrics.auth.password.file: '" + blank + "' holds no password");
  EXPECT_EQ(config_error(config_of(
                {{"storm.metrics.auth.user", "a:b"},
                 {"storm.metrics.auth.password.file", password_file(dir, "pw").string()}})),
            "storm.metrics.auth.user: 'a:b' has a ':', which basic authentication does not allow "
            "in a user");
}

// A real Prometheus server scrapes an HTTPS endpoint with basic
// authentication, found through the file SD entry the endpoint wrote; a
// second endpoint that wants another password stays down.
TEST(PrometheusScrape, ScrapesAnHttpsEndpointBehindBasicAuthentication) {
  const auto dir = testing::temp_dir("prom-https");
  const auto sd_dir = dir / "metrics-sd";
  std::ofstream(dir / "password") << kPassword << "\n";

  EndpointOptions nimbus;
  nimbus.security.tls_cert_path = pki().server_cert.string();
  nimbus.security.tls_key_path = pki().server_key.string();
  nimbus.security.auth_user = kUser;
  nimbus.security.auth_password = kPassword;
  nimbus.process_labels = {{"role", "nimbus"}};
  nimbus.sd_file = (sd_dir / "nimbus-1.json").string();
  nimbus.sd_labels = {{"role", "nimbus"}};
  EndpointOptions other = nimbus;
  other.security.auth_password = "another password";
  other.sd_file = (sd_dir / "supervisor-s1.json").string();
  other.sd_labels = {{"role", "supervisor"}};
  auto guarded = MetricsEndpoint::start(std::move(nimbus));
  ASSERT_TRUE(guarded.ok()) << guarded.status().message();
  (*guarded)->registry().counter("rstorm_test_secure_scrapes_total", "secure").increment(3);
  auto refusing = MetricsEndpoint::start(std::move(other));
  ASSERT_TRUE(refusing.ok()) << refusing.status().message();

  PrometheusServerOptions po;
  po.work_dir = dir / "prometheus";
  po.sd_dir = sd_dir.string();
  po.scrape_interval = std::chrono::seconds(1);
  po.tls_ca_file = pki().ca_cert.string();
  po.basic_auth_user = kUser;
  po.basic_auth_password_file = (dir / "password").string();
  auto prom = PrometheusServer::start(po);
  ASSERT_TRUE(prom.ok()) << prom.status().message();
  const PrometheusServer& p = **prom;

  EXPECT_EQ(poll_until_equals(p, "up{job=\"rstorm-nimbus\"}", 1), std::optional<double>(1));
  EXPECT_EQ(poll_until_equals(p, "rstorm_test_secure_scrapes_total{job=\"rstorm-nimbus\"}", 3),
            std::optional<double>(3));
  // Scraped over https: the __scheme__ of the SD entry.
  auto targets = http_get(p.host(), p.port(), "/api/v1/targets?state=active");
  ASSERT_TRUE(targets.ok()) << targets.status().message();
  std::vector<std::string> nimbus_urls;
  const auto answer = nlohmann::json::parse(targets->body);
  for (const auto& t : answer["data"]["activeTargets"]) {
    if (t["labels"]["job"] == "rstorm-nimbus") nimbus_urls.push_back(t["scrapeUrl"]);
  }
  EXPECT_EQ(nimbus_urls, std::vector<std::string>{(*guarded)->server().url()});
  EXPECT_EQ(poll_until_equals(p, "up{job=\"rstorm-supervisor\"}", 0), std::optional<double>(0));
  auto refused = http_get(p.host(), p.port(), "/api/v1/targets?state=active");
  ASSERT_TRUE(refused.ok()) << refused.status().message();
  const auto after = nlohmann::json::parse(refused->body);
  for (const auto& t : after["data"]["activeTargets"]) {
    if (t["labels"]["job"] != "rstorm-supervisor") continue;
    EXPECT_NE(t["lastError"].get<std::string>().find("401 Unauthorized"), std::string::npos)
        << t["lastError"];
  }
  (*prom)->stop();
  std::filesystem::remove_all(dir);
}

TEST(PrometheusConfig, ConfigWithTlsAndBasicAuthenticationIsValidForPromtool) {
  const auto dir = testing::temp_dir("promtool-https");
  std::ofstream(dir / "password") << "pw\n";
  PrometheusServerOptions o;
  o.work_dir = dir;
  o.sd_dir = dir.string();
  o.static_targets = {"127.0.0.1:1"};
  o.static_scheme = "https";
  o.tls_ca_file = pki().ca_cert.string();
  o.basic_auth_user = kUser;
  o.basic_auth_password_file = (dir / "password").string();
  const std::string text = prometheus_config(o);
  EXPECT_NE(text.find("    tls_config:\n      ca_file: \"" + pki().ca_cert.string() + "\"\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    basic_auth:\n      username: \"prometheus\"\n      password_file: \"" +
                      (dir / "password").string() + "\"\n"),
            std::string::npos)
      << text;
  std::ofstream(dir / "generated.yml") << text;
  const std::string cmd = "/usr/bin/promtool check config " + (dir / "generated.yml").string() +
                          " > " + (dir / "out.txt").string() + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rstorm::metrics
