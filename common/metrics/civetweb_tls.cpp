#include "common/metrics/civetweb_tls.hpp"

#include <dlfcn.h>

#include <exception>
#include <filesystem>
#include <mutex>

#include <CivetServer.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <prometheus/exposer.h>

namespace rstorm::metrics {
namespace {

// What init_ssl loads for the server being started on this thread.
struct PendingCertificate {
  const std::string& cert_path;
  const std::string& key_path;
  std::string error;  // set by init_ssl when it fails
};
thread_local PendingCertificate* pending = nullptr;

std::string openssl_error() {
  std::string text;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!text.empty()) text += "; ";
    text += buf;
  }
  return text.empty() ? "unknown OpenSSL error" : text;
}

// civetweb's init_ssl: 1 (certificate set up) or -1 (fail).
int load_certificate(void* ssl_ctx, void* /*user_data: civetweb's server*/) {
  PendingCertificate* p = pending;
  if (p == nullptr) return -1;
  auto* ctx = static_cast<SSL_CTX*>(ssl_ctx);
  ERR_clear_error();
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
    p->error = "cannot require TLS 1.2: " + openssl_error();
    return -1;
  }
  if (SSL_CTX_use_certificate_chain_file(ctx, p->cert_path.c_str()) != 1) {
    p->error = "cannot load the TLS certificate '" + p->cert_path + "': " + openssl_error();
    return -1;
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, p->key_path.c_str(), SSL_FILETYPE_PEM) != 1) {
    p->error = "cannot load the TLS key '" + p->key_path + "': " + openssl_error();
    return -1;
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    p->error = "the TLS key '" + p->key_path + "' does not match the certificate '" + p->cert_path +
               "': " + openssl_error();
    return -1;
  }
  return 1;
}

// dlopen()s a shim by name (the binary's RUNPATH: the build tree's and the
// installed lib folder), else from <folder of this executable>/../lib.
std::string load_shim(const std::string& file) {
  const int flags = RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE;
  if (dlopen(file.c_str(), flags) != nullptr) return {};
  std::string error = dlerror();
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto beside = exe.parent_path().parent_path() / "lib" / file;
    if (dlopen(beside.c_str(), flags) != nullptr) return {};
    error += "; " + std::string(dlerror());
  }
  return error;
}

// Loads both shims once per process; the error, if any, every time.
const std::string& load_civetweb_openssl() {
  static std::once_flag once;
  static std::string error;
  std::call_once(once, [] {
    for (const char* shim : {"librstorm-civetweb-crypto.so", "librstorm-civetweb-ssl.so"}) {
      if (std::string e = load_shim(shim); !e.empty()) {
        error = "cannot load " + std::string(shim) + " (civetweb's OpenSSL 3 shim): " + e;
        return;
      }
    }
  });
  return error;
}

}  // namespace

api::Result<std::unique_ptr<prometheus::Exposer>> start_tls_exposer(
    const std::vector<std::string>& civet_options, const std::string& cert_path,
    const std::string& key_path) {
  if (const std::string& e = load_civetweb_openssl(); !e.empty()) return api::Status::error(e);
  CivetCallbacks callbacks;
  callbacks.init_ssl = &load_certificate;
  PendingCertificate certificate{cert_path, key_path, {}};
  pending = &certificate;
  std::unique_ptr<prometheus::Exposer> exposer;
  std::string failure;
  try {
    exposer = std::make_unique<prometheus::Exposer>(civet_options, &callbacks);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  pending = nullptr;
  if (!certificate.error.empty()) return api::Status::error(certificate.error);
  if (!exposer) return api::Status::error(failure);
  return exposer;
}

}  // namespace rstorm::metrics
