// RocksDbStore: KeyValueStore on a RocksDB database in one directory.
// Thread-safe (RocksDB's DB is). Writes go to RocksDB's WAL; `sync` makes each
// write durable against a machine crash, not just a process crash.
#pragma once

#include <filesystem>
#include <memory>

#include "common/key_value_store.hpp"

namespace rocksdb {
class DB;
}

namespace rstorm {

class RocksDbStore final : public KeyValueStore {
 public:
  struct Options {
    // Create the database when the directory has none. Default true.
    bool create_if_missing = true;
    // fsync the WAL on every write. Default false.
    bool sync = false;
  };

  // Opens (or creates) the database in `dir`. kIoError naming the directory
  // when RocksDB refuses (missing directory, held lock, corrupt files).
  static Result<std::unique_ptr<RocksDbStore>> open(const std::filesystem::path& dir,
                                                    Options options);
  ~RocksDbStore() override;

  Status put(std::string_view key, std::string_view value) override;
  Result<std::string> get(std::string_view key) override;
  Status remove(std::string_view key) override;
  Result<std::vector<std::pair<std::string, std::string>>> scan_prefix(
      std::string_view prefix) override;
  Result<std::vector<std::string>> keys_with_prefix(std::string_view prefix) override;
  Status apply(const std::vector<KeyValueWrite>& writes) override;
  // A RocksDB snapshot, taken now (no copy) and read by the function.
  Frozen freeze() override;

 private:
  RocksDbStore(std::unique_ptr<rocksdb::DB> db, std::filesystem::path dir, Options options);
  template <typename F>
  Status scan(std::string_view prefix, F&& visit);

  std::unique_ptr<rocksdb::DB> db_;
  const std::filesystem::path dir_;
  const Options options_;
};

}  // namespace rstorm
