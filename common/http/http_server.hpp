// HttpServer: a small HTTP/1.1 server on Boost.Beast for rstorm's own pages and
// JSON APIs (the UI's REST API, the supervisor's log viewer). Requests are
// parsed by Beast, handed to one handler as an HttpRequest (path and query
// already percent-decoded), and answered with its HttpResponse; keep-alive is
// honoured. A handler that throws answers 500 with the exception's text as JSON.
//
// HTTPS when a certificate and key are set (Asio's OpenSSL stream, TLS 1.2 at
// least), then only HTTPS on that port; with need_client_auth, a client must
// present a certificate signed by `tls_ca` (else the handshake fails and
// nothing is served), and its CN (or first subjectAltName) reaches the handler
// as HttpRequest::principal.
//
// Thread contract: the handler runs on the server's own threads (`threads`
// of them, so a slow handler does not hold every client) and must be
// thread-safe. start()/stop() from the owner thread; stop() is idempotent and
// joins the threads.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/logger.hpp"
#include "common/status.hpp"
#include "rstorm/config.hpp"

namespace rstorm::http {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // percent-decoded, without the query
  std::string target;  // as received
  std::map<std::string, std::string> query;    // percent-decoded
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  std::string peer;  // "127.0.0.1:54321"
  bool secure = false;    // over HTTPS
  std::string principal;  // HTTPS: the client certificate's CN (or SAN); else empty

  // The header's value, or "" when absent. `name` in lower case.
  std::string header(const std::string& name) const;
  // The query parameter's value, or `fallback`.
  std::string param(const std::string& name, const std::string& fallback = "") const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;

  // {"error": <reason phrase>, "errorMessage": message} with `status`.
  static HttpResponse json_error(int status, const std::string& message);
  static HttpResponse json(std::string body, int status = 200);
  static HttpResponse text(std::string body, std::string content_type, int status = 200);
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;     // 0: a free port (port() tells which)
  int threads = 4;  // handler threads
  std::string name = "http";  // in log lines and errors: "ui", "logviewer"
  std::size_t max_body_bytes = 1 << 20;
  // HTTPS: PEM certificate (chain) and key; both or neither.
  std::string tls_cert;
  std::string tls_key;
  // The CA client certificates must chain to (with need_client_auth).
  std::string tls_ca;
  bool need_client_auth = false;
  bool tls() const { return !tls_cert.empty(); }
};

class HttpServer {
 public:
  // Listens and starts serving. kUnavailable naming name, host and port when it
  // cannot listen (the port is taken, the address is not local);
  // kInvalidArgument naming the file when a certificate, key or CA cannot be
  // loaded.
  static Result<std::unique_ptr<HttpServer>> start(HttpServerOptions options, HttpHandler handler,
                                                   Logger logger);
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  void stop();
  int port() const { return port_; }
  const std::string& host() const { return options_.host; }
  std::string url() const {
    return (options_.tls() ? "https://" : "http://") + options_.host + ":" + std::to_string(port_);
  }

 private:
  struct Impl;
  HttpServer(HttpServerOptions options, Logger logger);

  const HttpServerOptions options_;
  const Logger logger_;
  int port_ = 0;
  std::unique_ptr<Impl> impl_;
};

// Reads `<prefix>.cert.path`, `.key.path`, `.ca.path` and
// `.need.client.auth` (e.g. "ui.https") into `options`. ConfigError naming the
// key when only one of cert and key is set, or need.client.auth without a CA.
void https_options_from_config(const ::rstorm::Config& config, const std::string& prefix,
                               HttpServerOptions& options);

// Percent-decodes `text` ('+' is a space when `plus_is_space`). Malformed
// escapes are kept as they are.
std::string percent_decode(const std::string& text, bool plus_is_space);

// HTML-escapes &, <, >, " and '.
std::string html_escape(const std::string& text);

}  // namespace rstorm::http
