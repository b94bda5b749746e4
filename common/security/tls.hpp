// Mutual TLS for rstorm's Thrift services, on Thrift's own TLS transport
// (TSSLSocketFactory, TSSLServerSocket) over OpenSSL.
//
// Both sides load a PEM certificate, its key and the CA bundle that signs the
// other side; the protocol floor is TLS 1.2, set explicitly on the context.
// A server requires a client certificate signed by its CA (a client without
// one fails the handshake); a client checks the server's certificate against
// its CA and the host it dialled (subjectAltName, else CN).
//
// The peer's identity, its *principal*, is the subject's CN of the verified
// certificate (or, without a CN, its first subjectAltName). A server reads it
// from the accepted transport with peer_principal(); it is known once the
// handshake is done, i.e. by the time a call has been read.
//
// Making a factory sets SIGPIPE to be ignored when it has its default action
// (OpenSSL writes with write(2)).
//
// Thread contract: the factories are thread-safe once built; each socket
// belongs to its connection's thread.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/status.hpp"
#include "rstorm/config.hpp"

namespace apache::thrift::transport {
class TSSLSocketFactory;
class TTransport;
}  // namespace apache::thrift::transport

namespace rstorm::security {

// PEM paths of one side of a TLS connection.
struct TlsFiles {
  std::string cert;  // this side's certificate (chain)
  std::string key;   // its private key (unencrypted PEM)
  std::string ca;    // the CA bundle the other side's certificate must chain to
  bool complete() const { return !cert.empty() && !key.empty() && !ca.empty(); }
};

// Reads `<prefix>.cert.path`, `.key.path` and `.ca.path` (e.g. prefix
// "nimbus.thrift.tls.server"). nullopt when none is set; ConfigError naming
// the key when only some are, or when a named file cannot be read.
std::optional<TlsFiles> tls_files_from_config(const Config& config, const std::string& prefix);

// A server-side factory: server mode, TLS >= 1.2, a client certificate
// required (or, without `require_client_certificate`, checked when presented:
// nimbus's TLS port also serves workers that present a worker token instead).
// kInvalidArgument naming the file when a certificate, key or CA cannot be
// loaded or the key does not match the certificate.
Result<std::shared_ptr<apache::thrift::transport::TSSLSocketFactory>> server_socket_factory(
    const TlsFiles& files, bool require_client_certificate = true);
// A client-side factory: presents `files.cert` (none when `.cert` and `.key`
// are both empty), verifies the server against `files.ca` and the dialled
// host name.
Result<std::shared_ptr<apache::thrift::transport::TSSLSocketFactory>> client_socket_factory(
    const TlsFiles& files);

// The principal of the peer of a transport accepted through a
// server_socket_factory() socket, once its handshake is done ("" when the
// client presented no certificate and none was required); nullopt for any
// other transport (plaintext) or before the handshake.
std::optional<std::string> peer_principal(
    const std::shared_ptr<apache::thrift::transport::TTransport>& transport);

// A TLS handshake failure or a refused certificate in words a user can act
// on: Thrift reports "SSL_connect: ... certificate verify failed" or a frame
// size error when one side speaks plaintext. `what` is the raw message,
// `tls` whether this side was speaking TLS.
std::string explain_tls_failure(const std::string& what, bool tls);

}  // namespace rstorm::security
