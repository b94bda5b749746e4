// Stored state that fuzz_local_state found faults with. What a daemon reads
// back after a restart may be corrupt: it must become an error naming the key,
// or be survived, never an exception, a huge allocation or a lost blob.
#include <gtest/gtest.h>

#include "common/blob_store.hpp"
#include "supervisor/local_state.hpp"
#include "tests/fuzz/regression_input.hpp"

namespace rstorm::fuzz {
namespace {

using testing::regression_input;

// A store as fuzz_local_state builds it: `meta` as blob "code"'s metadata,
// chunk 0 of upload u1, and 2 as the next upload id.
void store_blob_meta(InMemoryKeyValueStore& kv, const std::string& meta) {
  ASSERT_TRUE(kv.put("blob/meta/code", meta));
  ASSERT_TRUE(kv.put("blob/chunk/u1/00000000", "chunk"));
  ASSERT_TRUE(kv.put("blob/next-upload-id", "2"));
}

// The counter was read with std::stoull, whose exception escaped: an upload
// to nimbus failed with "stoull", and every later one too.
TEST(FuzzLocalState, UploadCounterThatIsNotANumberIsCorruptionNamingIt) {
  InMemoryKeyValueStore kv;
  ASSERT_TRUE(
      kv.put("blob/next-upload-id", regression_input("fuzz_local_state", "upload-counter-empty")));
  BlobStore blobs(kv, BlobStore::Options{});
  auto stored = blobs.put("code", "bytes");
  ASSERT_FALSE(stored.is_ok());
  EXPECT_EQ(stored.code(), ErrorCode::kCorruption);
  EXPECT_EQ(stored.status().message(),
            "blob upload counter blob/next-upload-id holds '', not a number");
}

// Metadata naming upload u2, the next one: replacing the blob deleted the
// chunks it had just written, and the replaced blob no longer read.
TEST(FuzzLocalState, BlobWhoseMetadataNamesTheNextUploadCanBeReplaced) {
  InMemoryKeyValueStore kv;
  store_blob_meta(kv, regression_input("fuzz_local_state", "meta-names-next-upload"));
  BlobStore blobs(kv, BlobStore::Options{});
  ASSERT_TRUE(blobs.put("code", "new code").is_ok());
  auto bytes = blobs.read_all("code");
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  EXPECT_EQ(*bytes, "new code");
}

// Metadata claiming 628 million chunks: replacing the blob built a delete for
// each (tens of GB) before writing one. Deletes now go to the stored chunks.
TEST(FuzzLocalState, BlobWithAHugeChunkCountIsReplacedAndRemoved) {
  InMemoryKeyValueStore kv;
  store_blob_meta(kv, regression_input("fuzz_local_state", "meta-huge-chunk-count"));
  BlobStore blobs(kv, BlobStore::Options{});
  ASSERT_TRUE(blobs.put("code", "new code").is_ok());
  auto bytes = blobs.read_all("code");
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  EXPECT_EQ(*bytes, "new code");
  ASSERT_TRUE(blobs.remove("code"));
  EXPECT_EQ(*kv.keys_with_prefix("blob/chunk/u2/"), std::vector<std::string>{});
}

// Metadata claiming 111 petabytes: reading the blob reserved them first
// (std::length_error escaped).
TEST(FuzzLocalState, BlobWithAHugeRecordedSizeReadsAsCorruption) {
  InMemoryKeyValueStore kv;
  store_blob_meta(kv, regression_input("fuzz_local_state", "meta-huge-size"));
  BlobStore blobs(kv, BlobStore::Options{});
  auto bytes = blobs.read_all("code");
  ASSERT_FALSE(bytes.is_ok());
  EXPECT_EQ(bytes.code(), ErrorCode::kCorruption);
}

// A pid of 1e300 was cast to an int: undefined behaviour.
TEST(FuzzLocalState, WorkerRecordWithAFractionalPidIsCorruptionNamingIt) {
  InMemoryKeyValueStore kv;
  ASSERT_TRUE(kv.put("worker/6700", regression_input("fuzz_local_state", "record-fraction")));
  supervisor::LocalState state(kv);
  auto workers = state.workers();
  ASSERT_FALSE(workers.is_ok());
  EXPECT_EQ(workers.code(), ErrorCode::kCorruption);
  EXPECT_EQ(workers.status().message(),
            "local state entry 'worker/6700' is not a worker record: pid is 1e+300, not an "
            "integer");
}

}  // namespace
}  // namespace rstorm::fuzz
