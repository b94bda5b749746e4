#include "worker/transport/stream.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

namespace rstorm::transport {

namespace ssl = boost::asio::ssl;

namespace {

std::string openssl_reason(const boost::system::error_code& ec) {
  std::string what = ec.message();
  if (ec.category() == boost::asio::error::get_ssl_category()) {
    const char* reason = ERR_reason_error_string(static_cast<unsigned long>(ec.value()));
    if (reason != nullptr) what = reason;
  }
  return what;
}

}  // namespace

Result<std::shared_ptr<ssl::context>> make_tls_context(const security::TlsFiles& files) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls);
  SSL_CTX* native = context->native_handle();
  if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1) {
    return Status(ErrorCode::kInternal, "cannot set the data plane's TLS floor to TLS 1.2");
  }
  // Connections live for the topology's life and are never resumed.
  SSL_CTX_set_num_tickets(native, 0);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_compression);
  boost::system::error_code ec;
  auto refuse = [&](const std::string& what, const std::string& path) {
    return Status(ErrorCode::kInvalidArgument, "storm.messaging.netty.tls: cannot load the " +
                                                   what + " '" + path + "': " + openssl_reason(ec));
  };
  context->use_certificate_chain_file(files.cert, ec);
  if (ec) return refuse("certificate", files.cert);
  context->use_private_key_file(files.key, ssl::context::pem, ec);
  if (ec) return refuse("private key", files.key);
  if (SSL_CTX_check_private_key(native) != 1) {
    return Status(ErrorCode::kInvalidArgument,
                  "storm.messaging.netty.tls: the private key '" + files.key +
                      "' does not belong to the certificate '" + files.cert + "'");
  }
  context->load_verify_file(files.ca, ec);
  if (ec) return refuse("CA bundle", files.ca);
  // Server side: a client certificate is required; client side: the server's is checked.
  context->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
  return context;
}

void PeerStream::verify_host(const std::string& host) {
  if (!tls_) return;
  tls_->set_verify_callback(ssl::host_name_verification(host));
  // SNI, for a receiver behind anything that routes by name.
  SSL_set_tlsext_host_name(tls_->native_handle(), host.c_str());
}

std::string explain_tls_error(const boost::system::error_code& ec, bool inbound) {
  const std::string what = openssl_reason(ec);
  if (ec == ssl::error::stream_truncated) {
    return what + " (the peer closed the connection during TLS)";
  }
  if (what.find("wrong version number") != std::string::npos ||
      what.find("packet length too long") != std::string::npos ||
      what.find("http request") != std::string::npos) {
    return what + " (the other side does not speak TLS: is storm.messaging.netty.tls.enable " +
           "on there too?)";
  }
  if (what.find("certificate verify failed") != std::string::npos) {
    return what +
           std::string(inbound ? " (its certificate is not signed by"
                               : " (the receiving worker's certificate is not signed by") +
           " storm.messaging.netty.tls.ca.path's CA" +
           (inbound ? ")" : ", or does not name the host dialled)");
  }
  if (what.find("peer did not return a certificate") != std::string::npos) {
    return what + " (it presents no certificate: storm.messaging.netty.tls.cert.path unset there?)";
  }
  if (what.find("alert") != std::string::npos) {
    return what + " (the other side refused this side's certificate)";
  }
  return what;
}

}  // namespace rstorm::transport
