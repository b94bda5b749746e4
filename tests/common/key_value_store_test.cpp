// The KeyValueStore contract on RocksDB and on the in-memory twin.
#include "common/key_value_store.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "tests/common/storage_backends.hpp"

namespace rstorm::testing {
namespace {

template <typename Backend>
class KeyValueStoreContract : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = backend_.open();
    ASSERT_NE(store_, nullptr);
  }
  Backend backend_;
  std::unique_ptr<KeyValueStore> store_;
};

using Backends = ::testing::Types<InMemoryKv, RocksDbKv>;
TYPED_TEST_SUITE(KeyValueStoreContract, Backends, StorageNames);

TYPED_TEST(KeyValueStoreContract, PutGetRemove) {
  auto& kv = *this->store_;
  ASSERT_TRUE(kv.put("a", "1"));
  EXPECT_EQ(kv.get("a").value(), "1");
  ASSERT_TRUE(kv.put("a", "2"));
  EXPECT_EQ(kv.get("a").value(), "2");
  ASSERT_TRUE(kv.remove("a"));
  auto gone = kv.get("a");
  EXPECT_EQ(gone.code(), ErrorCode::kNotFound);
  EXPECT_EQ(gone.status().message(), "key 'a' not found");
  EXPECT_TRUE(kv.remove("never-there"));
}

TYPED_TEST(KeyValueStoreContract, BinaryKeysAndValues) {
  auto& kv = *this->store_;
  const std::string key("k\0ey", 4);
  const std::string value("\0\1\2\xff", 4);
  ASSERT_TRUE(kv.put(key, value));
  EXPECT_EQ(kv.get(key).value(), value);
  EXPECT_EQ(kv.get("k").code(), ErrorCode::kNotFound);
}

TYPED_TEST(KeyValueStoreContract, ScanPrefixReturnsOnlyMatchingKeysInOrder) {
  auto& kv = *this->store_;
  for (auto k : {"topo/b", "topo/a", "topology", "top", "topo/c/x", "u"}) ASSERT_TRUE(kv.put(k, k));
  auto scanned = kv.scan_prefix("topo/");
  ASSERT_TRUE(scanned);
  std::vector<std::pair<std::string, std::string>> expected = {
      {"topo/a", "topo/a"}, {"topo/b", "topo/b"}, {"topo/c/x", "topo/c/x"}};
  EXPECT_EQ(*scanned, expected);
  EXPECT_EQ(kv.keys_with_prefix("top").value(),
            (std::vector<std::string>{"top", "topo/a", "topo/b", "topo/c/x", "topology"}));
  EXPECT_TRUE(kv.scan_prefix("zzz").value().empty());
}

TYPED_TEST(KeyValueStoreContract, ApplyWritesAndDeletesTogether) {
  auto& kv = *this->store_;
  ASSERT_TRUE(kv.put("old", "x"));
  ASSERT_TRUE(kv.apply({{"new1", "1"}, {"new2", "2"}, {"old", std::nullopt}}));
  EXPECT_EQ(kv.get("new1").value(), "1");
  EXPECT_EQ(kv.get("new2").value(), "2");
  EXPECT_EQ(kv.get("old").code(), ErrorCode::kNotFound);
}

// freeze() is what the store held when it was called, whatever is written
// before it is read (a checkpoint's snapshot, read on another thread).
TYPED_TEST(KeyValueStoreContract, FrozenIsTheStoreAsItWasWhenFrozen) {
  auto& kv = *this->store_;
  ASSERT_TRUE(kv.put("a", "1"));
  ASSERT_TRUE(kv.put("b", "2"));
  auto frozen = kv.freeze();
  ASSERT_TRUE(kv.put("a", "changed"));
  ASSERT_TRUE(kv.remove("b"));
  ASSERT_TRUE(kv.put("c", "3"));
  std::vector<std::pair<std::string, std::string>> read;
  std::thread reader([&] { read = frozen().value(); });
  reader.join();
  EXPECT_EQ(read, (std::vector<std::pair<std::string, std::string>>{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(kv.get("a").value(), "changed");
}

TYPED_TEST(KeyValueStoreContract, DataSurvivesReopenWhenDurable) {
  if (!this->backend_.durable()) GTEST_SKIP() << "the in-memory store has no restart";
  ASSERT_TRUE(this->store_->put("kept", "yes"));
  this->store_ = this->backend_.reopen(std::move(this->store_));
  ASSERT_NE(this->store_, nullptr);
  EXPECT_EQ(this->store_->get("kept").value(), "yes");
}

TEST(RocksDbStore, OpeningAMissingDirectoryWithoutCreateNamesIt) {
  RocksDbKv backend;
  auto store = RocksDbStore::open(backend.dir / "absent", {.create_if_missing = false});
  ASSERT_FALSE(store);
  EXPECT_EQ(store.code(), ErrorCode::kIoError);
  EXPECT_NE(store.status().message().find((backend.dir / "absent").string()), std::string::npos)
      << store.status().message();
}

TEST(RocksDbStore, SecondOpenOfTheSameDirectoryFailsWhileLocked) {
  RocksDbKv backend;
  auto first = backend.open();
  ASSERT_NE(first, nullptr);
  auto second = RocksDbStore::open(backend.dir / "db", {});
  ASSERT_FALSE(second);
  EXPECT_NE(second.status().message().find("cannot open RocksDB store in"), std::string::npos);
}

}  // namespace
}  // namespace rstorm::testing
