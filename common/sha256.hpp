// Sha256: incremental SHA-256 (OpenSSL EVP) with a lowercase hex digest, used
// to check topology code end to end (CLI upload, nimbus commit, supervisor
// download). Thread-compatible.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace rstorm {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;

  void update(std::string_view bytes);
  // The digest of everything updated so far, as 64 lowercase hex digits.
  // REQUIRES: called once; the object is spent afterwards.
  std::string hex_digest();

  static std::string hex_of(std::string_view bytes);

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

}  // namespace rstorm
