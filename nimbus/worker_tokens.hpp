// Worker tokens (storm.worker.token.*): what a topology's workers present to
// nimbus instead of a certificate of their own, so that a worker (which runs
// the user's code) never holds its supervisor's key.
//
// A token is a WorkerTokenInfo (topology, owner, issue and expiry times, key
// version), compact-encoded, and its HMAC-SHA256 under one of nimbus's
// 256-bit keys. The keys live in the coordination store under
// <root>/worker-token-keys/<version> (with the store's digest ACL in secure
// mode), so every nimbus of an HA group signs and checks with the same keys.
// A key signs for one token life, then a new one takes over; a key is
// deleted once every token it signed has expired (two lives after it was
// made). Nimbus hands a fresh token to a supervisor with the topology's
// secret (getTopologyInfo over mutual TLS); the supervisor renews its workers'
// tokens when less than half their life is left, as Storm does.
//
// Thread contract: WorkerTokenKeys is thread-safe; the free functions are pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/cluster_paths.hpp"
#include "common/coordination_store.hpp"
#include "common/logger.hpp"
#include "common/status.hpp"
#include "rstorm/config.hpp"
#include "rstorm_thrift/rstorm_types.h"

namespace rstorm::nimbus {

// storm.worker.token.life.time.hours (default 24; fractions allowed). Throws
// ConfigError on a wrong type or a value that is not positive.
std::chrono::milliseconds worker_token_life(const Config& config);

// `info` signed with `key`.
thrift::WorkerToken sign_worker_token(const thrift::WorkerTokenInfo& info, std::string_view key);

// The info of `token` when its signature is genuine under the key its
// version names (`key_of`; nullopt: no such key) and it has not expired at
// `now_ms`. kPermissionDenied otherwise, saying what is wrong: "worker token
// for topology 'wc-1' is forged or damaged (its signature does not match)",
// "... expired at 2026-11-27 10:00:00 UTC", "... signed by key version 3, which
// nimbus does not have (any more)", "worker token cannot be read: ...".
Result<thrift::WorkerTokenInfo> check_worker_token(
    const thrift::WorkerToken& token,
    const std::function<std::optional<std::string>(std::int64_t version)>& key_of,
    std::int64_t now_ms);

// The info of a token without checking it (a supervisor reading when to
// renew). kInvalidArgument when it cannot be decoded.
Result<thrift::WorkerTokenInfo> read_worker_token_info(const thrift::WorkerToken& token);

class WorkerTokenKeys {
 public:
  // REQUIRES: `store` outlives this.
  WorkerTokenKeys(CoordinationStore& store, const ClusterPaths& paths,
                  std::chrono::milliseconds life, Logger logger);

  std::chrono::milliseconds life() const { return life_; }

  // A token for the workers of `topology_id`, owned by `user`, valid for
  // life() from `now_ms`. Makes (or rotates to) a key when needed.
  Result<thrift::WorkerToken> issue(const std::string& topology_id, const std::string& user,
                                    std::int64_t now_ms);
  // check_worker_token() against the stored keys.
  Result<thrift::WorkerTokenInfo> verify(const thrift::WorkerToken& token, std::int64_t now_ms);

 private:
  struct Key {
    std::int64_t created_ms = 0;
    std::string secret;  // 32 bytes
  };
  // The newest key, made when there is none or it is older than life_; keys
  // whose tokens have all expired are deleted. REQUIRES: mutex_ held.
  Result<std::pair<std::int64_t, Key>> signing_key(std::int64_t now_ms);
  // REQUIRES: mutex_ held.
  std::optional<Key> key(std::int64_t version);
  std::string key_path(std::int64_t version) const;

  CoordinationStore& store_;
  const std::string dir_;
  const std::chrono::milliseconds life_;
  Logger logger_;
  std::mutex mutex_;
  std::map<std::int64_t, Key> keys_;  // GUARDED_BY(mutex_): the ones read or made
};

}  // namespace rstorm::nimbus
