// librstorm-civetweb-ssl.so: what Debian 12's civetweb (1.15, built for the
// OpenSSL 1.1 API and loading OpenSSL at run time) needs to serve HTTPS with
// OpenSSL 3.
//
// civetweb dlopen()s "libssl.so" and looks up SSL_get_peer_certificate, which
// OpenSSL 3 only has as a macro for SSL_get1_peer_certificate: the lookup
// yields NULL and civetweb calls it after every TLS handshake (a crash). This
// library's SONAME is "libssl.so", so once it is loaded civetweb's dlopen()
// returns it; its dependency libssl.so.3 provides every other function, and it
// provides the old name. Loaded by load_civetweb_openssl() (tls_server.cpp).
#include <openssl/opensslv.h>
#include <openssl/ssl.h>

#if OPENSSL_VERSION_MAJOR >= 3
#undef SSL_get_peer_certificate
extern "C" {
__attribute__((visibility("default"))) X509* SSL_get_peer_certificate(const SSL* ssl);
X509* SSL_get_peer_certificate(const SSL* ssl) { return SSL_get1_peer_certificate(ssl); }
}
#endif
