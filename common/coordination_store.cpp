#include "common/coordination_store.hpp"

namespace rstorm {

std::string_view watch_event_type_name(WatchEventType type) {
  switch (type) {
    case WatchEventType::kCreated: return "created";
    case WatchEventType::kDeleted: return "deleted";
    case WatchEventType::kDataChanged: return "data-changed";
    case WatchEventType::kChildrenChanged: return "children-changed";
  }
  return "unknown";
}

std::string_view session_event_name(SessionEvent event) {
  switch (event) {
    case SessionEvent::kConnected: return "connected";
    case SessionEvent::kDisconnected: return "disconnected";
    case SessionEvent::kExpired: return "expired";
    case SessionEvent::kNewSession: return "new-session";
  }
  return "unknown";
}

std::string parent_path(std::string_view path) {
  auto slash = path.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string join_path(std::string_view parent, std::string_view child) {
  std::string out(parent);
  if (out.empty() || out.back() != '/') out += '/';
  out.append(child);
  return out;
}

Status validate_path(std::string_view path) {
  auto bad = [&](std::string_view why) {
    return Status(ErrorCode::kInvalidArgument,
                  "invalid node path '" + std::string(path) + "': " + std::string(why));
  };
  if (path.empty() || path[0] != '/') return bad("must start with '/'");
  if (path == "/") return Status::ok();
  if (path.back() == '/') return bad("must not end with '/'");
  std::size_t start = 1;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part.empty()) return bad("empty component");
    if (part == "." || part == "..") return bad("'.' and '..' are not allowed");
    start = end + 1;
  }
  return Status::ok();
}

Status CoordinationStore::ensure_path(std::string_view path) {
  if (Status s = validate_path(path); !s) return s;
  std::size_t pos = 1;
  while (pos <= path.size()) {
    auto end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    auto prefix = path.substr(0, end);
    auto created = create(prefix, "", CreateMode::kPersistent);
    if (!created && created.code() != ErrorCode::kAlreadyExists) return created.status();
    pos = end + 1;
  }
  return Status::ok();
}

Status CoordinationStore::remove_recursive(std::string_view path) {
  auto kids = children(path);
  if (!kids) return kids.code() == ErrorCode::kNotFound ? Status::ok() : kids.status();
  for (const auto& child : *kids) {
    if (Status s = remove_recursive(join_path(path, child)); !s) return s;
  }
  Status s = remove(path);
  if (!s && s.code() != ErrorCode::kNotFound) return s;
  return Status::ok();
}

}  // namespace rstorm
