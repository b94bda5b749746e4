#include "rstorm/worker/state_backends.hpp"

#include <system_error>

#include "common/rocksdb_store.hpp"

namespace rstorm::worker {
namespace {

// A store's message with its key bytes made printable (keys hold '\0').
std::string printable(std::string_view message) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : message) {
    const auto b = static_cast<std::uint8_t>(c);
    if (b >= 0x20 && b < 0x7f) {
      out += c;
    } else {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
  }
  return out;
}

// The string at `key`; `fallback` when it is absent or null.
std::string string_or(const Config& config, std::string_view key, const std::string& fallback) {
  const Config::Entry* e = config.find(key);
  if (e == nullptr || e->value.is_null()) return fallback;
  return config.get_string(key);
}

}  // namespace

KeyValueStateStore::KeyValueStateStore(std::unique_ptr<KeyValueStore> store, std::string where)
    : store_(std::move(store)), where_(std::move(where)) {}

void KeyValueStateStore::check(const Status& status) const {
  if (!status) throw StateError(where_ + ": " + printable(status.to_string()));
}

std::optional<std::string> KeyValueStateStore::get(std::string_view key) {
  Result<std::string> value = store_->get(key);
  if (value.code() == ErrorCode::kNotFound) return std::nullopt;
  check(value.status());
  return std::move(value).value();
}

void KeyValueStateStore::put(std::string_view key, std::string_view value) {
  check(store_->put(key, value));
}

void KeyValueStateStore::remove(std::string_view key) { check(store_->remove(key)); }

std::vector<std::pair<std::string, std::string>> KeyValueStateStore::scan_prefix(
    std::string_view prefix) {
  auto entries = store_->scan_prefix(prefix);
  check(entries.status());
  return std::move(entries).value();
}

StateStore::Frozen KeyValueStateStore::freeze() {
  KeyValueStore::Frozen frozen = store_->freeze();
  return [this, frozen = std::move(frozen)] {
    auto entries = frozen();
    check(entries.status());
    return std::move(entries).value();
  };
}

void KeyValueStateStore::apply(const std::vector<StateWrite>& writes) {
  std::vector<KeyValueWrite> kv;
  kv.reserve(writes.size());
  for (const auto& w : writes) kv.push_back(KeyValueWrite{w.key, w.value});
  check(store_->apply(kv));
}

RocksDbStateBackend::RocksDbStateBackend(std::filesystem::path dir) : dir_(std::move(dir)) {}

std::filesystem::path RocksDbStateBackend::task_dir(TaskId task) const {
  return dir_ / ("task-" + std::to_string(task.value));
}

bool RocksDbStateBackend::holds(TaskId task) {
  {
    std::lock_guard lock(mutex_);
    if (stores_.count(task) != 0) return true;
  }
  std::error_code ec;
  return std::filesystem::exists(task_dir(task), ec);
}

void RocksDbStateBackend::discard(TaskId task, std::string_view component) {
  std::lock_guard lock(mutex_);
  stores_.erase(task);  // closes it: nothing else holds it
  std::error_code ec;
  std::filesystem::remove_all(task_dir(task), ec);
  if (ec) {
    throw StateError("cannot discard the state store of " + describe_task(task, component) +
                     " in " + task_dir(task).string() + ": " + ec.message());
  }
}

std::shared_ptr<StateStore> RocksDbStateBackend::open(TaskId task, std::string_view component) {
  std::lock_guard lock(mutex_);
  auto& store = stores_[task];
  if (store) return store;
  const std::filesystem::path path = task_dir(task);
  const std::string cannot =
      "cannot open the state store of " + describe_task(task, component) + " in " + path.string();
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw StateError(cannot + ": " + ec.message());
  auto opened = RocksDbStore::open(path, RocksDbStore::Options{});
  if (!opened) throw StateError(cannot + ": " + opened.status().message());
  store = std::make_shared<KeyValueStateStore>(std::move(opened).value(),
                                               "RocksDB store in " + path.string());
  return store;
}

api::Result<std::shared_ptr<StateBackend>> make_state_backend(
    const Config& config, const StateBackendDefaults& defaults) {
  std::string provider;
  std::string dir;
  try {
    provider = string_or(config, keys::kTopologyStateProvider, defaults.provider);
    dir = string_or(config, keys::kTopologyStateRocksdbDir, "");
  } catch (const ConfigError& e) {
    return api::Status::error(e.what());
  }
  if (provider == "memory") {
    return std::shared_ptr<StateBackend>(std::make_shared<InMemoryStateBackend>());
  }
  if (provider != "rocksdb") {
    return api::Status::error(std::string(keys::kTopologyStateProvider) + ": \"" + provider +
                              "\" is not a state provider: expected \"memory\" or \"rocksdb\"");
  }
  const std::filesystem::path root =
      dir.empty() ? defaults.dir : std::filesystem::path(dir) / defaults.topology;
  if (root.empty()) {
    return api::Status::error(std::string(keys::kTopologyStateProvider) +
                              " is \"rocksdb\" but there is no folder for the stores: set " +
                              std::string(keys::kTopologyStateRocksdbDir));
  }
  return std::shared_ptr<StateBackend>(std::make_shared<RocksDbStateBackend>(root));
}

}  // namespace rstorm::worker
