// PeerStream: the bytes of one worker-to-worker connection, over plain TCP or
// over TLS (storm.messaging.netty.tls.enable: Asio's SSL stream on OpenSSL).
// It is an Asio AsyncReadStream and AsyncWriteStream, so asio::async_read and
// asio::async_write work on it whichever it is; the transport's sessions and
// channels do not know the difference once the handshake is done.
//
// TLS here is mutual: both sides present a certificate signed by the
// configured CA (the supervisors' certificates), the receiver requires one,
// and the sender also checks that the receiver's certificate names the host it
// dialled. TLS 1.2 at least. Encryption and node identity only: whether the
// peer belongs to this topology is the HMAC handshake's job
// (storm.messaging.netty.authentication), which runs inside the TLS session.
//
// Thread contract: io thread only, like the socket it wraps. Asio's SSL
// stream allows one read and one write in flight at once, as the transport
// does.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "common/security/tls.hpp"
#include "common/status.hpp"

namespace rstorm::transport {

// An SSL context for the data plane: `files.cert`/`key` presented to every
// peer, peers verified against `files.ca`, TLS 1.2 floor. kInvalidArgument
// naming the file that cannot be loaded.
Result<std::shared_ptr<boost::asio::ssl::context>> make_tls_context(
    const security::TlsFiles& files);

// A TLS failure (handshake, bad record) in words a user can act on; `inbound`
// when this side accepted the connection.
std::string explain_tls_error(const boost::system::error_code& ec, bool inbound);

class PeerStream {
 public:
  using Socket = boost::asio::ip::tcp::socket;
  using executor_type = Socket::executor_type;

  // Plaintext when `tls` is null.
  PeerStream(Socket socket, boost::asio::ssl::context* tls) {
    if (tls != nullptr) {
      tls_ = std::make_unique<boost::asio::ssl::stream<Socket>>(std::move(socket), *tls);
    } else {
      plain_.emplace(std::move(socket));
    }
  }

  bool tls() const { return tls_ != nullptr; }
  Socket& socket() { return tls_ ? tls_->next_layer() : *plain_; }
  executor_type get_executor() { return socket().get_executor(); }

  // The sender's side: the receiver's certificate must name `host`.
  void verify_host(const std::string& host);

  // Runs the TLS handshake (a no-op, completed at once, in plaintext), then
  // `handler(error_code)`.
  template <typename Handler>
  void async_handshake(bool inbound, Handler&& handler) {
    if (!tls_) {
      boost::asio::post(get_executor(), [h = std::forward<Handler>(handler)]() mutable {
        h(boost::system::error_code());
      });
      return;
    }
    tls_->async_handshake(
        inbound ? boost::asio::ssl::stream_base::server : boost::asio::ssl::stream_base::client,
        std::forward<Handler>(handler));
  }

  template <typename Buffers, typename Handler>
  void async_read_some(const Buffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_read_some(buffers, std::forward<Handler>(handler));
    } else {
      plain_->async_read_some(buffers, std::forward<Handler>(handler));
    }
  }

  template <typename Buffers, typename Handler>
  void async_write_some(const Buffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_write_some(buffers, std::forward<Handler>(handler));
    } else {
      plain_->async_write_some(buffers, std::forward<Handler>(handler));
    }
  }

  // Closes the TCP connection at once (no TLS close_notify: the peer sees the
  // connection end, as with plaintext).
  void close() {
    boost::system::error_code ignored;
    socket().close(ignored);
  }

 private:
  std::optional<Socket> plain_;
  std::unique_ptr<boost::asio::ssl::stream<Socket>> tls_;
};

}  // namespace rstorm::transport
