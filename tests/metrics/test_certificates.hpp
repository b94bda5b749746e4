// Throw-away TLS material for the metrics tests, made with OpenSSL's C API: a
// CA (EC P-256) and a server certificate it signs for 127.0.0.1 and localhost,
// written as PEM files (keys mode 0600). Self-contained on purpose: the tests
// of common/metrics need nothing else from the tree.
#pragma once

#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace rstorm::metrics::testing {

struct TestPki {
  std::filesystem::path ca_cert;      // the CA's certificate: what clients trust
  std::filesystem::path server_cert;  // CN=<name>, SAN IP:127.0.0.1, DNS:localhost
  std::filesystem::path server_key;
};

namespace detail {

using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using Cert = std::unique_ptr<X509, decltype(&X509_free)>;

inline Key new_key() { return Key(EVP_EC_gen("P-256"), &EVP_PKEY_free); }

inline void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `key` named `cn`, signed by `issuer_key` (self-signed when
// `issuer` is null), valid from now for a day.
inline Cert new_cert(EVP_PKEY* key, const std::string& cn, X509* issuer, EVP_PKEY* issuer_key,
                     long serial, bool ca) {
  Cert cert(X509_new(), &X509_free);
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  if (ca) {
    add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    add_extension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    add_extension(cert.get(), signer, NID_ext_key_usage, "serverAuth");
    add_extension(cert.get(), signer, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
  }
  X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256());
  return cert;
}

inline bool write_cert(const std::filesystem::path& path, X509* cert) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  const bool ok = PEM_write_X509(f, cert) == 1;
  return std::fclose(f) == 0 && ok;
}

inline bool write_key(const std::filesystem::path& path, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  ::chmod(path.c_str(), 0600);
  const bool ok = PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  return std::fclose(f) == 0 && ok;
}

}  // namespace detail

// Writes ca.pem, <name>.pem and <name>.key into `dir`; empty paths on failure.
inline TestPki make_test_pki(const std::filesystem::path& dir, const std::string& name = "server") {
  using namespace detail;
  Key ca_key = new_key();
  Key server_key = new_key();
  if (!ca_key || !server_key) return {};
  // Named after its folder: two CAs of one test are told apart by name.
  Cert ca = new_cert(ca_key.get(), "rstorm test CA " + dir.filename().string(), nullptr, nullptr, 1,
                     true);
  Cert server = new_cert(server_key.get(), name, ca.get(), ca_key.get(), 2, false);
  TestPki pki{dir / "ca.pem", dir / (name + ".pem"), dir / (name + ".key")};
  if (!write_cert(pki.ca_cert, ca.get()) || !write_cert(pki.server_cert, server.get()) ||
      !write_key(pki.server_key, server_key.get())) {
    return {};
  }
  return pki;
}

}  // namespace rstorm::metrics::testing
