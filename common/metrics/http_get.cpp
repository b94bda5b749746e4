#include "common/metrics/http_get.hpp"

#include <openssl/evp.h>
#include <openssl/ssl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace rstorm::metrics {

namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;

namespace {

// "Basic " + base64("user:password") (OpenSSL's encoder).
std::string basic_authorization(const std::string& user, const std::string& password) {
  const std::string plain = user + ":" + password;
  std::string encoded(4 * ((plain.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(encoded.data()),
                                reinterpret_cast<const unsigned char*>(plain.data()),
                                static_cast<int>(plain.size()));
  encoded.resize(static_cast<std::size_t>(n));
  return "Basic " + encoded;
}

// Writes the request and reads the response on a connected stream.
template <typename Stream>
HttpResponse exchange(Stream& stream, const std::string& host, const HttpRequestSpec& spec,
                      const HttpClientOptions& options) {
  http::request<http::string_body> req{http::string_to_verb(spec.method), spec.target, 11};
  req.set(http::field::host, host);
  req.set(http::field::connection, "close");
  if (!options.user.empty()) {
    req.set(http::field::authorization, basic_authorization(options.user, options.password));
  }
  for (const auto& [name, value] : spec.headers) req.set(name, value);
  if (!spec.body.empty() || spec.method == "POST" || spec.method == "PUT") {
    req.body() = spec.body;
    req.prepare_payload();
  }
  http::write(stream, req);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(256u << 20);
  http::read(stream, buffer, parser);
  HttpResponse out;
  out.status = static_cast<int>(parser.get().result_int());
  out.body = std::move(parser.get().body());
  return out;
}

HttpResponse request_https(boost::asio::io_context& io,
                           const tcp::resolver::results_type& endpoints, const std::string& host,
                           const HttpRequestSpec& spec, const HttpClientOptions& options) {
  ssl::context ctx(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
  if (options.verify_peer) {
    if (options.ca_file.empty()) {
      ctx.set_default_verify_paths();
    } else {
      ctx.load_verify_file(options.ca_file);
    }
    ctx.set_verify_mode(ssl::verify_peer);
  } else {
    ctx.set_verify_mode(ssl::verify_none);
  }
  if (!options.cert_file.empty()) {
    ctx.use_certificate_chain_file(options.cert_file);
    ctx.use_private_key_file(options.key_file, ssl::context::pem);
  }
  beast::ssl_stream<beast::tcp_stream> stream(io, ctx);
  if (options.verify_peer) stream.set_verify_callback(ssl::host_name_verification(host));
  // SNI for a name (not for an address, where it is not allowed).
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  if (ec) SSL_set_tlsext_host_name(stream.native_handle(), host.c_str());
  beast::get_lowest_layer(stream).expires_after(options.timeout);
  beast::get_lowest_layer(stream).connect(endpoints);
  stream.handshake(ssl::stream_base::client);
  HttpResponse out = exchange(stream, host, spec, options);
  stream.shutdown(ec);  // the server may close first: not an error of the request
  return out;
}

}  // namespace

api::Result<HttpResponse> http_request(const std::string& host, int port,
                                       const HttpRequestSpec& spec,
                                       const HttpClientOptions& options) {
  const std::string url =
      (options.https ? "https://" : "http://") + host + ":" + std::to_string(port) + spec.target;
  try {
    boost::asio::io_context io;
    tcp::resolver resolver(io);
    const auto endpoints = resolver.resolve(host, std::to_string(port));
    if (options.https) return request_https(io, endpoints, host, spec, options);
    beast::tcp_stream stream(io);
    stream.expires_after(options.timeout);
    stream.connect(endpoints);
    HttpResponse out = exchange(stream, host, spec, options);
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    return out;
  } catch (const std::exception& e) {
    return api::Status::error(spec.method + " " + url + " failed: " + e.what());
  }
}

api::Result<HttpResponse> http_get(const std::string& host, int port, const std::string& target,
                                   const HttpClientOptions& options) {
  HttpRequestSpec spec;
  spec.target = target;
  return http_request(host, port, spec, options);
}

api::Result<HttpResponse> http_get(const std::string& host, int port, const std::string& target,
                                   std::chrono::milliseconds timeout) {
  HttpClientOptions options;
  options.timeout = timeout;
  return http_get(host, port, target, options);
}

std::string url_encode(const std::string& value) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace rstorm::metrics
