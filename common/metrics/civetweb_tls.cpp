#include "common/metrics/civetweb_tls.hpp"

#include <CivetServer.h>
#include <dlfcn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <prometheus/exposer.h>

#include <exception>
#include <filesystem>
#include <mutex>
#include <vector>

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

// The shims live in a private folder, lib/rstorm/civetweb-openssl, never in
// the library folder itself: ldconfig would make their SONAMEs ("libssl.so")
// links there and hijack the system's development links.
constexpr const char* kShimFolder = "rstorm/civetweb-openssl";

// dlopen()s a shim from the folders it can be in: beside the shared object
// that holds this code, or <folder of this executable>/../lib and
// <bin>/RSTORM_BIN_TO_LIB (the build tree's and the installed layout).
std::string load_shim(const std::string& file) {
  const int flags = RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE;
  std::vector<std::filesystem::path> folders;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&load_certificate), &info) != 0 && info.dli_fname != nullptr) {
    folders.push_back(std::filesystem::path(info.dli_fname).parent_path() / kShimFolder);
  }
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    folders.push_back(exe.parent_path().parent_path() / "lib" / kShimFolder);
    folders.push_back(exe.parent_path() / RSTORM_BIN_TO_LIB / kShimFolder);
  }
  std::string error;
  for (const auto& folder : folders) {
    const auto path = folder / file;
    if (!std::filesystem::exists(path, ec)) continue;
    if (dlopen(path.c_str(), flags) != nullptr) return {};
    error += std::string(error.empty() ? "" : "; ") + dlerror();
  }
  if (error.empty()) {
    error = "not found in";
    for (const auto& folder : folders) error += " " + folder.string();
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
