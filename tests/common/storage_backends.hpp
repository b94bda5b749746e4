// The two KeyValueStore implementations as typed-test backends.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <memory>

#include "common/key_value_store.hpp"
#include "common/rocksdb_store.hpp"

namespace rstorm::testing {

struct InMemoryKv {
  static constexpr const char* kName = "InMemory";
  std::unique_ptr<KeyValueStore> open() { return std::make_unique<InMemoryKeyValueStore>(); }
  // The same data after a restart: in memory there is no restart.
  bool durable() const { return false; }
  std::unique_ptr<KeyValueStore> reopen(std::unique_ptr<KeyValueStore> store) { return store; }
};

struct RocksDbKv {
  static constexpr const char* kName = "RocksDb";
  RocksDbKv() {
    char tmpl[] = "/tmp/rstorm-rocksdb-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~RocksDbKv() { std::filesystem::remove_all(dir); }
  std::unique_ptr<KeyValueStore> open() {
    auto store = RocksDbStore::open(dir / "db", {});
    return store ? std::move(*store) : nullptr;
  }
  bool durable() const { return true; }
  std::unique_ptr<KeyValueStore> reopen(std::unique_ptr<KeyValueStore> store) {
    store.reset();  // releases RocksDB's lock on the directory
    return open();
  }
  std::filesystem::path dir;
};

class StorageNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return T::kName;
  }
};

}  // namespace rstorm::testing
