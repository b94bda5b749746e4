#include "common/http/http_server.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>
#include <nlohmann/json.hpp>
#include <thread>

namespace rstorm::http {

namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kIdleTimeout = std::chrono::seconds(60);

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::map<std::string, std::string> parse_query(std::string_view query) {
  std::map<std::string, std::string> out;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    std::string key = percent_decode(std::string(pair.substr(0, eq)), true);
    std::string value =
        eq == std::string_view::npos ? "" : percent_decode(std::string(pair.substr(eq + 1)), true);
    out.emplace(std::move(key), std::move(value));
  }
  return out;
}

using BeastRequest = bhttp::request<bhttp::string_body>;
using BeastResponse = bhttp::response<bhttp::string_body>;

HttpRequest to_request(const BeastRequest& req, const std::string& peer) {
  HttpRequest out;
  out.method = std::string(req.method_string());
  out.target = std::string(req.target());
  const std::string_view target(req.target().data(), req.target().size());
  const std::size_t q = target.find('?');
  out.path = percent_decode(std::string(target.substr(0, q)), false);
  if (q != std::string_view::npos) out.query = parse_query(target.substr(q + 1));
  for (const auto& field : req) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.headers[name] = std::string(field.value());
  }
  out.body = req.body();
  out.peer = peer;
  return out;
}

}  // namespace

std::string HttpRequest::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

std::string HttpRequest::param(const std::string& name, const std::string& fallback) const {
  auto it = query.find(name);
  return it == query.end() ? fallback : it->second;
}

HttpResponse HttpResponse::json_error(int status, const std::string& message) {
  nlohmann::json body = {
      {"error", std::string(bhttp::obsolete_reason(static_cast<bhttp::status>(status)))},
      {"errorMessage", message}};
  return json(body.dump(), status);
}

HttpResponse HttpResponse::json(std::string body, int status) {
  HttpResponse out;
  out.status = status;
  out.body = std::move(body);
  return out;
}

HttpResponse HttpResponse::text(std::string body, std::string content_type, int status) {
  HttpResponse out;
  out.status = status;
  out.content_type = std::move(content_type);
  out.body = std::move(body);
  return out;
}

std::string percent_decode(const std::string& text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%' && i + 2 < text.size()) {
      const int hi = hex_digit(text[i + 1]);
      const int lo = hex_digit(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += (plus_is_space && c == '+') ? ' ' : c;
  }
  return out;
}

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// The subject CN of the verified client certificate, else its first
// subjectAltName; empty without one.
std::string certificate_principal(SSL* ssl) {
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (cert == nullptr) return {};
  std::string out;
  char cn[256];
  if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn) > 0) {
    out = cn;
  } else if (auto* names = static_cast<GENERAL_NAMES*>(
                 X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr))) {
    if (sk_GENERAL_NAME_num(names) > 0) {
      const GENERAL_NAME* n = sk_GENERAL_NAME_value(names, 0);
      if (n->type == GEN_DNS) {
        out.assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(n->d.dNSName)),
                   static_cast<std::size_t>(ASN1_STRING_length(n->d.dNSName)));
      }
    }
    GENERAL_NAMES_free(names);
  }
  X509_free(cert);
  return out;
}

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// One connection: read a request, answer it, repeat while keep-alive. Over
// HTTPS (Stream = TlsStream) after the handshake.
template <typename Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  template <typename... Args>
  Session(tcp::socket socket, const HttpHandler& handler, const HttpServerOptions& options,
          const Logger& logger, Args&... args)
      : stream_(std::move(socket), args...), handler_(handler), options_(options), logger_(logger) {
    beast::error_code ec;
    const auto endpoint = beast::get_lowest_layer(stream_).socket().remote_endpoint(ec);
    if (!ec) peer_ = endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
  }

  void run() {
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      // A plaintext request on the HTTPS port is told so, not dropped.
      beast::get_lowest_layer(stream_).expires_after(kIdleTimeout);
      beast::async_detect_ssl(
          stream_.next_layer(), buffer_,
          [self = this->shared_from_this()](beast::error_code ec, bool tls) {
            if (ec) return self->close();
            if (!tls) return self->refuse_plaintext();
            self->stream_.async_handshake(
                ssl::stream_base::server, self->buffer_.data(),
                [self](beast::error_code ec, std::size_t used) {
                  if (ec) {
                    self->logger_.info("{}: TLS handshake with {} failed: {}",
                                       self->options_.name, self->peer_, ec.message());
                    return self->close();
                  }
                  self->buffer_.consume(used);
                  self->principal_ = certificate_principal(self->stream_.native_handle());
                  self->read();
                });
          });
    } else {
      read();
    }
  }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(options_.max_body_bytes);
    beast::get_lowest_layer(stream_).expires_after(kIdleTimeout);
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                        self->on_read(ec);
                      });
  }

  void on_read(beast::error_code ec) {
    if (ec == bhttp::error::end_of_stream || ec == beast::error::timeout ||
        ec == asio::error::operation_aborted || ec == asio::error::connection_reset) {
      return close();
    }
    if (ec) {
      // A request Beast cannot parse (or too large) gets a 400 naming why.
      BeastResponse res{bhttp::status::bad_request, 11};
      res.set(bhttp::field::content_type, "application/json");
      res.body() = HttpResponse::json_error(400, "malformed HTTP request: " + ec.message()).body;
      res.keep_alive(false);
      res.prepare_payload();
      return write(std::move(res));
    }
    const BeastRequest& req = parser_->get();
    HttpResponse answer;
    try {
      HttpRequest request = to_request(req, peer_);
      request.secure = std::is_same_v<Stream, TlsStream>;
      request.principal = principal_;
      answer = handler_(request);
    } catch (const std::exception& e) {
      logger_.warn("{}: {} {} failed: {}", options_.name, std::string(req.method_string()),
                   std::string(req.target()), e.what());
      answer = HttpResponse::json_error(500, e.what());
    }
    BeastResponse res{static_cast<bhttp::status>(answer.status), req.version()};
    res.set(bhttp::field::server, "rstorm");
    res.set(bhttp::field::content_type, answer.content_type);
    res.set(bhttp::field::cache_control, "no-store");
    res.set("X-Content-Type-Options", "nosniff");
    for (const auto& [name, value] : answer.headers) res.set(name, value);
    res.keep_alive(req.keep_alive());
    if (req.method() != bhttp::verb::head) res.body() = std::move(answer.body);
    res.prepare_payload();
    write(std::move(res));
  }

  void write(BeastResponse res) {
    auto shared = std::make_shared<BeastResponse>(std::move(res));
    const bool keep = shared->keep_alive();
    bhttp::async_write(
        stream_, *shared,
        [self = this->shared_from_this(), shared, keep](beast::error_code ec, std::size_t) {
          if (ec || !keep) return self->close();
          self->read();
        });
  }

  // HTTPS port, plaintext request: a 400 in plain HTTP saying to use
  // https://, then the connection closed.
  void refuse_plaintext() {
    auto res = std::make_shared<BeastResponse>(bhttp::status::bad_request, 11);
    res->set(bhttp::field::server, "rstorm");
    res->set(bhttp::field::content_type, "application/json");
    res->body() = HttpResponse::json_error(
                      400, options_.name + " speaks HTTPS on this port: use https://")
                      .body;
    res->keep_alive(false);
    res->prepare_payload();
    logger_.info("{}: a plaintext request from {} on the HTTPS port, told to use https://",
                 options_.name, peer_);
    bhttp::async_write(stream_.next_layer(), *res,
                       [self = this->shared_from_this(), res](beast::error_code, std::size_t) {
                         self->close();
                       });
  }

  void close() {
    beast::error_code ec;
    beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  Stream stream_;
  const HttpHandler& handler_;
  const HttpServerOptions& options_;
  const Logger& logger_;
  std::string peer_;
  std::string principal_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
};

struct HttpServer::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  HttpHandler handler;
  std::unique_ptr<ssl::context> tls;  // HTTPS when set
  std::vector<std::thread> threads;
  std::atomic<bool> stopped{false};

  void accept(const HttpServerOptions& options, const Logger& logger) {
    acceptor.async_accept([this, &options, &logger](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      if (!ec && tls) {
        std::make_shared<Session<TlsStream>>(std::move(socket), handler, options, logger, *tls)
            ->run();
      } else if (!ec) {
        std::make_shared<Session<beast::tcp_stream>>(std::move(socket), handler, options, logger)
            ->run();
      }
      accept(options, logger);
    });
  }
};

namespace {

std::string openssl_errors() {
  std::string text;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    text += (text.empty() ? "" : "; ") + std::string(buf);
  }
  return text.empty() ? "unknown OpenSSL error" : text;
}

Result<std::unique_ptr<ssl::context>> make_server_context(const HttpServerOptions& o) {
  auto context = std::make_unique<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = context->native_handle();
  ERR_clear_error();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_compression);
  const auto refuse = [&](const std::string& what, const std::string& path) {
    return Status(ErrorCode::kInvalidArgument,
                  o.name + ": cannot load the " + what + " '" + path + "': " + openssl_errors());
  };
  if (o.tls_key.empty()) return refuse("private key (not set) for", o.tls_cert);
  if (SSL_CTX_use_certificate_chain_file(native, o.tls_cert.c_str()) != 1) {
    return refuse("certificate", o.tls_cert);
  }
  const bool key_loaded =
      SSL_CTX_use_PrivateKey_file(native, o.tls_key.c_str(), SSL_FILETYPE_PEM) == 1;
  const std::string key_error = key_loaded ? std::string() : openssl_errors();
  if (!key_loaded && key_error.find("key values mismatch") == std::string::npos) {
    return Status(ErrorCode::kInvalidArgument,
                  o.name + ": cannot load the private key '" + o.tls_key + "': " + key_error);
  }
  if (!key_loaded || SSL_CTX_check_private_key(native) != 1) {
    return Status(ErrorCode::kInvalidArgument, o.name + ": the private key '" + o.tls_key +
                                                   "' does not belong to the certificate '" +
                                                   o.tls_cert + "'");
  }
  if (!o.tls_ca.empty()) {
    if (SSL_CTX_load_verify_locations(native, o.tls_ca.c_str(), nullptr) != 1) {
      return refuse("CA bundle", o.tls_ca);
    }
    // Browsers choose among their certificates by the CAs the server names.
    SSL_CTX_set_client_CA_list(native, SSL_load_client_CA_file(o.tls_ca.c_str()));
  }
  if (o.need_client_auth) {
    context->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
  } else if (!o.tls_ca.empty()) {
    context->set_verify_mode(ssl::verify_peer);  // asked for, not required
  }
  return context;
}

}  // namespace

void https_options_from_config(const Config& config, const std::string& prefix,
                               HttpServerOptions& options) {
  const auto text = [&](const std::string& key) {
    const Config::Entry* e = config.find(key);
    return e == nullptr || e->value.is_null() ? std::string() : config.get_string(key);
  };
  options.tls_cert = text(prefix + ".cert.path");
  options.tls_key = text(prefix + ".key.path");
  options.tls_ca = text(prefix + ".ca.path");
  const Config::Entry* need = config.find(prefix + ".need.client.auth");
  options.need_client_auth =
      need != nullptr && !need->value.is_null() && config.get_bool(prefix + ".need.client.auth");
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    throw ConfigError(
        prefix + (options.tls_cert.empty() ? ".cert.path" : ".key.path") + " is not set, but " +
        prefix + (options.tls_cert.empty() ? ".key.path" : ".cert.path") + " is: HTTPS needs both");
  }
  if (options.need_client_auth && (options.tls_ca.empty() || options.tls_cert.empty())) {
    throw ConfigError(prefix + ".need.client.auth is on but " + prefix +
                      ".cert.path, .key.path and .ca.path are not all set");
  }
}

HttpServer::HttpServer(HttpServerOptions options, Logger logger)
    : options_(std::move(options)), logger_(std::move(logger)), impl_(std::make_unique<Impl>()) {}

Result<std::unique_ptr<HttpServer>> HttpServer::start(HttpServerOptions options,
                                                      HttpHandler handler, Logger logger) {
  const std::string where = options.host + ":" + std::to_string(options.port);
  std::unique_ptr<HttpServer> server(new HttpServer(std::move(options), std::move(logger)));
  Impl& impl = *server->impl_;
  impl.handler = std::move(handler);
  if (server->options_.tls()) {
    auto context = make_server_context(server->options_);
    if (!context) return context.status();
    impl.tls = std::move(*context);
  }
  try {
    const auto address = asio::ip::make_address(server->options_.host);
    const tcp::endpoint endpoint(address, static_cast<unsigned short>(server->options_.port));
    impl.acceptor.open(endpoint.protocol());
    impl.acceptor.set_option(asio::socket_base::reuse_address(true));
    impl.acceptor.bind(endpoint);
    impl.acceptor.listen(asio::socket_base::max_listen_connections);
    server->port_ = impl.acceptor.local_endpoint().port();
  } catch (const std::exception& e) {
    return Status(ErrorCode::kUnavailable, server->options_.name + " cannot listen on " + where +
                                               ": " + e.what());
  }
  impl.accept(server->options_, server->logger_);
  const int threads = std::max(1, server->options_.threads);
  for (int i = 0; i < threads; ++i) {
    impl.threads.emplace_back([&impl] { impl.io.run(); });
  }
  return server;
}

HttpServer::~HttpServer() { stop(); }

void HttpServer::stop() {
  if (impl_->stopped.exchange(true)) return;
  asio::post(impl_->io, [this] {
    beast::error_code ec;
    impl_->acceptor.close(ec);
  });
  impl_->io.stop();
  for (auto& t : impl_->threads) {
    if (t.joinable()) t.join();
  }
}

}  // namespace rstorm::http
