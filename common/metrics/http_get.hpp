// http_get: a small blocking HTTP/1.1 GET, or any request (Boost.Beast; HTTPS through
// Boost.Asio's OpenSSL stream), to read /metrics and the Prometheus HTTP API
// (readiness, queries) from tools and tests.
//
// Thread contract: free functions, safe from any thread.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "rstorm/status.hpp"

namespace rstorm::metrics {

struct HttpResponse {
  int status = 0;
  std::string body;
};

// How to reach a server. The default is plain HTTP, no credentials.
struct HttpClientOptions {
  std::chrono::milliseconds timeout{10000};  // default 10 s for the whole exchange
  // HTTPS (TLS 1.2 at least) when set.
  bool https = false;
  // The CA bundle (PEM) the server's certificate must chain to; empty: the
  // system's trust store. The certificate must also name the host dialled
  // (subjectAltName DNS or IP).
  std::string ca_file;
  // false: accept any certificate (a test against a throw-away one).
  bool verify_peer = true;
  // A client certificate (PEM) and its key to present, when set.
  std::string cert_file;
  std::string key_file;
  // HTTP basic authentication when user is set.
  std::string user;
  std::string password;
};

// What to send: the method, the target (path and query), extra headers and
// a body (POST and PUT always carry a Content-Length).
struct HttpRequestSpec {
  std::string method = "GET";
  std::string target = "/";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

// `spec` to <scheme>://host:port, as http_get below.
api::Result<HttpResponse> http_request(const std::string& host, int port,
                                       const HttpRequestSpec& spec,
                                       const HttpClientOptions& options);

// GET <scheme>://host:port<target>. Fails (naming the URL) on connection, TLS
// or protocol errors and when the timeout passes; an HTTP error status (401
// too) is a response.
api::Result<HttpResponse> http_get(const std::string& host, int port, const std::string& target,
                                   const HttpClientOptions& options);
api::Result<HttpResponse> http_get(const std::string& host, int port, const std::string& target,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(10));

// Percent-encodes a query parameter value.
std::string url_encode(const std::string& value);

}  // namespace rstorm::metrics
