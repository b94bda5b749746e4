#include "common/security/certificates.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <functional>

namespace rstorm::security {
namespace {

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
  void operator()(X509* c) const { X509_free(c); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyFree>;
using CertPtr = std::unique_ptr<X509, CertFree>;

std::string openssl_error() {
  const unsigned long e = ERR_get_error();
  if (e == 0) return "unknown OpenSSL error";
  char text[256];
  ERR_error_string_n(e, text, sizeof text);
  ERR_clear_error();
  return text;
}

KeyPtr new_key() { return KeyPtr(EVP_EC_gen("P-256")); }

bool add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A certificate for `key` named `cn`, valid from an hour ago for `days`.
CertPtr new_certificate(EVP_PKEY* key, const std::string& cn, int days) {
  CertPtr cert(X509_new());
  if (!cert) return nullptr;
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(days) * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("rstorm"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  return cert;
}

Status write_pem(const std::filesystem::path& path, bool secret,
                 const std::function<int(FILE*)>& write) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, secret ? 0600 : 0644);
  if (fd < 0) return Status(ErrorCode::kIoError, "cannot write " + path.string());
  if (secret) ::fchmod(fd, 0600);  // also when the file existed
  FILE* file = ::fdopen(fd, "w");
  if (file == nullptr) {
    ::close(fd);
    return Status(ErrorCode::kIoError, "cannot write " + path.string());
  }
  const bool ok = write(file) == 1;
  const bool closed = std::fclose(file) == 0;
  if (!ok || !closed) {
    return Status(ErrorCode::kIoError, "cannot write " + path.string() + ": " + openssl_error());
  }
  return Status::ok();
}

}  // namespace

struct CertificateAuthority::Impl {
  KeyPtr key;
  CertPtr cert;
};

CertificateAuthority::CertificateAuthority(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CertificateAuthority::~CertificateAuthority() = default;

Result<std::unique_ptr<CertificateAuthority>> CertificateAuthority::create(const std::string& name,
                                                                           int days) {
  auto impl = std::make_unique<Impl>();
  impl->key = new_key();
  if (!impl->key) return Status(ErrorCode::kInternal, "cannot create a CA key: " + openssl_error());
  impl->cert = new_certificate(impl->key.get(), name, days);
  if (!impl->cert) return Status(ErrorCode::kInternal, "cannot create a CA: " + openssl_error());
  X509* cert = impl->cert.get();
  X509_set_issuer_name(cert, X509_get_subject_name(cert));
  if (!add_extension(cert, cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
      !add_extension(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !add_extension(cert, cert, NID_subject_key_identifier, "hash") ||
      X509_sign(cert, impl->key.get(), EVP_sha256()) == 0) {
    return Status(ErrorCode::kInternal, "cannot sign the CA: " + openssl_error());
  }
  return std::unique_ptr<CertificateAuthority>(new CertificateAuthority(std::move(impl)));
}

Status CertificateAuthority::write_certificate(const std::filesystem::path& path) const {
  return write_pem(path, false, [&](FILE* f) { return PEM_write_X509(f, impl_->cert.get()); });
}

Status CertificateAuthority::issue(const CertificateRequest& request,
                                   const std::filesystem::path& cert_path,
                                   const std::filesystem::path& key_path) const {
  if (request.common_name.empty()) {
    return Status(ErrorCode::kInvalidArgument, "a certificate needs a common name");
  }
  KeyPtr key = new_key();
  if (!key) return Status(ErrorCode::kInternal, "cannot create a key: " + openssl_error());
  CertPtr cert = new_certificate(key.get(), request.common_name, request.days);
  if (!cert) return Status(ErrorCode::kInternal, "cannot create a certificate: " + openssl_error());
  X509_set_issuer_name(cert.get(), X509_get_subject_name(impl_->cert.get()));
  std::string alt;
  for (const auto& dns : request.dns_names) alt += (alt.empty() ? "DNS:" : ",DNS:") + dns;
  for (const auto& ip : request.ip_addresses) alt += (alt.empty() ? "IP:" : ",IP:") + ip;
  X509* issuer = impl_->cert.get();
  bool ok = add_extension(cert.get(), issuer, NID_basic_constraints, "critical,CA:FALSE") &&
            add_extension(cert.get(), issuer, NID_key_usage,
                          "critical,digitalSignature,keyEncipherment") &&
            add_extension(cert.get(), issuer, NID_ext_key_usage, "serverAuth,clientAuth") &&
            add_extension(cert.get(), issuer, NID_authority_key_identifier, "keyid:always");
  if (ok && !alt.empty()) ok = add_extension(cert.get(), issuer, NID_subject_alt_name, alt);
  if (!ok || X509_sign(cert.get(), impl_->key.get(), EVP_sha256()) == 0) {
    return Status(ErrorCode::kInternal, "cannot issue a certificate for '" + request.common_name +
                                            "': " + openssl_error());
  }
  if (Status s = write_pem(key_path, true,
                           [&](FILE* f) {
                             return PEM_write_PrivateKey(f, key.get(), nullptr, nullptr, 0, nullptr,
                                                         nullptr);
                           });
      !s) {
    return s;
  }
  if (Status s =
          write_pem(cert_path, false, [&](FILE* f) { return PEM_write_X509(f, cert.get()); });
      !s) {
    return s;
  }
  if (request.pkcs12_path.empty()) return Status::ok();
  STACK_OF(X509)* chain = sk_X509_new_null();
  sk_X509_push(chain, impl_->cert.get());
  PKCS12* bundle = PKCS12_create(request.pkcs12_password.c_str(), request.common_name.c_str(),
                                 key.get(), cert.get(), chain, 0, 0, 0, 0, 0);
  sk_X509_free(chain);
  if (bundle == nullptr) {
    return Status(ErrorCode::kInternal, "cannot bundle the certificate of '" + request.common_name +
                                            "': " + openssl_error());
  }
  Status written =
      write_pem(request.pkcs12_path, true, [&](FILE* f) { return i2d_PKCS12_fp(f, bundle); });
  PKCS12_free(bundle);
  return written;
}

}  // namespace rstorm::security
