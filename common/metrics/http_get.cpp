#include "common/metrics/http_get.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace rstorm::metrics {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

api::Result<HttpResponse> http_get(const std::string& host, int port, const std::string& target,
                                   std::chrono::milliseconds timeout) {
  const std::string url = "http://" + host + ":" + std::to_string(port) + target;
  try {
    boost::asio::io_context io;
    beast::tcp_stream stream(io);
    tcp::resolver resolver(io);
    stream.expires_after(timeout);
    stream.connect(resolver.resolve(host, std::to_string(port)));
    http::request<http::empty_body> req{http::verb::get, target, 11};
    req.set(http::field::host, host);
    req.set(http::field::connection, "close");
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(256u << 20);
    http::read(stream, buffer, parser);
    HttpResponse out;
    out.status = static_cast<int>(parser.get().result_int());
    out.body = std::move(parser.get().body());
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    return out;
  } catch (const std::exception& e) {
    return api::Status::error("GET " + url + " failed: " + e.what());
  }
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
