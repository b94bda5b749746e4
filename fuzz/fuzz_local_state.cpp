// State the daemons store locally and read back after a restart, as a value
// found in their key-value store (an InMemoryKeyValueStore here, RocksDB in
// the daemons). The first input byte picks the value:
//   0  a supervisor's worker record, "worker/<port>" (supervisor/local_state.hpp)
//   1  nimbus's blob metadata, "blob/meta/<key>" (common/blob_store.hpp), in a
//      store that holds chunk 0 of upload u1 and the next upload id, 2
//   2  nimbus's blob upload counter, "blob/next-upload-id"
//
// Checks: a worker record that reads is written back and reads the same; one
// that does not is kCorruption naming its key. Blob metadata that reads gives
// the blob's key, a blob that reads whole has the recorded size and hash, and
// the blob can be replaced and removed. A blob stored under any counter
// reads back, or the counter is kCorruption naming its key.
#include "common/blob_store.hpp"
#include "common/sha256.hpp"
#include "fuzz/fuzz_check.hpp"
#include "supervisor/local_state.hpp"

namespace rstorm::fuzz {
namespace {

void check_worker_record(std::string_view value) {
  InMemoryKeyValueStore store;
  fuzz_check(store.put("worker/6700", value).is_ok(), "the store takes the record");
  supervisor::LocalState state(store);
  auto workers = state.workers();
  if (!workers) {
    fuzz_check(workers.code() == ErrorCode::kCorruption &&
                   workers.status().message().find("worker/6700") != std::string::npos,
               "an unreadable worker record is corruption naming its key");
    return;
  }
  fuzz_check(workers->size() == 1, "one stored record reads as one worker");
  InMemoryKeyValueStore fresh;
  supervisor::LocalState written(fresh);
  fuzz_check(written.put_worker(workers->front()).is_ok(), "a worker record is written");
  auto again = written.workers();
  fuzz_check(again.is_ok() && *again == *workers, "a written worker record reads the same");
}

void check_blob_meta(std::string_view value) {
  InMemoryKeyValueStore store;
  fuzz_check(store.put("blob/meta/code", value).is_ok() &&
                 store.put("blob/chunk/u1/00000000", "chunk").is_ok() &&
                 store.put("blob/next-upload-id", "2").is_ok(),
             "the store takes the metadata");
  BlobStore blobs(store, BlobStore::Options{});
  auto info = blobs.info("code");
  if (info) fuzz_check(info->key == "code", "metadata reads as its blob's");
  (void)blobs.read_chunk("code", 0);
  if (auto bytes = blobs.read_all("code")) {
    fuzz_check(bytes->size() == info->size && Sha256::hex_of(*bytes) == info->sha256,
               "a blob that reads has its recorded size and hash");
  }
  auto keys = blobs.list();
  fuzz_check(keys.is_ok() && *keys == std::vector<std::string>{"code"}, "the blob is listed");
  (void)blobs.collect_garbage();
  auto replaced = blobs.put("code", "new code");
  fuzz_check(replaced.is_ok(), "a blob can be replaced, whatever its metadata");
  auto bytes = blobs.read_all("code");
  fuzz_check(bytes.is_ok() && *bytes == "new code", "a replaced blob reads");
  fuzz_check(blobs.remove("code").is_ok() && blobs.info("code").code() == ErrorCode::kNotFound,
             "a blob can be removed");
}

void check_upload_counter(std::string_view value) {
  InMemoryKeyValueStore store;
  fuzz_check(store.put("blob/next-upload-id", value).is_ok(), "the store takes the counter");
  BlobStore blobs(store, BlobStore::Options{});
  auto stored = blobs.put("code", "code");
  if (!stored) {
    fuzz_check(stored.code() == ErrorCode::kCorruption &&
                   stored.status().message().find("blob/next-upload-id") != std::string::npos,
               "an unreadable upload counter is corruption naming its key");
    return;
  }
  auto bytes = blobs.read_all("code");
  fuzz_check(bytes.is_ok() && *bytes == "code", "a stored blob reads");
}

}  // namespace
}  // namespace rstorm::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rstorm::fuzz;
  if (size == 0) return 0;
  const auto input = select(data, size, 3);
  switch (input.choice) {
    case 0:
      check_worker_record(input.bytes);
      break;
    case 1:
      check_blob_meta(input.bytes);
      break;
    case 2:
      check_upload_counter(input.bytes);
      break;
  }
  return 0;
}
