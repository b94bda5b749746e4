#include "nimbus/worker_tokens.hpp"

#include <charconv>
#include <cmath>

#include "common/security/secrets.hpp"
#include "common/thrift/codec.hpp"
#include "nimbus/render.hpp"

namespace rstorm::nimbus {
namespace {

constexpr std::size_t kKeyBytes = 32;  // HMAC-SHA256 with 256-bit keys

Status denied(const std::string& message) {
  return Status(ErrorCode::kPermissionDenied, message);
}

// "<created ms> <hex secret>"
std::string encode_key(std::int64_t created_ms, const std::string& secret) {
  return std::to_string(created_ms) + " " + security::to_hex(secret);
}

std::optional<std::pair<std::int64_t, std::string>> decode_key(std::string_view text) {
  const auto space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::int64_t created = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + space, created);
  if (error != std::errc() || end != text.data() + space) return std::nullopt;
  auto secret = security::from_hex(text.substr(space + 1));
  if (!secret || secret->size() != kKeyBytes) return std::nullopt;
  return std::pair{created, std::move(*secret)};
}

std::optional<std::int64_t> parse_version(std::string_view name) {
  std::int64_t v = 0;
  auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), v);
  if (error != std::errc() || end != name.data() + name.size() || v <= 0) return std::nullopt;
  return v;
}

}  // namespace

std::chrono::milliseconds worker_token_life(const Config& config) {
  constexpr std::string_view kKey = "storm.worker.token.life.time.hours";
  const double hours = config.contains(kKey) ? config.get_double(kKey) : 24.0;
  if (!(hours > 0) || !std::isfinite(hours)) {
    throw ConfigError(std::string(kKey) + " must be a positive number of hours, not " +
                      std::to_string(hours));
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(hours * 3600.0 * 1000.0));
}

thrift::WorkerToken sign_worker_token(const thrift::WorkerTokenInfo& info, std::string_view key) {
  thrift::WorkerToken token;
  token.info = encode_thrift(info);
  token.signature = security::hmac_sha256(key, token.info);
  return token;
}

Result<thrift::WorkerTokenInfo> read_worker_token_info(const thrift::WorkerToken& token) {
  return decode_thrift<thrift::WorkerTokenInfo>(token.info, "WorkerTokenInfo");
}

Result<thrift::WorkerTokenInfo> check_worker_token(
    const thrift::WorkerToken& token,
    const std::function<std::optional<std::string>(std::int64_t version)>& key_of,
    std::int64_t now_ms) {
  auto info = read_worker_token_info(token);
  if (!info) return denied("worker token cannot be read: " + info.status().message());
  const std::string what = "worker token for topology '" + info->topology_id + "'";
  const auto key = key_of(info->key_version);
  if (!key) {
    return denied(what + " is signed by key version " + std::to_string(info->key_version) +
                  ", which nimbus does not have (any more)");
  }
  if (!security::constant_time_equal(security::hmac_sha256(*key, token.info), token.signature)) {
    return denied(what + " is forged or damaged (its signature does not match)");
  }
  if (now_ms >= info->expiration_ms) {
    return denied(what + " expired at " + time_text(info->expiration_ms));
  }
  return info;
}

WorkerTokenKeys::WorkerTokenKeys(CoordinationStore& store, const ClusterPaths& paths,
                                 std::chrono::milliseconds life, Logger logger)
    : store_(store),
      dir_(paths.root() + "/worker-token-keys"),
      life_(life),
      logger_(std::move(logger)) {}

std::string WorkerTokenKeys::key_path(std::int64_t version) const {
  char name[24];
  std::snprintf(name, sizeof name, "%010lld", static_cast<long long>(version));
  return dir_ + "/" + name;
}

std::optional<WorkerTokenKeys::Key> WorkerTokenKeys::key(std::int64_t version) {
  if (auto it = keys_.find(version); it != keys_.end()) return it->second;
  if (version <= 0) return std::nullopt;
  auto node = store_.get(key_path(version));
  if (!node) return std::nullopt;
  auto decoded = decode_key(node->data);
  if (!decoded) {
    logger_.error("worker token key {} is damaged; tokens it signed are refused",
                  key_path(version));
    return std::nullopt;
  }
  Key k{decoded->first, std::move(decoded->second)};
  keys_.emplace(version, k);
  return k;
}

Result<std::pair<std::int64_t, WorkerTokenKeys::Key>> WorkerTokenKeys::signing_key(
    std::int64_t now_ms) {
  if (Status s = store_.ensure_path(dir_); !s) return s;
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto names = store_.children(dir_);
    if (!names) return names.status();
    std::int64_t newest = 0;
    std::vector<std::int64_t> versions;
    for (const std::string& name : *names) {
      if (auto v = parse_version(name)) {
        versions.push_back(*v);
        newest = std::max(newest, *v);
      }
    }
    std::optional<Key> current = newest > 0 ? key(newest) : std::nullopt;
    if (!current || now_ms >= current->created_ms + life_.count()) {
      Key made{now_ms, security::random_bytes(kKeyBytes)};
      auto created = store_.create(key_path(newest + 1), encode_key(made.created_ms, made.secret));
      if (!created) {
        if (created.code() != ErrorCode::kAlreadyExists) return created.status();
        continue;  // another nimbus made it first: read it on the next pass
      }
      keys_[newest + 1] = made;
      logger_.info("worker token key version {} made (signs for {} h)", newest + 1,
                   static_cast<double>(life_.count()) / 3'600'000.0);
      ++newest;
      current = std::move(made);
    }
    // Keys whose every token has expired go (two lives after they were made).
    for (std::int64_t v : versions) {
      if (v == newest) continue;
      auto old = key(v);
      if (!old || now_ms >= old->created_ms + 2 * life_.count()) {
        if (store_.remove(key_path(v))) {
          keys_.erase(v);
          logger_.info("worker token key version {} retired", v);
        }
      }
    }
    return std::pair{newest, *current};
  }
  return Status(ErrorCode::kUnavailable, "cannot agree on a worker token key in " + dir_);
}

Result<thrift::WorkerToken> WorkerTokenKeys::issue(const std::string& topology_id,
                                                   const std::string& user, std::int64_t now_ms) {
  std::lock_guard lock(mutex_);
  auto signing = signing_key(now_ms);
  if (!signing) return signing.status();
  thrift::WorkerTokenInfo info;
  info.topology_id = topology_id;
  info.user = user;
  info.issued_ms = now_ms;
  info.expiration_ms = now_ms + life_.count();
  info.key_version = signing->first;
  return sign_worker_token(info, signing->second.secret);
}

Result<thrift::WorkerTokenInfo> WorkerTokenKeys::verify(const thrift::WorkerToken& token,
                                                        std::int64_t now_ms) {
  std::lock_guard lock(mutex_);
  return check_worker_token(
      token,
      [&](std::int64_t version) -> std::optional<std::string> {
        auto k = key(version);
        if (!k) return std::nullopt;
        return k->secret;
      },
      now_ms);
}

}  // namespace rstorm::nimbus
