// The in-memory twin of ZooKeeper, with the same semantics (see
// coordination_store.hpp). InMemoryCoordinationService is the shared tree (what
// a ZooKeeper server is); each InMemoryCoordinationStore is one client session
// on it. Local mode runs every daemon on one service; tests use it to play
// several clients, expire a session, or cut a client off.
//
// Thread contract: both classes are thread-safe. Each store delivers its
// callbacks on its own dispatch thread.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "common/callback_dispatcher.hpp"
#include "common/coordination_store.hpp"

namespace rstorm {

class InMemoryCoordinationStore;

class InMemoryCoordinationService : public std::enable_shared_from_this<InMemoryCoordinationService> {
 public:
  static std::shared_ptr<InMemoryCoordinationService> create();

  // Opens a new client session.
  std::unique_ptr<InMemoryCoordinationStore> connect();

  // Ends `session_id` as a ZooKeeper server would after a timeout: its
  // ephemeral nodes and watches are dropped; the client sees kExpired, then
  // kNewSession with a fresh id. Returns false when there is no such session.
  bool expire_session(std::int64_t session_id);

  // Number of nodes, the root included (for tests).
  std::size_t node_count() const;

 private:
  friend class InMemoryCoordinationStore;
  struct Node {
    std::string data;
    std::int32_t version = 0;
    std::int64_t ephemeral_owner = 0;
    std::int64_t sequence = 0;  // next sequential suffix for children
    std::set<std::string> children;
  };
  struct Watch {
    std::int64_t session;
    WatchCallback callback;
  };

  InMemoryCoordinationService();

  std::int64_t open_session(InMemoryCoordinationStore* client);
  void close_session(std::int64_t session);
  // REQUIRES: mutex_ held. Drops ephemerals and watches of `session`.
  void drop_session_locked(std::int64_t session);
  void fire_locked(std::multimap<std::string, Watch>& table, const std::string& path,
                   WatchEventType type);
  Status remove_locked(const std::string& path, std::int32_t expected_version);

  Result<std::string> create(std::int64_t session, std::string_view path, std::string_view data,
                             CreateMode mode);
  Result<NodeData> get(std::int64_t session, std::string_view path, WatchCallback watch);
  Result<std::int32_t> set(std::string_view path, std::string_view data,
                           std::int32_t expected_version);
  Status remove(std::string_view path, std::int32_t expected_version);
  Result<std::vector<std::string>> children(std::int64_t session, std::string_view path,
                                            WatchCallback watch);
  Result<bool> exists(std::int64_t session, std::string_view path, WatchCallback watch);

  mutable std::mutex mutex_;
  std::map<std::string, Node, std::less<>> nodes_;                 // guarded by mutex_
  std::multimap<std::string, Watch> data_watches_;                 // guarded by mutex_
  std::multimap<std::string, Watch> child_watches_;                // guarded by mutex_
  std::map<std::int64_t, InMemoryCoordinationStore*> sessions_;   // guarded by mutex_
  std::int64_t next_session_ = 0x1000;                             // guarded by mutex_
};

class InMemoryCoordinationStore final : public CoordinationStore {
 public:
  ~InMemoryCoordinationStore() override;  // closes the session

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
  std::int64_t session_id() const override { return session_.load(); }

  // Cuts this client off (operations fail with kUnavailable, listeners see
  // kDisconnected) until simulate_reconnect(), which reports kConnected. The
  // session survives, like a short network partition.
  void simulate_disconnect();
  void simulate_reconnect();

  // Blocks until every callback queued so far has run (for tests).
  void wait_for_callbacks() { dispatcher_.wait_idle(); }

 private:
  friend class InMemoryCoordinationService;
  explicit InMemoryCoordinationStore(std::shared_ptr<InMemoryCoordinationService> service);

  Status check_connected() const;
  void deliver(const WatchCallback& callback, WatchEvent event);
  // Called by the service, under its lock, when this client's session expired.
  void session_expired_locked(std::int64_t new_session);

  std::shared_ptr<InMemoryCoordinationService> service_;
  std::atomic<std::int64_t> session_{0};
  std::atomic<bool> connected_{true};
  std::atomic<bool> closed_{false};  // set by the destructor
  SessionListeners listeners_;
  CallbackDispatcher dispatcher_;  // last: stopped first
};

}  // namespace rstorm
