#include "common/security/tls.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <signal.h>
#include <sys/socket.h>
#include <thrift/transport/TSSLSocket.h>

#include <filesystem>
#include <fstream>

namespace rstorm::security {

using apache::thrift::transport::SSLContext;
using apache::thrift::transport::TSSLException;
using apache::thrift::transport::TSSLSocket;
using apache::thrift::transport::TSSLSocketFactory;
using apache::thrift::transport::TTransport;
using apache::thrift::transport::TTransportException;

namespace {

std::string utf8_of(const ASN1_STRING* text) {
  unsigned char* utf8 = nullptr;
  const int size = ASN1_STRING_to_UTF8(&utf8, text);
  if (size < 0) return {};
  std::string out(reinterpret_cast<const char*>(utf8), static_cast<std::size_t>(size));
  OPENSSL_free(utf8);
  return out;
}

// The subject's CN; without one, the first DNS, URI or e-mail subjectAltName.
std::string principal_of(X509* cert) {
  const X509_NAME* subject = X509_get_subject_name(cert);
  const int at = subject ? X509_NAME_get_index_by_NID(subject, NID_commonName, -1) : -1;
  if (at >= 0) {
    std::string cn = utf8_of(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, at)));
    if (!cn.empty()) return cn;
  }
  std::string out;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (names != nullptr) {
    for (int i = 0; i < sk_GENERAL_NAME_num(names) && out.empty(); ++i) {
      const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
      if (name->type == GEN_DNS || name->type == GEN_URI || name->type == GEN_EMAIL) {
        out = utf8_of(name->d.ia5);
      }
    }
    GENERAL_NAMES_free(names);
  }
  return out;
}

// A server-side socket that keeps its peer's principal once the handshake is
// done, and says who it was talking to when the handshake fails.
class PeerSslSocket final : public TSSLSocket {
 public:
  PeerSslSocket(std::shared_ptr<SSLContext> ctx, THRIFT_SOCKET socket,
                std::shared_ptr<THRIFT_SOCKET> interrupt)
      : TSSLSocket(std::move(ctx), socket, std::move(interrupt)) {}

  const std::optional<std::string>& principal() const { return principal_; }

  uint32_t read(uint8_t* buf, uint32_t len) override {
    try {
      return TSSLSocket::read(buf, len);
    } catch (const TSSLException& e) {
      if (principal_) throw;
      throw TTransportException(TTransportException::NOT_OPEN,
                                "TLS handshake with " + getPeerAddress() + ":" +
                                    std::to_string(getPeerPort()) +
                                    " failed: " + explain_tls_failure(e.what(), true));
    }
  }

 protected:
  void authorize() override {
    TSSLSocket::authorize();  // verify result; refuses a missing certificate when required
    X509* cert = SSL_get1_peer_certificate(ssl_);
    if (cert == nullptr) {  // optional, and not presented
      principal_ = std::string();
      return;
    }
    std::string name = principal_of(cert);
    X509_free(cert);
    if (name.empty())
      throw TSSLException("authorize: the certificate names no CN or subjectAltName");
    principal_ = std::move(name);
  }

 private:
  std::optional<std::string> principal_;
};

class PeerSocketFactory final : public TSSLSocketFactory {
 public:
  PeerSocketFactory() : TSSLSocketFactory(apache::thrift::transport::SSLTLS) {}
  SSL_CTX* context() { return ctx_->get(); }

  std::shared_ptr<TSSLSocket> createSocket(THRIFT_SOCKET socket) override {
    return createSocket(socket, nullptr);
  }
  std::shared_ptr<TSSLSocket> createSocket(THRIFT_SOCKET socket,
                                           std::shared_ptr<THRIFT_SOCKET> interrupt) override {
    auto ssl = std::make_shared<PeerSslSocket>(ctx_, socket, std::move(interrupt));
    ssl->server(true);
    return ssl;
  }
};

std::string openssl_errors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(e, text, sizeof text);
    out += (out.empty() ? "" : "; ") + std::string(text);
  }
  return out;
}

// A client socket that tells a refusal of its own certificate from a server
// certificate it cannot authorize. With TLS 1.3 the server checks the
// client's certificate after the client's side of the handshake has ended;
// when its refusal (an alert, then the connection closed) wins the race
// with Thrift's check of the server, that check fails for want of the
// peer's address and said "cannot authorize peer", blaming the server's
// certificate.
class ClientSslSocket final : public TSSLSocket {
 public:
  ClientSslSocket(std::shared_ptr<SSLContext> ctx, const std::string& host, int port)
      : TSSLSocket(std::move(ctx), host, port) {}

 protected:
  void authorize() override {
    try {
      TSSLSocket::authorize();
    } catch (const TSSLException&) {
      sockaddr_storage address{};
      socklen_t size = sizeof address;
      if (::getpeername(socket_, reinterpret_cast<sockaddr*>(&address), &size) == 0) throw;
      // The server is gone: its alert, when one came, says why.
      ERR_clear_error();
      char byte = 0;
      const int peeked = SSL_peek(ssl_, &byte, 1);
      std::string alert;
      while (unsigned long e = peeked <= 0 ? ERR_get_error() : 0) {
        const char* reason = ERR_reason_error_string(e);
        alert += (alert.empty() ? "" : "; ") + std::string(reason ? reason : "unknown");
      }
      throw TSSLException(
          alert.empty() ? std::string("the server closed the connection (reset by peer) right "
                                      "after the TLS handshake")
                        : "SSL_read: " + alert);
    }
  }
};

class ClientSocketFactory final : public TSSLSocketFactory {
 public:
  ClientSocketFactory() : TSSLSocketFactory(apache::thrift::transport::SSLTLS) {}
  SSL_CTX* context() { return ctx_->get(); }

  // As the base's (a client socket checking the server's name), of the
  // class above.
  std::shared_ptr<TSSLSocket> createSocket(const std::string& host, int port) override {
    auto ssl = std::make_shared<ClientSslSocket>(ctx_, host, port);
    ssl->server(false);
    ssl->access(std::make_shared<apache::thrift::transport::DefaultClientAccessManager>());
    return ssl;
  }
};

// OpenSSL writes to the socket with write(2): a peer that closed first would
// kill the process with SIGPIPE instead of failing the write. A process that
// speaks TLS ignores it (unless it installed a handler of its own).
void ignore_sigpipe() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    ::signal(SIGPIPE, SIG_IGN);
  }
}

template <typename Factory>
Status load_own_certificate(Factory& factory, const TlsFiles& files) {
  try {
    factory.loadCertificate(files.cert.c_str());
  } catch (const std::exception& e) {
    return Status(ErrorCode::kInvalidArgument,
                  "cannot load the TLS certificate " + files.cert + ": " + e.what());
  }
  try {
    factory.loadPrivateKey(files.key.c_str());
  } catch (const std::exception& e) {
    return Status(ErrorCode::kInvalidArgument,
                  "cannot load the TLS key " + files.key + ": " + e.what());
  }
  if (SSL_CTX_check_private_key(factory.context()) != 1) {
    return Status(ErrorCode::kInvalidArgument,
                  "the TLS key " + files.key + " does not match the certificate " + files.cert);
  }
  return Status::ok();
}

// `files.cert` and `.key` may both be empty on a client that presents no
// certificate.
template <typename Factory>
Status load(Factory& factory, const TlsFiles& files) {
  ignore_sigpipe();
  const bool own_certificate = !files.cert.empty() || !files.key.empty();
  for (const auto& [what, path] :
       {std::pair{"certificate", files.cert}, {"key", files.key}, {"CA bundle", files.ca}}) {
    if (!own_certificate && path != files.ca) continue;
    std::ifstream in(path);
    if (!in)
      return Status(ErrorCode::kInvalidArgument,
                    std::string("cannot read the TLS ") + what + " " + path);
  }
  SSL_CTX* ctx = factory.context();
  // The floor is explicit: TLS 1.2 and 1.3 only, whatever the system's default.
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
    return Status(ErrorCode::kInternal, "cannot set the TLS 1.2 floor: " + openssl_errors());
  }
  if (own_certificate) {
    if (Status s = load_own_certificate(factory, files); !s) return s;
  }
  try {
    factory.loadTrustedCertificates(files.ca.c_str());
  } catch (const std::exception& e) {
    return Status(ErrorCode::kInvalidArgument,
                  "cannot load the TLS CA bundle " + files.ca + ": " + e.what());
  }
  return Status::ok();
}

}  // namespace

std::optional<TlsFiles> tls_files_from_config(const Config& config, const std::string& prefix) {
  const auto read = [&](const std::string& suffix) -> std::string {
    const std::string key = prefix + "." + suffix;
    const Config::Entry* entry = config.find(key);
    if (entry == nullptr || entry->value.is_null()) return {};
    const std::string path = config.get_string(key);
    if (path.empty()) return {};
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      throw ConfigError(key + ": '" + path + "' (" + entry->origin + ") is not a readable file");
    }
    return path;
  };
  TlsFiles files{read("cert.path"), read("key.path"), read("ca.path")};
  if (files.cert.empty() && files.key.empty() && files.ca.empty()) return std::nullopt;
  for (const auto& [suffix, value] :
       {std::pair{"cert.path", files.cert}, {"key.path", files.key}, {"ca.path", files.ca}}) {
    if (value.empty()) {
      throw ConfigError(prefix + "." + suffix + " is not set; TLS needs " + prefix +
                        ".cert.path, .key.path and .ca.path together");
    }
  }
  return files;
}

Result<std::shared_ptr<TSSLSocketFactory>> server_socket_factory(const TlsFiles& files,
                                                                 bool require_client_certificate) {
  std::shared_ptr<PeerSocketFactory> factory;
  try {
    factory = std::make_shared<PeerSocketFactory>();
  } catch (const std::exception& e) {
    return Status(ErrorCode::kInternal, std::string("cannot create a TLS context: ") + e.what());
  }
  factory->server(true);
  if (Status s = load(*factory, files); !s) return s;
  // Client certificates are required and must chain to files.ca; the CA names
  // are sent so that a client with several certificates picks the right one.
  factory->authenticate(true);
  if (!require_client_certificate) {
    // Checked when presented; a client without one gets no principal.
    SSL_CTX_set_verify(factory->context(), SSL_VERIFY_PEER | SSL_VERIFY_CLIENT_ONCE, nullptr);
  }
  if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(files.ca.c_str())) {
    SSL_CTX_set_client_CA_list(factory->context(), names);
  }
  // Thrift's client sockets never resume a session: TLS 1.3 session tickets
  // would only cost each handshake two encryptions and a write.
  SSL_CTX_set_num_tickets(factory->context(), 0);
  return std::shared_ptr<TSSLSocketFactory>(std::move(factory));
}

Result<std::shared_ptr<TSSLSocketFactory>> client_socket_factory(const TlsFiles& files) {
  std::shared_ptr<ClientSocketFactory> factory;
  try {
    factory = std::make_shared<ClientSocketFactory>();
  } catch (const std::exception& e) {
    return Status(ErrorCode::kInternal, std::string("cannot create a TLS context: ") + e.what());
  }
  if (Status s = load(*factory, files); !s) return s;
  factory->authenticate(true);  // the server's certificate must verify
  return std::shared_ptr<TSSLSocketFactory>(std::move(factory));
}

std::optional<std::string> peer_principal(const std::shared_ptr<TTransport>& transport) {
  auto socket = std::dynamic_pointer_cast<PeerSslSocket>(transport);
  if (!socket) return std::nullopt;
  return socket->principal();
}

std::string explain_tls_failure(const std::string& what, bool tls) {
  const auto has = [&](std::string_view s) { return what.find(s) != std::string::npos; };
  if (!tls) {
    // A plaintext client reads the TLS server's alert as a frame length.
    if (has("MaxMessageSize") || has("Frame size") || has("frame size") ||
        has("No more data to read") || has("ECONNRESET") || has("reset by peer")) {
      return what +
             " (the port may expect TLS: set nimbus.thrift.client.use.tls: true and "
             "nimbus.thrift.tls.client.cert.path, .key.path and .ca.path)";
    }
    return what;
  }
  if (has("wrong version number") || has("http request") || has("packet length too long") ||
      has("unexpected eof") || has("record layer failure")) {
    return what +
           " (the other side does not speak TLS on this port: a plaintext peer, or a "
           "plaintext port)";
  }
  if (has("unknown ca") || has("certificate required") || has("bad certificate") ||
      has("peer did not return a certificate") || has("required certificate not present")) {
    return what +
           " (the client's certificate was refused: none presented, or not signed by a CA "
           "the server trusts)";
  }
  if (has("Broken pipe") || has("EPIPE") || has("reset by peer") || has("ECONNRESET")) {
    // TLS 1.3 ends the client's side of the handshake before the server has
    // checked the client's certificate: a refusal shows as a closed socket.
    return what +
           " (the server closed the connection after the TLS handshake: with TLS 1.3 that is "
           "how it refuses a client certificate it does not trust; is the client's certificate "
           "signed by the server's CA?)";
  }
  if (has("certificate verify failed") || has("SSL_get_verify_result")) {
    return what + " (the peer's certificate does not chain to the configured CA bundle)";
  }
  if (has("cannot authorize peer") || has("access denied")) {
    return what +
           " (the server's certificate does not name the host that was dialled: its "
           "subjectAltName or CN must match)";
  }
  return what;
}

}  // namespace rstorm::security
