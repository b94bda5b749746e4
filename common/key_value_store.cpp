#include "common/key_value_store.hpp"

namespace rstorm {

Status InMemoryKeyValueStore::put(std::string_view key, std::string_view value) {
  std::lock_guard lock(mutex_);
  data_.insert_or_assign(std::string(key), std::string(value));
  return Status::ok();
}

Result<std::string> InMemoryKeyValueStore::get(std::string_view key) {
  std::lock_guard lock(mutex_);
  auto it = data_.find(key);
  if (it == data_.end()) {
    return Status(ErrorCode::kNotFound, "key '" + std::string(key) + "' not found");
  }
  return it->second;
}

Status InMemoryKeyValueStore::remove(std::string_view key) {
  std::lock_guard lock(mutex_);
  auto it = data_.find(key);
  if (it != data_.end()) data_.erase(it);
  return Status::ok();
}

Result<std::vector<std::pair<std::string, std::string>>> InMemoryKeyValueStore::scan_prefix(
    std::string_view prefix) {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = data_.lower_bound(prefix); it != data_.end() && it->first.starts_with(prefix);
       ++it) {
    out.emplace_back(it->first, it->second);
  }
  return out;
}

Result<std::vector<std::string>> InMemoryKeyValueStore::keys_with_prefix(std::string_view prefix) {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (auto it = data_.lower_bound(prefix); it != data_.end() && it->first.starts_with(prefix);
       ++it) {
    out.push_back(it->first);
  }
  return out;
}

Status InMemoryKeyValueStore::apply(const std::vector<KeyValueWrite>& writes) {
  std::lock_guard lock(mutex_);
  for (const auto& w : writes) {
    if (w.value) {
      data_.insert_or_assign(w.key, *w.value);
    } else {
      data_.erase(w.key);
    }
  }
  return Status::ok();
}

void InMemoryKeyValueStore::corrupt(std::string_view key, std::string value) {
  std::lock_guard lock(mutex_);
  data_.insert_or_assign(std::string(key), std::move(value));
}

}  // namespace rstorm
