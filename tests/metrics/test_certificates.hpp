// A throw-away PKI for the metrics endpoints' HTTPS tests: a CA and one server
// certificate for 127.0.0.1 and localhost, from common/security's
// CertificateAuthority (EC P-256).
#pragma once

#include <filesystem>
#include <string>

#include "common/security/certificates.hpp"

namespace rstorm::metrics::testing {

struct TestPki {
  std::filesystem::path ca_cert;      // the CA's certificate: what clients trust
  std::filesystem::path server_cert;  // CN=<name>, SAN IP:127.0.0.1, DNS:localhost
  std::filesystem::path server_key;
};

// Writes ca.pem, <name>.pem and <name>.key into `dir`; empty paths on failure.
inline TestPki make_test_pki(const std::filesystem::path& dir, const std::string& name = "server") {
  // Named after its folder: two CAs of one test are told apart by name.
  auto ca = security::CertificateAuthority::create("rstorm test CA " + dir.filename().string(), 1);
  if (!ca) return {};
  security::CertificateRequest server;
  server.common_name = name;
  server.dns_names = {"localhost"};
  server.ip_addresses = {"127.0.0.1"};
  TestPki pki{dir / "ca.pem", dir / (name + ".pem"), dir / (name + ".key")};
  if (!(*ca)->write_certificate(pki.ca_cert) ||
      !(*ca)->issue(server, pki.server_cert, pki.server_key)) {
    return {};
  }
  return pki;
}

}  // namespace rstorm::metrics::testing
