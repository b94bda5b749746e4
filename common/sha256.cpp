#include "common/sha256.hpp"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>

namespace rstorm {

struct Sha256::Context {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  if (context_->ctx == nullptr || EVP_DigestInit_ex(context_->ctx, EVP_sha256(), nullptr) != 1) {
    std::fprintf(stderr, "rstorm: OpenSSL cannot initialise SHA-256\n");
    std::abort();
  }
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::string_view bytes) {
  EVP_DigestUpdate(context_->ctx, bytes.data(), bytes.size());
}

std::string Sha256::hex_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context_->ctx, digest, &length);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  return out;
}

std::string Sha256::hex_of(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.hex_digest();
}

}  // namespace rstorm
