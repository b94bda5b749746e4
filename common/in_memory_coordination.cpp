#include "common/in_memory_coordination.hpp"

#include <cstdio>

namespace rstorm {
namespace {

Status not_found(std::string_view path) {
  return Status(ErrorCode::kNotFound, "node " + std::string(path) + " does not exist");
}

Status version_conflict(std::string_view path, std::int32_t expected, std::int32_t actual) {
  return Status(ErrorCode::kVersionConflict, "node " + std::string(path) + " is at version " +
                                                 std::to_string(actual) + ", expected version " +
                                                 std::to_string(expected));
}

bool is_ephemeral(CreateMode mode) {
  return mode == CreateMode::kEphemeral || mode == CreateMode::kEphemeralSequential;
}
bool is_sequential(CreateMode mode) {
  return mode == CreateMode::kPersistentSequential || mode == CreateMode::kEphemeralSequential;
}

std::string_view last_component(std::string_view path) {
  return path.substr(path.rfind('/') + 1);
}

}  // namespace

// ---------------------------------------------------------------- service

std::shared_ptr<InMemoryCoordinationService> InMemoryCoordinationService::create() {
  return std::shared_ptr<InMemoryCoordinationService>(new InMemoryCoordinationService());
}

InMemoryCoordinationService::InMemoryCoordinationService() { nodes_["/"] = Node{}; }

std::unique_ptr<InMemoryCoordinationStore> InMemoryCoordinationService::connect() {
  return std::unique_ptr<InMemoryCoordinationStore>(
      new InMemoryCoordinationStore(shared_from_this()));
}

std::size_t InMemoryCoordinationService::node_count() const {
  std::lock_guard lock(mutex_);
  return nodes_.size();
}

std::int64_t InMemoryCoordinationService::open_session(InMemoryCoordinationStore* client) {
  std::lock_guard lock(mutex_);
  const std::int64_t id = next_session_++;
  sessions_[id] = client;
  return id;
}

void InMemoryCoordinationService::close_session(std::int64_t session) {
  std::lock_guard lock(mutex_);
  drop_session_locked(session);
}

bool InMemoryCoordinationService::expire_session(std::int64_t session) {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(session);
  if (it == sessions_.end()) return false;
  InMemoryCoordinationStore* client = it->second;
  drop_session_locked(session);
  const std::int64_t fresh = next_session_++;
  sessions_[fresh] = client;
  client->session_expired_locked(fresh);
  return true;
}

void InMemoryCoordinationService::drop_session_locked(std::int64_t session) {
  sessions_.erase(session);
  for (auto* table : {&data_watches_, &child_watches_}) {
    std::erase_if(*table, [&](const auto& entry) { return entry.second.session == session; });
  }
  std::vector<std::string> ephemerals;
  for (const auto& [path, node] : nodes_) {
    if (node.ephemeral_owner == session) ephemerals.push_back(path);
  }
  for (const auto& path : ephemerals) (void)remove_locked(path, kAnyVersion);
}

void InMemoryCoordinationService::fire_locked(std::multimap<std::string, Watch>& table,
                                              const std::string& path, WatchEventType type) {
  auto [begin, end] = table.equal_range(path);
  for (auto it = begin; it != end; ++it) {
    auto client = sessions_.find(it->second.session);
    if (client != sessions_.end()) client->second->deliver(it->second.callback, {type, path});
  }
  table.erase(begin, end);
}

Result<std::string> InMemoryCoordinationService::create(std::int64_t session, std::string_view path,
                                                        std::string_view data, CreateMode mode) {
  if (Status s = validate_path(path); !s) return s;
  if (path == "/") return Status(ErrorCode::kAlreadyExists, "node / already exists");
  std::lock_guard lock(mutex_);
  const std::string parent = parent_path(path);
  auto parent_it = nodes_.find(parent);
  if (parent_it == nodes_.end()) {
    return Status(ErrorCode::kNotFound, "cannot create node " + std::string(path) + ": parent " +
                                            parent + " does not exist");
  }
  Node& parent_node = parent_it->second;
  if (parent_node.ephemeral_owner != 0) {
    return Status(ErrorCode::kInvalidArgument, "cannot create node " + std::string(path) +
                                                   ": parent " + parent +
                                                   " is ephemeral and cannot have children");
  }
  std::string actual(path);
  if (is_sequential(mode)) {
    char suffix[16];
    std::snprintf(suffix, sizeof(suffix), "%010lld",
                  static_cast<long long>(parent_node.sequence));
    actual += suffix;
  }
  if (nodes_.contains(actual)) {
    return Status(ErrorCode::kAlreadyExists, "node " + actual + " already exists");
  }
  ++parent_node.sequence;
  parent_node.children.insert(std::string(last_component(actual)));
  Node node;
  node.data = std::string(data);
  node.ephemeral_owner = is_ephemeral(mode) ? session : 0;
  nodes_.emplace(actual, std::move(node));
  fire_locked(data_watches_, actual, WatchEventType::kCreated);
  fire_locked(child_watches_, parent, WatchEventType::kChildrenChanged);
  return actual;
}

Result<NodeData> InMemoryCoordinationService::get(std::int64_t session, std::string_view path,
                                                  WatchCallback watch) {
  if (Status s = validate_path(path); !s) return s;
  std::lock_guard lock(mutex_);
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return not_found(path);
  if (watch) data_watches_.emplace(std::string(path), Watch{session, std::move(watch)});
  return NodeData{it->second.data, it->second.version, it->second.ephemeral_owner};
}

Result<std::int32_t> InMemoryCoordinationService::set(std::string_view path, std::string_view data,
                                                      std::int32_t expected_version) {
  if (Status s = validate_path(path); !s) return s;
  std::lock_guard lock(mutex_);
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return not_found(path);
  Node& node = it->second;
  if (expected_version != kAnyVersion && expected_version != node.version) {
    return version_conflict(path, expected_version, node.version);
  }
  node.data = std::string(data);
  ++node.version;
  fire_locked(data_watches_, it->first, WatchEventType::kDataChanged);
  return node.version;
}

Status InMemoryCoordinationService::remove(std::string_view path, std::int32_t expected_version) {
  if (Status s = validate_path(path); !s) return s;
  if (path == "/") return Status(ErrorCode::kInvalidArgument, "the root node cannot be removed");
  std::lock_guard lock(mutex_);
  return remove_locked(std::string(path), expected_version);
}

Status InMemoryCoordinationService::remove_locked(const std::string& path,
                                                  std::int32_t expected_version) {
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return not_found(path);
  if (expected_version != kAnyVersion && expected_version != it->second.version) {
    return version_conflict(path, expected_version, it->second.version);
  }
  if (!it->second.children.empty()) {
    return Status(ErrorCode::kNotEmpty, "node " + path + " has " +
                                            std::to_string(it->second.children.size()) +
                                            " children and cannot be removed");
  }
  nodes_.erase(it);
  const std::string parent = parent_path(path);
  nodes_[parent].children.erase(std::string(last_component(path)));
  fire_locked(data_watches_, path, WatchEventType::kDeleted);
  fire_locked(child_watches_, path, WatchEventType::kDeleted);
  fire_locked(child_watches_, parent, WatchEventType::kChildrenChanged);
  return Status::ok();
}

Result<std::vector<std::string>> InMemoryCoordinationService::children(std::int64_t session,
                                                                       std::string_view path,
                                                                       WatchCallback watch) {
  if (Status s = validate_path(path); !s) return s;
  std::lock_guard lock(mutex_);
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return not_found(path);
  if (watch) child_watches_.emplace(std::string(path), Watch{session, std::move(watch)});
  return std::vector<std::string>(it->second.children.begin(), it->second.children.end());
}

Result<bool> InMemoryCoordinationService::exists(std::int64_t session, std::string_view path,
                                                 WatchCallback watch) {
  if (Status s = validate_path(path); !s) return s;
  std::lock_guard lock(mutex_);
  if (watch) data_watches_.emplace(std::string(path), Watch{session, std::move(watch)});
  return nodes_.contains(path);
}

// ---------------------------------------------------------------- client

InMemoryCoordinationStore::InMemoryCoordinationStore(
    std::shared_ptr<InMemoryCoordinationService> service)
    : service_(std::move(service)) {
  session_ = service_->open_session(this);
}

InMemoryCoordinationStore::~InMemoryCoordinationStore() {
  // Callbacks still queued may call back in: they must not act for a closed session.
  closed_ = true;
  service_->close_session(session_.load());
  dispatcher_.stop();
}

Status InMemoryCoordinationStore::check_connected() const {
  if (closed_) return Status(ErrorCode::kUnavailable, "coordination store is closed");
  if (connected_) return Status::ok();
  return Status(ErrorCode::kUnavailable, "coordination store is disconnected (session " +
                                             std::to_string(session_.load()) + ")");
}

void InMemoryCoordinationStore::deliver(const WatchCallback& callback, WatchEvent event) {
  dispatcher_.post([callback, event = std::move(event)] { callback(event); });
}

void InMemoryCoordinationStore::session_expired_locked(std::int64_t new_session) {
  session_ = new_session;
  dispatcher_.post([this] {
    listeners_.notify(SessionEvent::kExpired);
    listeners_.notify(SessionEvent::kNewSession);
  });
}

Result<std::string> InMemoryCoordinationStore::create(std::string_view path, std::string_view data,
                                                      CreateMode mode) {
  if (Status s = check_connected(); !s) return s;
  return service_->create(session_, path, data, mode);
}

Result<NodeData> InMemoryCoordinationStore::get(std::string_view path, WatchCallback watch) {
  if (Status s = check_connected(); !s) return s;
  return service_->get(session_, path, std::move(watch));
}

Result<std::int32_t> InMemoryCoordinationStore::set(std::string_view path, std::string_view data,
                                                    std::int32_t expected_version) {
  if (Status s = check_connected(); !s) return s;
  return service_->set(path, data, expected_version);
}

Status InMemoryCoordinationStore::remove(std::string_view path, std::int32_t expected_version) {
  if (Status s = check_connected(); !s) return s;
  return service_->remove(path, expected_version);
}

Result<std::vector<std::string>> InMemoryCoordinationStore::children(std::string_view path,
                                                                     WatchCallback watch) {
  if (Status s = check_connected(); !s) return s;
  return service_->children(session_, path, std::move(watch));
}

Result<bool> InMemoryCoordinationStore::exists(std::string_view path, WatchCallback watch) {
  if (Status s = check_connected(); !s) return s;
  return service_->exists(session_, path, std::move(watch));
}

std::uint64_t InMemoryCoordinationStore::add_session_listener(SessionCallback listener) {
  return listeners_.add(std::move(listener));
}

void InMemoryCoordinationStore::remove_session_listener(std::uint64_t id) { listeners_.remove(id); }

void InMemoryCoordinationStore::simulate_disconnect() {
  if (connected_.exchange(false)) {
    dispatcher_.post([this] { listeners_.notify(SessionEvent::kDisconnected); });
  }
}

void InMemoryCoordinationStore::simulate_reconnect() {
  if (!connected_.exchange(true)) {
    dispatcher_.post([this] { listeners_.notify(SessionEvent::kConnected); });
  }
}

}  // namespace rstorm
