// http_get: a small blocking HTTP/1.1 GET over loopback (Boost.Beast), to read
// /metrics and the Prometheus HTTP API (readiness, queries) from tools and tests.
//
// Thread contract: free functions, safe from any thread.
#pragma once

#include <chrono>
#include <string>

#include "rstorm/status.hpp"

namespace rstorm::metrics {

struct HttpResponse {
  int status = 0;
  std::string body;
};

// GET http://host:port<target>. Fails (naming the URL) on connection or
// protocol errors and when `timeout` passes; an HTTP error status is a response.
api::Result<HttpResponse> http_get(const std::string& host, int port, const std::string& target,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(10));

// Percent-encodes a query parameter value.
std::string url_encode(const std::string& value);

}  // namespace rstorm::metrics
