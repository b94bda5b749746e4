// The in-memory state store and backend, and the untyped half of KeyValueState.
#include "rstorm/state.hpp"

namespace rstorm {
namespace {

// Keys in messages are cut to this many bytes.
constexpr std::size_t kMaxKeyInMessage = 64;

}  // namespace

StateError::~StateError() = default;
StateStore::~StateStore() = default;
StateBackend::~StateBackend() = default;

std::string describe_task(TaskId task, std::string_view component) {
  return "task " + std::to_string(task.value) + " (component '" + std::string(component) + "')";
}

std::optional<std::string> InMemoryStateStore::get(std::string_view key) {
  std::lock_guard lock(mutex_);
  auto it = data_.find(key);
  if (it == data_.end()) return std::nullopt;
  return it->second;
}

void InMemoryStateStore::put(std::string_view key, std::string_view value) {
  std::lock_guard lock(mutex_);
  auto it = data_.find(key);
  if (it == data_.end()) {
    data_.emplace(std::string(key), std::string(value));
  } else {
    it->second.assign(value);
  }
}

void InMemoryStateStore::remove(std::string_view key) {
  std::lock_guard lock(mutex_);
  auto it = data_.find(key);
  if (it != data_.end()) data_.erase(it);
}

std::vector<std::pair<std::string, std::string>> InMemoryStateStore::scan_prefix(
    std::string_view prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  std::lock_guard lock(mutex_);
  for (auto it = data_.lower_bound(prefix);
       it != data_.end() && std::string_view(it->first).starts_with(prefix); ++it) {
    out.emplace_back(it->first, it->second);
  }
  return out;
}

void InMemoryStateStore::apply(const std::vector<StateWrite>& writes) {
  std::lock_guard lock(mutex_);
  for (const auto& w : writes) {
    if (w.value) {
      data_.insert_or_assign(w.key, *w.value);
    } else {
      data_.erase(w.key);
    }
  }
}

std::size_t InMemoryStateStore::size() const {
  std::lock_guard lock(mutex_);
  return data_.size();
}

bool StateBackend::holds(TaskId) { return true; }

StateStore::Frozen StateStore::freeze() {
  auto all = std::make_shared<std::vector<std::pair<std::string, std::string>>>(scan_prefix(""));
  return [all] { return std::move(*all); };
}

void StateBackend::discard(TaskId task, std::string_view component) {
  if (!holds(task)) return;
  auto store = open(task, component);
  std::vector<StateWrite> writes;
  for (auto& [key, value] : store->scan_prefix("")) writes.push_back({std::move(key), {}});
  store->apply(writes);
}

void InMemoryStateBackend::discard(TaskId task, std::string_view) {
  std::lock_guard lock(mutex_);
  stores_.erase(task);
}

bool InMemoryStateBackend::holds(TaskId task) {
  std::lock_guard lock(mutex_);
  return stores_.count(task) != 0;
}

std::shared_ptr<StateStore> InMemoryStateBackend::open(TaskId task, std::string_view) {
  std::lock_guard lock(mutex_);
  auto& store = stores_[task];
  if (!store) store = std::make_shared<InMemoryStateStore>();
  return store;
}

namespace detail {

std::string quote_key(std::string_view key) {
  if (key.size() <= kMaxKeyInMessage) return "'" + std::string(key) + "'";
  return "'" + std::string(key.substr(0, kMaxKeyInMessage)) + "...' (" +
         std::to_string(key.size()) + " bytes)";
}

std::string render_bytes(std::string_view bytes) {
  bool printable = true;
  for (char c : bytes) printable = printable && c >= 0x20 && c < 0x7f;
  if (printable) return quote_key(bytes);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "0x";
  for (std::size_t i = 0; i < bytes.size() && i < kMaxKeyInMessage; ++i) {
    const auto b = static_cast<std::uint8_t>(bytes[i]);
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  if (bytes.size() > kMaxKeyInMessage) out += "... (" + std::to_string(bytes.size()) + " bytes)";
  return out;
}

KeyValueStateBase::KeyValueStateBase(std::shared_ptr<StateStore> store, std::string name,
                                     TaskId task, std::string_view component)
    : store_(std::move(store)),
      name_(std::move(name)),
      prefix_(name_ + '\0'),
      owner_(task.valid() ? describe_task(task, component) : "") {
  if (name_.empty()) fail("a state needs a name");
  if (name_.find('\0') != std::string::npos) fail("a state name cannot hold '\\0'");
  if (name_.starts_with("__")) fail("state names starting with \"__\" are reserved");
  if (!store_) fail("no state store");
}

StateStore& KeyValueStateBase::store() const {
  if (!store_) {
    throw StateError(
        "a KeyValueState used before it was bound to a store "
        "(TopologyContext::key_value_state)");
  }
  return *store_;
}

void KeyValueStateBase::fail(std::string_view what) const {
  std::string message = "state " + render_bytes(name_);
  if (!owner_.empty()) message += " of " + owner_;
  throw StateError(message + ": " + std::string(what));
}

void KeyValueStateBase::fail_decode(std::string_view what, const std::exception& e) const {
  if (dynamic_cast<const StateCodecError*>(&e) != nullptr) {
    fail(std::string(what) + " " + e.what());
  }
  fail(std::string(what) + " cannot be decoded: " + e.what());
}

}  // namespace detail
}  // namespace rstorm
