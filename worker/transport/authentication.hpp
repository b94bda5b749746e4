// Authentication on the data plane (storm.messaging.netty.authentication):
// sender and receiver each prove that they hold the topology's secret, an
// HMAC-SHA256 challenge and response over both sides' nonces, so a proof
// cannot be replayed on another connection. See README.md, "Authentication".
#pragma once

#include <string>

#include "common/security/secrets.hpp"

namespace rstorm::transport {

inline constexpr std::size_t kNonceBytes = 32;

// What the receiver sends in its Challenge.
inline std::string receiver_proof(const std::string& secret, const std::string& topology_id,
                                  const std::string& sender_nonce,
                                  const std::string& receiver_nonce) {
  return security::hmac_sha256(secret, std::string("rstorm-data-plane-server", 25) + topology_id +
                                           sender_nonce + receiver_nonce);
}

// What the sender sends in its Proof.
inline std::string sender_proof(const std::string& secret, const std::string& topology_id,
                                const std::string& sender_nonce,
                                const std::string& receiver_nonce) {
  return security::hmac_sha256(secret, std::string("rstorm-data-plane-client", 25) + topology_id +
                                           sender_nonce + receiver_nonce);
}

}  // namespace rstorm::transport
