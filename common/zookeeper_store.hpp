// ZooKeeperStore: CoordinationStore on a real ZooKeeper ensemble through the
// multi-threaded ZooKeeper C client (zookeeper_mt).
//
// Connection loss: the client library reconnects by itself while the session
// lives; an operation that fails with connection loss waits for the
// reconnection (back-off from retry_interval doubling up to the ceiling) and is
// retried up to retry_times, then fails with kUnavailable naming the servers.
// A non-sequential create() retried after a connection loss that finds its own
// node (same owner session, or same data for a persistent node) succeeds. A
// sequential create() retried that way may leave a duplicate node behind, as
// with any ZooKeeper client without "protected" names.
//
// Session expiry: listeners get kExpired; the store closes the dead handle,
// opens a new session (retrying until it succeeds or the store is destroyed)
// and then reports kNewSession, on which owners re-create their ephemeral
// nodes and re-contest leadership. Operations in between fail with
// kSessionExpired or kUnavailable.
//
// Thread contract: thread-safe (see CoordinationStore). Callbacks run on the
// store's dispatch thread, never on the ZooKeeper client's threads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <shared_mutex>
#include <unordered_map>

#include "common/callback_dispatcher.hpp"
#include "common/coordination_store.hpp"
#include "common/logger.hpp"
#include "rstorm/config.hpp"

typedef struct _zhandle zhandle_t;

namespace rstorm {

struct ZooKeeperOptions {
  // Comma-separated host:port list. Default: "127.0.0.1:2181".
  std::string servers = "127.0.0.1:2181";
  // Requested session timeout (the server may clamp it). Default 20 s.
  std::chrono::milliseconds session_timeout{20000};
  // How long connect() and a re-connect after expiry wait for a session. Default 15 s.
  std::chrono::milliseconds connection_timeout{15000};
  // Attempts per operation on connection loss. Default 5.
  int retry_times = 5;
  // First wait for reconnection; doubles per attempt up to the ceiling. Default 1 s / 30 s.
  std::chrono::milliseconds retry_interval{1000};
  std::chrono::milliseconds retry_interval_ceiling{30000};
  // Digest authentication (storm.zookeeper.auth.scheme "digest",
  // storm.zookeeper.auth.payload "user:password"): every session adds it, and
  // every node this store creates carries the ACL "all for this digest" and
  // nothing else, so a client without the payload can neither read the
  // cluster's state (assignments, heartbeats, errors) nor change it.
  // Empty: no authentication, open ACLs.
  std::string auth_payload;

  // From storm.zookeeper.{servers,port,session.timeout,connection.timeout,
  // retry.times,retry.interval,retry.intervalceiling.millis,auth.scheme,
  // auth.payload}. Throws ConfigError on a wrong type, a scheme other than
  // "digest" or a payload that is not user:password.
  static ZooKeeperOptions from_config(const Config& config);
};

class ZooKeeperStore final : public CoordinationStore {
 public:
  // Connects and waits for the first session (kUnavailable naming the servers
  // after connection_timeout).
  static Result<std::unique_ptr<ZooKeeperStore>> connect(ZooKeeperOptions options, Logger logger);
  ~ZooKeeperStore() override;

  Result<std::string> create(std::string_view path, std::string_view data,
                             CreateMode mode = CreateMode::kPersistent) override;
  Result<NodeData> get(std::string_view path, WatchCallback watch = nullptr) override;
  Result<std::int32_t> set(std::string_view path, std::string_view data,
                           std::int32_t expected_version = kAnyVersion) override;
  Status remove(std::string_view path, std::int32_t expected_version = kAnyVersion) override;
  Result<std::vector<std::string>> children(std::string_view path,
                                            WatchCallback watch = nullptr) override;
  Result<bool> exists(std::string_view path, WatchCallback watch = nullptr) override;
  std::uint64_t add_session_listener(SessionCallback listener) override;
  void remove_session_listener(std::uint64_t id) override;
  std::int64_t session_id() const override;
  void stop_retrying() override;

  // The session password (16 bytes), e.g. for a test that ends this session
  // from another connection to force an expiry.
  std::string session_password() const;
  bool is_connected() const;

 private:
  ZooKeeperStore(ZooKeeperOptions options, Logger logger);

  static void on_session_event(zhandle_t* zh, int type, int state, const char* path, void* ctx);
  static void on_watch_event(zhandle_t* zh, int type, int state, const char* path, void* ctx);

  // Opens a new handle and waits for its session.
  // REQUIRES: handle_mutex_ held exclusively and handle_ == nullptr.
  Status open_session();
  void recover_expired_session();
  // Runs `op` on the current handle, retrying on connection loss.
  int with_retries(std::string_view what, std::string_view path,
                   const std::function<int(zhandle_t*)>& op, int* attempts_out = nullptr);
  void* register_watch(WatchCallback callback);
  void unregister_watch(void* token);
  Status to_status(int rc, std::string_view what, std::string_view path) const;

  const ZooKeeperOptions options_;
  const Logger logger_;
  // The ACL of the nodes this store creates (options_.auth_payload); null:
  // open ACLs.
  struct Acl;
  std::unique_ptr<Acl> acl_;

  mutable std::shared_mutex handle_mutex_;
  zhandle_t* handle_ = nullptr;  // guarded by handle_mutex_

  // What ZooKeeper's callbacks get as context: which handle they concern.
  struct HandleContext {
    ZooKeeperStore* store;
    std::uint64_t generation;
  };

  mutable std::mutex state_mutex_;
  std::condition_variable state_cv_;
  std::uint64_t generation_ = 0;  // of handle_; guarded by state_mutex_
  std::vector<std::unique_ptr<HandleContext>> contexts_;  // guarded by state_mutex_
  int state_ = 0;                 // ZOO_*_STATE of handle_; guarded by state_mutex_
  bool recovering_ = false;       // a new session is being set up; guarded by state_mutex_
  bool stopping_ = false;         // guarded by state_mutex_
  bool no_retries_ = false;       // stop_retrying(); guarded by state_mutex_
  std::int64_t session_id_ = 0;   // guarded by state_mutex_
  std::string session_password_;  // guarded by state_mutex_

  std::mutex watches_mutex_;
  std::unordered_map<std::uintptr_t, WatchCallback> watches_;  // guarded by watches_mutex_
  std::uintptr_t next_watch_ = 1;                              // guarded by watches_mutex_

  SessionListeners listeners_;
  CallbackDispatcher dispatcher_;
};

}  // namespace rstorm
