// CoordinationStore: the one interface rstorm's daemons use for cluster
// coordination (ZooKeeper's data model: a tree of nodes with data, versions,
// ephemeral and sequential nodes, watches, sessions). Two implementations:
// ZooKeeperStore (common/zookeeper_store.hpp) and InMemoryCoordinationStore
// (common/in_memory_coordination.hpp, used by local mode and tests); both pass
// the same contract tests.
//
// Semantics shared by both implementations:
//  - Paths are absolute ("/rstorm/supervisors/s1"); a parent must exist
//    before a child is created (see ensure_path()). Data is opaque bytes.
//  - Versions start at 0 and grow by one per set(); pass an expected version to
//    set()/remove() for compare-and-set (kVersionConflict when it moved on),
//    or kAnyVersion.
//  - Sequential nodes get a 10-digit, zero-padded, monotonically increasing
//    suffix per parent ("n_0000000003"); create() returns the full path.
//  - Ephemeral nodes belong to the session and vanish when it ends (close or
//    expiry); they cannot have children.
//  - Watches are one-shot, as in ZooKeeper: a watch set by get()/exists()
//    fires once on the next create/delete/data change of that node; a watch
//    set by children() fires once on the next child added or removed (or the
//    node's deletion). Re-arm by reading again. After SessionEvent::kExpired
//    every watch of the old session is gone and never fires: re-arm them on
//    kNewSession.
//  - Session events: kConnected (first connect, or reconnected within the same
//    session: ephemerals and watches intact), kDisconnected (connection lost,
//    session may survive; operations retry then fail with kUnavailable),
//    kExpired (the session is gone with its ephemerals and watches), then
//    kNewSession (a fresh session is up: re-create ephemerals, re-contest
//    leadership, re-arm watches).
//
// Thread contract: thread-safe. Watch and session callbacks run on one
// dispatch thread owned by the store, one at a time, in event order; they may
// call back into the store but must not block for long. No callback runs after
// the store's destructor returns.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.hpp"

namespace rstorm {

enum class CreateMode { kPersistent, kEphemeral, kPersistentSequential, kEphemeralSequential };

enum class WatchEventType { kCreated, kDeleted, kDataChanged, kChildrenChanged };

struct WatchEvent {
  WatchEventType type;
  std::string path;  // the watched path
};

enum class SessionEvent { kConnected, kDisconnected, kExpired, kNewSession };

std::string_view watch_event_type_name(WatchEventType type);
std::string_view session_event_name(SessionEvent event);

using WatchCallback = std::function<void(const WatchEvent&)>;
using SessionCallback = std::function<void(SessionEvent)>;

struct NodeData {
  std::string data;
  std::int32_t version = 0;
  std::int64_t ephemeral_owner = 0;  // session id, 0 for a persistent node
};

inline constexpr std::int32_t kAnyVersion = -1;

class CoordinationStore {
 public:
  virtual ~CoordinationStore() = default;

  // Creates `path`; returns the created path (with the suffix when sequential).
  // kAlreadyExists, kNotFound (no parent), kInvalidArgument (bad path, or a
  // child of an ephemeral node).
  virtual Result<std::string> create(std::string_view path, std::string_view data,
                                     CreateMode mode = CreateMode::kPersistent) = 0;
  // Data and version of `path`; kNotFound. A watch is set only when the node exists.
  virtual Result<NodeData> get(std::string_view path, WatchCallback watch = nullptr) = 0;
  // Replaces the data; returns the new version. kNotFound, kVersionConflict.
  virtual Result<std::int32_t> set(std::string_view path, std::string_view data,
                                   std::int32_t expected_version = kAnyVersion) = 0;
  // Deletes a node without children. kNotFound, kVersionConflict, kNotEmpty.
  virtual Status remove(std::string_view path, std::int32_t expected_version = kAnyVersion) = 0;
  // Child names (not paths), sorted. kNotFound. A watch is set only when the node exists.
  virtual Result<std::vector<std::string>> children(std::string_view path,
                                                    WatchCallback watch = nullptr) = 0;
  // Whether `path` exists. The watch is set either way (fires on creation too).
  virtual Result<bool> exists(std::string_view path, WatchCallback watch = nullptr) = 0;

  // Registers a listener for session events; returns an id for
  // remove_session_listener(). Listeners are called on the dispatch thread.
  virtual std::uint64_t add_session_listener(SessionCallback listener) = 0;
  // After it returns, the listener is not called again (unless this runs on
  // the dispatch thread itself, inside that very listener's call).
  virtual void remove_session_listener(std::uint64_t id) = 0;

  // The current session's id (changes after an expiry); 0 when there is none.
  virtual std::int64_t session_id() const = 0;

  // Its owner is shutting down: from now on a call that cannot reach the
  // servers fails after one attempt instead of retrying with back-off (a
  // daemon asked to stop while ZooKeeper is down then stops at once; its
  // ephemeral nodes go when its session ends). A no-op where nothing retries.
  virtual void stop_retrying() {}

  // Creates every missing persistent node along `path` (like mkdir -p), with
  // empty data. Existing nodes are left as they are.
  Status ensure_path(std::string_view path);
  // Deletes `path` and everything below it. Missing nodes are not an error.
  Status remove_recursive(std::string_view path);
};

// "/a/b" -> "/a"; "/a" -> "/".
std::string parent_path(std::string_view path);
// "/a" + "b" -> "/a/b"; "/" + "b" -> "/b".
std::string join_path(std::string_view parent, std::string_view child);
// OK when `path` is absolute, has no empty, "." or ".." component and no
// trailing slash (except the root "/").
Status validate_path(std::string_view path);

}  // namespace rstorm
