// A throw-away certificate authority for `rstorm dev-cluster --secure` and the
// tests: an EC P-256 CA that issues certificates for servers (with the host
// names and addresses they answer on) and for users (their principal as CN).
// Written as PEM files; keys are created with mode 0600.
//
// Not a production CA: no revocation, no serial bookkeeping beyond random
// serials. Thread contract: thread-compatible.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/status.hpp"

namespace rstorm::security {

struct CertificateRequest {
  std::string common_name;                // the principal: "alice", "nimbus"
  std::vector<std::string> dns_names;     // subjectAltName DNS entries: "localhost"
  std::vector<std::string> ip_addresses;  // subjectAltName IP entries: "127.0.0.1"
  int days = 30;
  // Also a PKCS#12 bundle of the certificate, its key and the CA's certificate
  // here, for browsers (import it to present the certificate), when set.
  std::filesystem::path pkcs12_path = {};
  std::string pkcs12_password = "rstorm";
};

class CertificateAuthority {
 public:
  // A new CA with a fresh key, valid for `days`.
  static Result<std::unique_ptr<CertificateAuthority>> create(const std::string& name,
                                                              int days = 30);
  ~CertificateAuthority();

  // Writes the CA's certificate (the bundle peers trust).
  Status write_certificate(const std::filesystem::path& path) const;
  // Issues a certificate for `request` with a new key; writes both.
  Status issue(const CertificateRequest& request, const std::filesystem::path& cert_path,
               const std::filesystem::path& key_path) const;

  struct Impl;

 private:
  explicit CertificateAuthority(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rstorm::security
