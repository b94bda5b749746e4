#include "common/zookeeper_store.hpp"

#include <openssl/evp.h>
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <mutex>
#include <optional>
#include <string_view>

namespace rstorm {
namespace {

bool is_connection_loss(int rc) { return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT; }

int create_flags(CreateMode mode) {
  switch (mode) {
    case CreateMode::kPersistent: return ZOO_PERSISTENT;
    case CreateMode::kEphemeral: return ZOO_EPHEMERAL;
    case CreateMode::kPersistentSequential: return ZOO_PERSISTENT_SEQUENTIAL;
    case CreateMode::kEphemeralSequential: return ZOO_EPHEMERAL_SEQUENTIAL;
  }
  return ZOO_PERSISTENT;
}

bool is_sequential(CreateMode mode) {
  return mode == CreateMode::kPersistentSequential || mode == CreateMode::kEphemeralSequential;
}

std::once_flag log_level_once;

// The ZooKeeper C client's own log lines, through the first store's logger
// (its format, its file) and at most one in 30 s: during an outage the
// client logs every reconnect attempt, three a second.
struct ClientLog {
  std::mutex mutex;
  std::optional<Logger> logger;
  std::chrono::steady_clock::time_point next;
  int suppressed = 0;
};
ClientLog& client_log() {
  static ClientLog* log = new ClientLog();  // never destroyed: the client's threads may outlive main
  return *log;
}

extern "C" void on_zookeeper_client_log(const char* message) {
  ClientLog& log = client_log();
  std::lock_guard lock(log.mutex);
  if (!log.logger) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < log.next) {
    ++log.suppressed;
    return;
  }
  std::string_view text(message);
  // Its own timestamp and thread prefix: from the level ("ZOO_ERROR@...") on.
  if (const std::size_t at = text.find("ZOO_"); at != std::string_view::npos) text.remove_prefix(at);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  if (log.suppressed > 0) {
    log.logger->warn("ZooKeeper client: {} ({} more of its lines in the last 30 s not logged)",
                     text, log.suppressed);
  } else {
    log.logger->warn("ZooKeeper client: {}", text);
  }
  log.suppressed = 0;
  log.next = now + std::chrono::seconds(30);
}

}  // namespace

ZooKeeperOptions ZooKeeperOptions::from_config(const Config& config) {
  ZooKeeperOptions o;
  const auto port = config.get_int(keys::kZookeeperPort, 2181);
  std::string servers;
  for (const auto& host : config.get_string_list(keys::kZookeeperServers)) {
    if (!servers.empty()) servers += ',';
    servers += host.find(':') == std::string::npos ? host + ":" + std::to_string(port) : host;
  }
  o.servers = servers;
  o.session_timeout = std::chrono::milliseconds(
      config.get_int(keys::kZookeeperSessionTimeout, o.session_timeout.count()));
  o.connection_timeout = std::chrono::milliseconds(
      config.get_int("storm.zookeeper.connection.timeout", o.connection_timeout.count()));
  o.retry_times = static_cast<int>(config.get_int("storm.zookeeper.retry.times", o.retry_times));
  o.retry_interval = std::chrono::milliseconds(
      config.get_int("storm.zookeeper.retry.interval", o.retry_interval.count()));
  o.retry_interval_ceiling = std::chrono::milliseconds(config.get_int(
      "storm.zookeeper.retry.intervalceiling.millis", o.retry_interval_ceiling.count()));
  const Config::Entry* scheme = config.find("storm.zookeeper.auth.scheme");
  if (scheme != nullptr && !scheme->value.is_null()) {
    const std::string name = config.get_string("storm.zookeeper.auth.scheme");
    if (name != "digest") {
      throw ConfigError("storm.zookeeper.auth.scheme: '" + name + "' (" + scheme->origin +
                        ") is not supported; use \"digest\" or null");
    }
    const Config::Entry* payload = config.find("storm.zookeeper.auth.payload");
    if (payload == nullptr || payload->value.is_null()) {
      throw ConfigError(
          "storm.zookeeper.auth.scheme is \"digest\" but storm.zookeeper.auth.payload is not set "
          "(want \"user:password\")");
    }
    o.auth_payload = config.get_string("storm.zookeeper.auth.payload");
    const auto colon = o.auth_payload.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == o.auth_payload.size()) {
      throw ConfigError("storm.zookeeper.auth.payload (" + payload->origin +
                        ") is not \"user:password\"");
    }
  }
  return o;
}

namespace {

// ZooKeeper's digest id for "user:password": user:base64(sha1(user:password)).
std::string digest_id(const std::string& payload) {
  unsigned char sha[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(payload.data(), payload.size(), sha, &size, EVP_sha1(), nullptr);
  std::string base64(4 * ((size + 2) / 3) + 1, '\0');
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(base64.data()), sha, static_cast<int>(size));
  base64.resize(static_cast<std::size_t>(n));
  return payload.substr(0, payload.find(':')) + ":" + base64;
}

}  // namespace

struct ZooKeeperStore::Acl {
  std::string digest;
  ACL entries[1];
  ACL_vector vector;
};

ZooKeeperStore::ZooKeeperStore(ZooKeeperOptions options, Logger logger)
    : options_(std::move(options)), logger_(std::move(logger)) {
  if (!options_.auth_payload.empty()) {
    acl_ = std::make_unique<Acl>();
    acl_->digest = digest_id(options_.auth_payload);
    acl_->entries[0] = ACL{ZOO_PERM_ALL, Id{const_cast<char*>("digest"), acl_->digest.data()}};
    acl_->vector = ACL_vector{1, acl_->entries};
  }
}

Result<std::unique_ptr<ZooKeeperStore>> ZooKeeperStore::connect(ZooKeeperOptions options,
                                                                 Logger logger) {
  std::call_once(log_level_once, [&] {
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
    std::lock_guard lock(client_log().mutex);
    client_log().logger = logger;
  });
  std::unique_ptr<ZooKeeperStore> store(new ZooKeeperStore(std::move(options), std::move(logger)));
  {
    std::unique_lock lock(store->handle_mutex_);
    if (Status s = store->open_session(); !s) return s;
  }
  store->logger_.info("connected to ZooKeeper at {}, session 0x{:x}", store->options_.servers,
                      store->session_id());
  return store;
}

ZooKeeperStore::~ZooKeeperStore() {
  {
    std::lock_guard lock(state_mutex_);
    stopping_ = true;
  }
  state_cv_.notify_all();
  dispatcher_.stop();
  std::unique_lock lock(handle_mutex_);
  if (handle_ != nullptr) zookeeper_close(handle_);
  handle_ = nullptr;
}

void ZooKeeperStore::stop_retrying() {
  {
    std::lock_guard lock(state_mutex_);
    no_retries_ = true;
  }
  state_cv_.notify_all();
}

Status ZooKeeperStore::open_session() {
  HandleContext* context;
  {
    std::lock_guard lock(state_mutex_);
    if (stopping_) return Status(ErrorCode::kUnavailable, "ZooKeeper store is shutting down");
    contexts_.push_back(std::make_unique<HandleContext>(HandleContext{this, ++generation_}));
    context = contexts_.back().get();
    state_ = 0;
  }
  const auto timeout_ms = static_cast<int>(options_.session_timeout.count());
  zhandle_t* zh =
      zookeeper_init2(options_.servers.c_str(), &on_session_event, timeout_ms, nullptr, context, 0,
                      &on_zookeeper_client_log);
  if (zh == nullptr) {
    return Status(ErrorCode::kUnavailable, "cannot start a ZooKeeper client for '" +
                                               options_.servers + "': " + std::strerror(errno));
  }
  std::unique_lock lock(state_mutex_);
  const bool up = state_cv_.wait_for(lock, options_.connection_timeout,
                                     [&] { return state_ == ZOO_CONNECTED_STATE || stopping_; });
  if (!up || stopping_) {
    lock.unlock();
    zookeeper_close(zh);
    return Status(ErrorCode::kUnavailable,
                  "no ZooKeeper session with " + options_.servers + " within " +
                      std::to_string(options_.connection_timeout.count()) + " ms");
  }
  lock.unlock();
  if (!options_.auth_payload.empty()) {
    // The client library sends it again after each reconnection of this handle.
    std::promise<int> added;
    auto done = added.get_future();
    const int rc = zoo_add_auth(
        zh, "digest", options_.auth_payload.data(), static_cast<int>(options_.auth_payload.size()),
        [](int result, const void* data) {
          static_cast<std::promise<int>*>(const_cast<void*>(data))->set_value(result);
        },
        &added);
    const bool answered =
        rc == ZOK && done.wait_for(options_.connection_timeout) == std::future_status::ready;
    const int result = answered ? done.get() : rc;
    if (!answered || result != ZOK) {
      zookeeper_close(zh);
      return Status(ErrorCode::kUnavailable, "ZooKeeper at " + options_.servers +
                                                 " did not accept the digest of " +
                                                 "storm.zookeeper.auth.payload: " + zerror(result));
    }
  }
  handle_ = zh;
  return Status::ok();
}

void ZooKeeperStore::on_session_event(zhandle_t* zh, int type, int state, const char*, void* ctx) {
  if (type != ZOO_SESSION_EVENT) return;
  auto* context = static_cast<HandleContext*>(ctx);
  ZooKeeperStore* self = context->store;
  std::lock_guard lock(self->state_mutex_);
  if (context->generation != self->generation_ || self->stopping_) return;
  const int previous = self->state_;
  self->state_ = state;
  self->state_cv_.notify_all();
  if (state == ZOO_CONNECTED_STATE) {
    const clientid_t* id = zoo_client_id(zh);
    self->session_id_ = id->client_id;
    self->session_password_.assign(id->passwd, sizeof(id->passwd));
    // The first connection of a handle is reported by connect() or, after an
    // expiry, as kNewSession by the recovery task.
    if (previous != 0 && previous != ZOO_CONNECTED_STATE && !self->recovering_) {
      self->logger_.info("reconnected to ZooKeeper, session 0x{:x}", id->client_id);
      self->dispatcher_.post([self] { self->listeners_.notify(SessionEvent::kConnected); });
    }
  } else if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
    if (!self->recovering_) {
      self->recovering_ = true;
      self->logger_.warn("ZooKeeper session 0x{:x} {}", self->session_id_,
                         state == ZOO_AUTH_FAILED_STATE ? "failed authentication" : "expired");
      self->dispatcher_.post([self] { self->recover_expired_session(); });
    }
  } else if (previous == ZOO_CONNECTED_STATE) {
    self->logger_.warn("lost connection to ZooKeeper at {}", self->options_.servers);
    self->dispatcher_.post([self] { self->listeners_.notify(SessionEvent::kDisconnected); });
  }
}

void ZooKeeperStore::recover_expired_session() {
  listeners_.notify(SessionEvent::kExpired);
  {
    std::lock_guard lock(watches_mutex_);
    watches_.clear();  // the server dropped them with the session
  }
  auto backoff = options_.retry_interval;
  for (;;) {
    {
      std::unique_lock handle_lock(handle_mutex_);
      if (handle_ != nullptr) zookeeper_close(handle_);
      handle_ = nullptr;
      Status s = open_session();
      if (s) break;
      logger_.warn("cannot open a new ZooKeeper session yet: {}", s.message());
    }
    std::unique_lock lock(state_mutex_);
    if (state_cv_.wait_for(lock, backoff, [&] { return stopping_; })) return;
    backoff = std::min(backoff * 2, options_.retry_interval_ceiling);
  }
  std::int64_t id;
  {
    std::lock_guard lock(state_mutex_);
    recovering_ = false;
    id = session_id_;
  }
  logger_.info("new ZooKeeper session 0x{:x} after expiry", id);
  listeners_.notify(SessionEvent::kNewSession);
}

void ZooKeeperStore::on_watch_event(zhandle_t* zh, int type, int, const char* path, void* ctx) {
  if (type == ZOO_SESSION_EVENT || type == ZOO_NOTWATCHING_EVENT) return;
  auto* self = static_cast<const HandleContext*>(zoo_get_context(zh))->store;
  WatchCallback callback;
  {
    std::lock_guard lock(self->watches_mutex_);
    auto it = self->watches_.find(reinterpret_cast<std::uintptr_t>(ctx));
    if (it == self->watches_.end()) return;  // already fired or dropped with its session
    callback = std::move(it->second);
    self->watches_.erase(it);
  }
  WatchEventType event_type = WatchEventType::kDataChanged;
  if (type == ZOO_CREATED_EVENT) event_type = WatchEventType::kCreated;
  if (type == ZOO_DELETED_EVENT) event_type = WatchEventType::kDeleted;
  if (type == ZOO_CHILD_EVENT) event_type = WatchEventType::kChildrenChanged;
  self->dispatcher_.post([callback = std::move(callback), event = WatchEvent{event_type, path}] {
    callback(event);
  });
}

void* ZooKeeperStore::register_watch(WatchCallback callback) {
  if (!callback) return nullptr;
  std::lock_guard lock(watches_mutex_);
  const std::uintptr_t token = next_watch_++;
  watches_.emplace(token, std::move(callback));
  return reinterpret_cast<void*>(token);
}

void ZooKeeperStore::unregister_watch(void* token) {
  if (token == nullptr) return;
  std::lock_guard lock(watches_mutex_);
  watches_.erase(reinterpret_cast<std::uintptr_t>(token));
}

int ZooKeeperStore::with_retries(std::string_view, std::string_view,
                                 const std::function<int(zhandle_t*)>& op, int* attempts_out) {
  auto backoff = options_.retry_interval;
  int rc = ZINVALIDSTATE;
  for (int attempt = 1; attempt <= std::max(1, options_.retry_times); ++attempt) {
    if (attempts_out) *attempts_out = attempt;
    {
      std::shared_lock lock(handle_mutex_);
      rc = handle_ == nullptr ? ZINVALIDSTATE : op(handle_);
    }
    if (!is_connection_loss(rc) || attempt == options_.retry_times) return rc;
    std::unique_lock lock(state_mutex_);
    state_cv_.wait_for(lock, backoff, [&] {
      return state_ == ZOO_CONNECTED_STATE || stopping_ || recovering_ || no_retries_;
    });
    if (stopping_ || no_retries_) return rc;
    backoff = std::min(backoff * 2, options_.retry_interval_ceiling);
  }
  return rc;
}

Status ZooKeeperStore::to_status(int rc, std::string_view what, std::string_view path) const {
  const std::string p(path);
  switch (rc) {
    case ZOK: return Status::ok();
    case ZNONODE:
      if (what == "create") {
        return Status(ErrorCode::kNotFound,
                      "cannot create node " + p + ": parent " + parent_path(path) +
                          " does not exist");
      }
      return Status(ErrorCode::kNotFound, "node " + p + " does not exist");
    case ZNODEEXISTS: return Status(ErrorCode::kAlreadyExists, "node " + p + " already exists");
    case ZBADVERSION:
      return Status(ErrorCode::kVersionConflict, "node " + p + " is not at the expected version");
    case ZNOTEMPTY:
      return Status(ErrorCode::kNotEmpty, "node " + p + " has children and cannot be removed");
    case ZNOCHILDRENFOREPHEMERALS:
      return Status(ErrorCode::kInvalidArgument, "cannot create node " + p + ": parent " +
                                                     parent_path(path) +
                                                     " is ephemeral and cannot have children");
    case ZBADARGUMENTS:
      return Status(ErrorCode::kInvalidArgument, "invalid node path '" + p + "'");
    case ZNOAUTH:
      return Status(ErrorCode::kPermissionDenied,
                    "ZooKeeper refused to " + std::string(what) + " node " + p +
                        ": its ACL does not allow this client (storm.zookeeper.auth.payload)");
    case ZSESSIONEXPIRED:
    case ZINVALIDSTATE:
    case ZAUTHFAILED:
    case ZCLOSING:
      return Status(ErrorCode::kSessionExpired, "ZooKeeper session expired during " +
                                                    std::string(what) + " " + p);
    case ZCONNECTIONLOSS:
    case ZOPERATIONTIMEOUT: {
      bool retried = true;
      {
        std::lock_guard lock(state_mutex_);
        retried = !no_retries_;
      }
      return Status(ErrorCode::kUnavailable,
                    "ZooKeeper at " + options_.servers + " unreachable: " + std::string(what) + " " +
                        p +
                        (retried ? " failed after " + std::to_string(options_.retry_times) +
                                       " attempts ("
                                 : std::string(" failed, not retried while stopping (")) +
                        zerror(rc) + ")");
    }
    default:
      return Status(ErrorCode::kInternal,
                    "ZooKeeper " + std::string(what) + " " + p + " failed: " + zerror(rc));
  }
}

Result<std::string> ZooKeeperStore::create(std::string_view path, std::string_view data,
                                           CreateMode mode) {
  if (Status s = validate_path(path); !s) return s;
  const std::string p(path);
  std::string created(p.size() + 16, '\0');
  bool lost = false;
  int rc = with_retries("create", path, [&](zhandle_t* zh) {
    int r = zoo_create(zh, p.c_str(), data.data(), static_cast<int>(data.size()),
                       acl_ ? &acl_->vector : &ZOO_OPEN_ACL_UNSAFE, create_flags(mode),
                       created.data(), static_cast<int>(created.size()));
    lost = lost || is_connection_loss(r);
    return r;
  });
  if (rc == ZNODEEXISTS && lost && !is_sequential(mode)) {
    // The attempt that lost its connection may have created the node.
    auto existing = get(path);
    const bool ephemeral = mode == CreateMode::kEphemeral;
    if (existing && existing->data == data &&
        (ephemeral ? existing->ephemeral_owner == session_id() : existing->ephemeral_owner == 0)) {
      return p;
    }
  }
  if (rc != ZOK) return to_status(rc, "create", path);
  created.resize(std::strlen(created.c_str()));
  return created;
}

Result<NodeData> ZooKeeperStore::get(std::string_view path, WatchCallback watch) {
  if (Status s = validate_path(path); !s) return s;
  const std::string p(path);
  void* token = register_watch(std::move(watch));
  std::string buffer(64 * 1024, '\0');
  Stat stat{};
  int length = 0;
  int rc = with_retries("get", path, [&](zhandle_t* zh) {
    length = static_cast<int>(buffer.size());
    return zoo_wget(zh, p.c_str(), token ? &on_watch_event : nullptr, token, buffer.data(),
                    &length, &stat);
  });
  // Larger than the first buffer: read again at the size the server reported.
  while (rc == ZOK && stat.dataLength > length) {
    buffer.assign(static_cast<std::size_t>(stat.dataLength), '\0');
    rc = with_retries("get", path, [&](zhandle_t* zh) {
      length = static_cast<int>(buffer.size());
      return zoo_get(zh, p.c_str(), 0, buffer.data(), &length, &stat);
    });
  }
  if (rc != ZOK) {
    unregister_watch(token);
    return to_status(rc, "get", path);
  }
  buffer.resize(static_cast<std::size_t>(std::max(length, 0)));
  return NodeData{std::move(buffer), stat.version, stat.ephemeralOwner};
}

Result<std::int32_t> ZooKeeperStore::set(std::string_view path, std::string_view data,
                                         std::int32_t expected_version) {
  if (Status s = validate_path(path); !s) return s;
  const std::string p(path);
  Stat stat{};
  bool lost = false;
  int rc = with_retries("set", path, [&](zhandle_t* zh) {
    int r = zoo_set2(zh, p.c_str(), data.data(), static_cast<int>(data.size()), expected_version,
                     &stat);
    lost = lost || is_connection_loss(r);
    return r;
  });
  if (rc == ZBADVERSION && lost) {
    // The attempt that lost its connection may have applied the write.
    auto now = get(path);
    if (now && now->data == data && now->version == expected_version + 1) return now->version;
  }
  if (rc != ZOK) return to_status(rc, "set", path);
  return stat.version;
}

Status ZooKeeperStore::remove(std::string_view path, std::int32_t expected_version) {
  if (Status s = validate_path(path); !s) return s;
  const std::string p(path);
  bool lost = false;
  int rc = with_retries("remove", path, [&](zhandle_t* zh) {
    int r = zoo_delete(zh, p.c_str(), expected_version);
    lost = lost || is_connection_loss(r);
    return r;
  });
  if (rc == ZNONODE && lost) return Status::ok();  // the lost attempt removed it
  return to_status(rc, "remove", path);
}

Result<std::vector<std::string>> ZooKeeperStore::children(std::string_view path,
                                                          WatchCallback watch) {
  if (Status s = validate_path(path); !s) return s;
  const std::string p(path);
  void* token = register_watch(std::move(watch));
  std::vector<std::string> names;
  int rc = with_retries("children", path, [&](zhandle_t* zh) {
    String_vector list{};
    int r = zoo_wget_children(zh, p.c_str(), token ? &on_watch_event : nullptr, token, &list);
    if (r == ZOK) {
      names.assign(list.data, list.data + list.count);
      deallocate_String_vector(&list);
    }
    return r;
  });
  if (rc != ZOK) {
    unregister_watch(token);
    return to_status(rc, "children", path);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<bool> ZooKeeperStore::exists(std::string_view path, WatchCallback watch) {
  if (Status s = validate_path(path); !s) return s;
  const std::string p(path);
  void* token = register_watch(std::move(watch));
  Stat stat{};
  int rc = with_retries("exists", path, [&](zhandle_t* zh) {
    return zoo_wexists(zh, p.c_str(), token ? &on_watch_event : nullptr, token, &stat);
  });
  if (rc == ZOK) return true;
  if (rc == ZNONODE) return false;
  unregister_watch(token);
  return to_status(rc, "exists", path);
}

std::uint64_t ZooKeeperStore::add_session_listener(SessionCallback listener) {
  return listeners_.add(std::move(listener));
}

void ZooKeeperStore::remove_session_listener(std::uint64_t id) { listeners_.remove(id); }

std::int64_t ZooKeeperStore::session_id() const {
  std::lock_guard lock(state_mutex_);
  return session_id_;
}

std::string ZooKeeperStore::session_password() const {
  std::lock_guard lock(state_mutex_);
  return session_password_;
}

bool ZooKeeperStore::is_connected() const {
  std::lock_guard lock(state_mutex_);
  return state_ == ZOO_CONNECTED_STATE;
}

}  // namespace rstorm
