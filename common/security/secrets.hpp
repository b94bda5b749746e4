// Secrets and their proofs: random bytes from OpenSSL's CSPRNG, HMAC-SHA256,
// a comparison that takes the same time wherever the inputs differ, and hex.
// Used for the per-topology secret that authenticates workers to each other
// on the data plane (worker/transport, "Authentication").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace rstorm::security {

// `n` bytes from OpenSSL's RAND_bytes; aborts if the generator fails (no
// secret is better than a predictable one).
std::string random_bytes(std::size_t n);

// HMAC-SHA256 of `data` keyed by `key`: 32 bytes.
std::string hmac_sha256(std::string_view key, std::string_view data);

// a == b, in time that depends only on the sizes.
bool constant_time_equal(std::string_view a, std::string_view b);

std::string to_hex(std::string_view bytes);
// nullopt when `hex` has an odd length or a character that is not a hex digit.
std::optional<std::string> from_hex(std::string_view hex);

}  // namespace rstorm::security
