#include "common/rocksdb_store.hpp"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

namespace rstorm {
namespace {

Status from_rocksdb(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return Status::ok();
  ErrorCode code = s.IsCorruption() ? ErrorCode::kCorruption : ErrorCode::kIoError;
  return Status(code, std::string(what) + ": " + s.ToString());
}

}  // namespace

RocksDbStore::RocksDbStore(std::unique_ptr<rocksdb::DB> db, std::filesystem::path dir,
                           Options options)
    : db_(std::move(db)), dir_(std::move(dir)), options_(options) {}

RocksDbStore::~RocksDbStore() = default;

Result<std::unique_ptr<RocksDbStore>> RocksDbStore::open(const std::filesystem::path& dir,
                                                         Options options) {
  rocksdb::Options rocks;
  rocks.create_if_missing = options.create_if_missing;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(rocks, dir.string(), &raw);
  if (!s.ok()) return from_rocksdb(s, "cannot open RocksDB store in " + dir.string());
  return std::unique_ptr<RocksDbStore>(
      new RocksDbStore(std::unique_ptr<rocksdb::DB>(raw), dir, options));
}

Status RocksDbStore::put(std::string_view key, std::string_view value) {
  rocksdb::WriteOptions w;
  w.sync = options_.sync;
  return from_rocksdb(db_->Put(w, rocksdb::Slice(key.data(), key.size()),
                               rocksdb::Slice(value.data(), value.size())),
                      "put '" + std::string(key) + "' in " + dir_.string());
}

Result<std::string> RocksDbStore::get(std::string_view key) {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), rocksdb::Slice(key.data(), key.size()),
                               &value);
  if (s.IsNotFound()) {
    return Status(ErrorCode::kNotFound, "key '" + std::string(key) + "' not found");
  }
  if (!s.ok()) return from_rocksdb(s, "get '" + std::string(key) + "' from " + dir_.string());
  return value;
}

Status RocksDbStore::remove(std::string_view key) {
  rocksdb::WriteOptions w;
  w.sync = options_.sync;
  return from_rocksdb(db_->Delete(w, rocksdb::Slice(key.data(), key.size())),
                      "delete '" + std::string(key) + "' in " + dir_.string());
}

template <typename F>
Status RocksDbStore::scan(std::string_view prefix, F&& visit) {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  const rocksdb::Slice p(prefix.data(), prefix.size());
  for (it->Seek(p); it->Valid() && it->key().starts_with(p); it->Next()) visit(*it);
  return from_rocksdb(it->status(), "scan '" + std::string(prefix) + "' in " + dir_.string());
}

Result<std::vector<std::pair<std::string, std::string>>> RocksDbStore::scan_prefix(
    std::string_view prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  Status s = scan(prefix, [&](rocksdb::Iterator& it) {
    out.emplace_back(it.key().ToString(), it.value().ToString());
  });
  if (!s) return s;
  return out;
}

KeyValueStore::Frozen RocksDbStore::freeze() {
  rocksdb::DB* db = db_.get();
  std::shared_ptr<const rocksdb::Snapshot> snapshot(
      db->GetSnapshot(), [db](const rocksdb::Snapshot* s) { db->ReleaseSnapshot(s); });
  return [this, snapshot]() -> Result<std::vector<std::pair<std::string, std::string>>> {
    rocksdb::ReadOptions read;
    read.snapshot = snapshot.get();
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read));
    std::vector<std::pair<std::string, std::string>> out;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out.emplace_back(it->key().ToString(), it->value().ToString());
    }
    Status s = from_rocksdb(it->status(), "read a snapshot of " + dir_.string());
    if (!s) return s;
    return out;
  };
}

Result<std::vector<std::string>> RocksDbStore::keys_with_prefix(std::string_view prefix) {
  std::vector<std::string> out;
  Status s = scan(prefix, [&](rocksdb::Iterator& it) { out.push_back(it.key().ToString()); });
  if (!s) return s;
  return out;
}

Status RocksDbStore::apply(const std::vector<KeyValueWrite>& writes) {
  rocksdb::WriteBatch batch;
  for (const auto& w : writes) {
    rocksdb::Status s = w.value ? batch.Put(w.key, *w.value) : batch.Delete(w.key);
    if (!s.ok()) return from_rocksdb(s, "batch write in " + dir_.string());
  }
  rocksdb::WriteOptions options;
  options.sync = options_.sync;
  return from_rocksdb(db_->Write(options, &batch), "batch write in " + dir_.string());
}

}  // namespace rstorm
