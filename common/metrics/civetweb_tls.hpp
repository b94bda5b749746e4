// Internal to common/metrics: starting prometheus-cpp's Exposer (civetweb)
// with HTTPS on Debian 12.
//
// civetweb reads its certificate and key from one PEM file (ssl_certificate);
// rstorm takes them as two files, so the server's init_ssl callback loads them
// into civetweb's SSL_CTX itself (TLS 1.2 at least) instead. civetweb calls
// init_ssl synchronously from the constructor that starts the server, on the
// same thread, without user data of ours: the files travel in a thread-local
// set for the duration of that constructor.
//
// Before the first HTTPS server, the two civetweb_openssl shims are loaded
// (civetweb_openssl/ssl_shim.cpp says why).
//
// Thread contract: thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "rstorm/status.hpp"

namespace prometheus {
class Exposer;
}

namespace rstorm::metrics {

// A started Exposer serving HTTPS with `cert_path` (PEM, leaf first) and
// `key_path` (unencrypted PEM). `civet_options` are civetweb's, with the
// listening port marked "s". Fails naming the file that cannot be loaded, a
// key that does not match, a shim that cannot be loaded, or civetweb's error.
api::Result<std::unique_ptr<prometheus::Exposer>> start_tls_exposer(
    const std::vector<std::string>& civet_options, const std::string& cert_path,
    const std::string& key_path);

}  // namespace rstorm::metrics
