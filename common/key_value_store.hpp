// KeyValueStore: ordered byte keys to byte values, behind one interface, with
// two implementations: RocksDbStore (durable, common/rocksdb_store.hpp) and
// InMemoryKeyValueStore (tests, local mode). Nimbus keeps topology code and
// state in it through BlobStore.
//
// Thread contract: implementations are thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.hpp"

namespace rstorm {

// One write of an atomic batch: a put, or a delete when `value` is empty.
struct KeyValueWrite {
  std::string key;
  std::optional<std::string> value;
};

class KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;

  virtual Status put(std::string_view key, std::string_view value) = 0;
  // kNotFound naming the key when it is absent.
  virtual Result<std::string> get(std::string_view key) = 0;
  // Removing an absent key is not an error.
  virtual Status remove(std::string_view key) = 0;
  // Every (key, value) whose key starts with `prefix`, in key order.
  virtual Result<std::vector<std::pair<std::string, std::string>>> scan_prefix(
      std::string_view prefix) = 0;
  // Only the keys of scan_prefix(), without reading values into the result.
  virtual Result<std::vector<std::string>> keys_with_prefix(std::string_view prefix) = 0;
  // Applies every write or none.
  virtual Status apply(const std::vector<KeyValueWrite>& writes) = 0;
  // What scan_prefix("") returns now, read later: called at most once, from
  // any thread, while the store is open. Default: scans now.
  using Frozen = std::function<Result<std::vector<std::pair<std::string, std::string>>>()>;
  virtual Frozen freeze() {
    auto all =
        std::make_shared<Result<std::vector<std::pair<std::string, std::string>>>>(scan_prefix(""));
    return [all] { return std::move(*all); };
  }
};

class InMemoryKeyValueStore final : public KeyValueStore {
 public:
  Status put(std::string_view key, std::string_view value) override;
  Result<std::string> get(std::string_view key) override;
  Status remove(std::string_view key) override;
  Result<std::vector<std::pair<std::string, std::string>>> scan_prefix(
      std::string_view prefix) override;
  Result<std::vector<std::string>> keys_with_prefix(std::string_view prefix) override;
  Status apply(const std::vector<KeyValueWrite>& writes) override;

  // For tests that simulate storage faults: replaces a value in place.
  void corrupt(std::string_view key, std::string value);

 private:
  std::mutex mutex_;
  std::map<std::string, std::string, std::less<>> data_;  // guarded by mutex_
};

}  // namespace rstorm
