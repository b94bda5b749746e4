// BlobStore on both key-value stores: chunked upload checked by SHA-256,
// chunked reads, replacement, removal, rejected corrupt and truncated uploads.
#include "common/blob_store.hpp"

#include <gtest/gtest.h>

#include "tests/common/storage_backends.hpp"

namespace rstorm::testing {
namespace {

// Deterministic bytes that differ at every position.
std::string make_bytes(std::size_t n, unsigned seed) {
  std::string out(n, '\0');
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& c : out) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return out;
}

template <typename Backend>
class BlobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kv_ = backend_.open();
    ASSERT_NE(kv_, nullptr);
    blobs_ = std::make_unique<BlobStore>(*kv_, BlobStore::Options{.max_chunk_bytes = 1000});
  }
  Backend backend_;
  std::unique_ptr<KeyValueStore> kv_;
  std::unique_ptr<BlobStore> blobs_;
};

using Backends = ::testing::Types<InMemoryKv, RocksDbKv>;
TYPED_TEST_SUITE(BlobStoreTest, Backends, StorageNames);

TYPED_TEST(BlobStoreTest, ChunkedUploadThenChunkedRead) {
  auto& b = *this->blobs_;
  const std::string code = make_bytes(2500, 1);
  auto id = b.begin_upload("wc-code");
  ASSERT_TRUE(id) << id.status().to_string();
  ASSERT_TRUE(b.upload_chunk(*id, code.substr(0, 1000)));
  ASSERT_TRUE(b.upload_chunk(*id, code.substr(1000, 1000)));
  ASSERT_TRUE(b.upload_chunk(*id, code.substr(2000)));
  auto info = b.finish_upload(*id, code.size(), Sha256::hex_of(code));
  ASSERT_TRUE(info) << info.status().to_string();
  EXPECT_EQ(*info, (BlobInfo{"wc-code", 2500, Sha256::hex_of(code), 3}));
  EXPECT_EQ(b.info("wc-code").value(), *info);
  EXPECT_EQ(b.read_chunk("wc-code", 0).value(), code.substr(0, 1000));
  EXPECT_EQ(b.read_chunk("wc-code", 2).value(), code.substr(2000));
  EXPECT_EQ(b.read_chunk("wc-code", 3).code(), ErrorCode::kNotFound);
  EXPECT_EQ(b.read_all("wc-code").value(), code);
  EXPECT_EQ(b.list().value(), std::vector<std::string>{"wc-code"});
}

TYPED_TEST(BlobStoreTest, Sha256MatchesKnownVector) {
  EXPECT_EQ(Sha256::hex_of("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256::hex_of(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TYPED_TEST(BlobStoreTest, CorruptUploadIsRejectedNamingTheBlob) {
  auto& b = *this->blobs_;
  const std::string code = make_bytes(1500, 2);
  std::string damaged = code;
  damaged[700] ^= 0x01;
  auto id = b.begin_upload("wc-code");
  ASSERT_TRUE(id);
  ASSERT_TRUE(b.upload_chunk(*id, damaged.substr(0, 1000)));
  ASSERT_TRUE(b.upload_chunk(*id, damaged.substr(1000)));
  auto info = b.finish_upload(*id, code.size(), Sha256::hex_of(code));
  ASSERT_FALSE(info);
  EXPECT_EQ(info.code(), ErrorCode::kCorruption);
  EXPECT_EQ(info.status().message(), "upload of blob 'wc-code' is corrupt: its 1500 bytes have "
                                     "SHA-256 " + Sha256::hex_of(damaged) + ", expected " +
                                         Sha256::hex_of(code));
  EXPECT_EQ(b.info("wc-code").code(), ErrorCode::kNotFound);
  EXPECT_TRUE(this->kv_->keys_with_prefix("blob/chunk/").value().empty());  // staging cleaned
}

TYPED_TEST(BlobStoreTest, TruncatedUploadIsRejectedNamingTheBlob) {
  auto& b = *this->blobs_;
  const std::string code = make_bytes(1500, 3);
  auto id = b.begin_upload("wc-code");
  ASSERT_TRUE(id);
  ASSERT_TRUE(b.upload_chunk(*id, code.substr(0, 1000)));  // the last chunk never arrives
  auto info = b.finish_upload(*id, code.size(), Sha256::hex_of(code));
  ASSERT_FALSE(info);
  EXPECT_EQ(info.code(), ErrorCode::kCorruption);
  EXPECT_EQ(info.status().message(),
            "upload of blob 'wc-code' is truncated: received 1000 of 1500 bytes");
}

TYPED_TEST(BlobStoreTest, FailedReplacementKeepsThePreviousBlob) {
  auto& b = *this->blobs_;
  const std::string v1 = make_bytes(1200, 4);
  ASSERT_TRUE(b.put("wc-code", v1));
  auto id = b.begin_upload("wc-code");
  ASSERT_TRUE(b.upload_chunk(*id, "short"));
  EXPECT_FALSE(b.finish_upload(*id, 6, Sha256::hex_of("short!")));
  EXPECT_EQ(b.read_all("wc-code").value(), v1);
}

TYPED_TEST(BlobStoreTest, ReplacementSwapsContentAndFreesOldChunks) {
  auto& b = *this->blobs_;
  ASSERT_TRUE(b.put("wc-code", make_bytes(2500, 5)));
  const std::string v2 = make_bytes(900, 6);
  ASSERT_TRUE(b.put("wc-code", v2));
  EXPECT_EQ(b.read_all("wc-code").value(), v2);
  EXPECT_EQ(b.info("wc-code")->chunk_count, 1u);
  EXPECT_EQ(this->kv_->keys_with_prefix("blob/chunk/").value().size(), 1u);
}

TYPED_TEST(BlobStoreTest, OversizedChunkIsRejected) {
  auto& b = *this->blobs_;
  auto id = b.begin_upload("big");
  ASSERT_TRUE(id);
  Status s = b.upload_chunk(*id, std::string(1001, 'x'));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "chunk 0 of blob 'big' has 1001 bytes; the limit is 1000");
}

TYPED_TEST(BlobStoreTest, UnknownUploadAndMissingBlobAreNotFound) {
  auto& b = *this->blobs_;
  EXPECT_EQ(b.upload_chunk("u999", "x").code(), ErrorCode::kNotFound);
  EXPECT_EQ(b.finish_upload("u999", 1, "00").code(), ErrorCode::kNotFound);
  auto missing = b.read_chunk("nope", 0);
  EXPECT_EQ(missing.code(), ErrorCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "blob 'nope' does not exist");
  EXPECT_EQ(b.remove("nope").code(), ErrorCode::kNotFound);
  EXPECT_EQ(b.begin_upload("a/b").code(), ErrorCode::kInvalidArgument);
}

TYPED_TEST(BlobStoreTest, RemoveDeletesMetadataAndChunks) {
  auto& b = *this->blobs_;
  ASSERT_TRUE(b.put("wc-code", make_bytes(2100, 7)));
  ASSERT_TRUE(b.remove("wc-code"));
  EXPECT_EQ(b.info("wc-code").code(), ErrorCode::kNotFound);
  EXPECT_TRUE(b.list().value().empty());
  EXPECT_TRUE(this->kv_->keys_with_prefix("blob/").value() ==
              std::vector<std::string>{"blob/next-upload-id"});
}

TYPED_TEST(BlobStoreTest, CorruptionInStorageIsDetectedOnRead) {
  auto& b = *this->blobs_;
  ASSERT_TRUE(b.put("wc-code", make_bytes(1500, 8)));
  auto chunks = this->kv_->keys_with_prefix("blob/chunk/").value();
  ASSERT_EQ(chunks.size(), 2u);
  ASSERT_TRUE(this->kv_->put(chunks[1], "bit rot"));
  auto read = b.read_all("wc-code");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.code(), ErrorCode::kCorruption);
  EXPECT_EQ(read.status().message().rfind("blob 'wc-code' is corrupt in storage: 1007 bytes", 0),
            0u)
      << read.status().message();
  ASSERT_TRUE(this->kv_->remove(chunks[0]));
  auto chunk = b.read_chunk("wc-code", 0);
  EXPECT_EQ(chunk.code(), ErrorCode::kCorruption);
  EXPECT_EQ(chunk.status().message(), "blob 'wc-code' is missing chunk 0 in storage");
}

TYPED_TEST(BlobStoreTest, GarbageCollectionRemovesAbandonedUploadsOnly) {
  auto& b = *this->blobs_;
  ASSERT_TRUE(b.put("kept", make_bytes(1500, 9)));
  auto abandoned = b.begin_upload("lost");
  ASSERT_TRUE(b.upload_chunk(*abandoned, "partial"));
  // A restart forgets uploads in progress.
  this->blobs_ = std::make_unique<BlobStore>(*this->kv_, BlobStore::Options{});
  EXPECT_EQ(this->blobs_->collect_garbage().value(), 1u);
  EXPECT_EQ(this->blobs_->read_all("kept").value(), make_bytes(1500, 9));
  EXPECT_EQ(this->blobs_->collect_garbage().value(), 0u);
}

TYPED_TEST(BlobStoreTest, EmptyBlobRoundTrips) {
  auto& b = *this->blobs_;
  auto info = b.put("empty", "");
  ASSERT_TRUE(info) << info.status().to_string();
  EXPECT_EQ(info->chunk_count, 0u);
  EXPECT_EQ(b.read_all("empty").value(), "");
}

TEST(BlobStoreRocksDb, BlobSurvivesReopen) {
  RocksDbKv backend;
  const std::string code = make_bytes(3000, 10);
  {
    auto kv = backend.open();
    BlobStore blobs(*kv, {.max_chunk_bytes = 1000});
    ASSERT_TRUE(blobs.put("wc-code", code));
  }
  auto kv = backend.open();
  BlobStore blobs(*kv, {.max_chunk_bytes = 1000});
  EXPECT_EQ(blobs.read_all("wc-code").value(), code);
  // Upload ids continue after a restart, so a new upload cannot collide.
  auto id = blobs.begin_upload("other");
  EXPECT_EQ(id.value(), "u2");
}

}  // namespace
}  // namespace rstorm::testing
