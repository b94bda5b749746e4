// The runtime's state backends (rstorm/worker/state_backends.hpp): one
// contract run on the in-memory and the RocksDB backend, RocksDB's stores on
// disk (reopened, unopenable), and the choice topology.state.provider makes.
#include "rstorm/worker/state_backends.hpp"

#include "test_helpers.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

namespace rstorm::worker {
namespace {

struct InMemory {
  std::shared_ptr<StateBackend> make(const std::filesystem::path&) {
    return std::make_shared<InMemoryStateBackend>();
  }
};

struct RocksDb {
  std::shared_ptr<StateBackend> make(const std::filesystem::path& dir) {
    return std::make_shared<RocksDbStateBackend>(dir);
  }
};

template <typename Backend>
class StateBackendContract : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  std::shared_ptr<StateBackend> backend_ = Backend().make(dir_.path());
  std::shared_ptr<StateStore> store_ = backend_->open(TaskId(7), "count");
};

using Backends = ::testing::Types<InMemory, RocksDb>;
TYPED_TEST_SUITE(StateBackendContract, Backends);

TYPED_TEST(StateBackendContract, PutGetOverwriteRemove) {
  StateStore& s = *this->store_;
  EXPECT_EQ(s.get("a"), std::nullopt);
  s.put("a", "1");
  s.put(std::string("b\0c", 3), std::string("\0\1", 2));
  EXPECT_EQ(s.get("a"), "1");
  EXPECT_EQ(s.get(std::string("b\0c", 3)), std::string("\0\1", 2));
  s.put("a", "");
  EXPECT_EQ(s.get("a"), "");
  s.remove("a");
  s.remove("never");
  EXPECT_EQ(s.get("a"), std::nullopt);
}

TYPED_TEST(StateBackendContract, PrefixScanIsInUnsignedByteOrder) {
  StateStore& s = *this->store_;
  for (const std::string k : {"ab", "a\xff", "a", "b", "a\x01", "aa"}) s.put(k, "v" + k);
  std::vector<std::string> keys;
  for (const auto& [k, v] : s.scan_prefix("a")) {
    EXPECT_EQ(v, "v" + k);
    keys.push_back(k);
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "a\x01", "aa", "ab", "a\xff"}));
  EXPECT_EQ(s.scan_prefix("").size(), 6u);
  EXPECT_TRUE(s.scan_prefix("c").empty());
}

TYPED_TEST(StateBackendContract, BatchAppliesPutsAndRemovesInOrder) {
  StateStore& s = *this->store_;
  s.put("old", "1");
  s.apply({{"x", "1"}, {"old", std::nullopt}, {"x", "2"}, {"y", "3"}});
  EXPECT_EQ(s.get("x"), "2");
  EXPECT_EQ(s.get("y"), "3");
  EXPECT_EQ(s.get("old"), std::nullopt);
}

TYPED_TEST(StateBackendContract, TypedStatesGiveTheSameResults) {
  KeyValueState<std::string, std::int64_t> counts(this->store_, "counts", TaskId(7), "count");
  KeyValueState<std::int64_t, Value> by_id(this->store_, "by_id", TaskId(7), "count");
  for (const char* w : {"pear", "apple", "apricot", "banana"}) counts.put(w, std::string(w).size());
  for (std::int64_t id : {10, -5, 0, 1000}) by_id.put(id, Value(id * 2));
  by_id.remove(0);
  EXPECT_EQ(counts.scan_prefix("ap"),
            (std::vector<std::pair<std::string, std::int64_t>>{{"apple", 5}, {"apricot", 7}}));
  std::vector<std::int64_t> ids;
  by_id.for_each([&](std::int64_t id, const Value& v) {
    EXPECT_EQ(v, Value(id * 2));
    ids.push_back(id);
  });
  EXPECT_EQ(ids, (std::vector<std::int64_t>{-5, 10, 1000}));
  counts.clear();
  EXPECT_TRUE(counts.scan_prefix("").empty());
  EXPECT_EQ(by_id.get(10), Value(std::int64_t{20}));
}

TYPED_TEST(StateBackendContract, EachTaskHasOneStoreOfItsOwn) {
  this->store_->put("k", "of 7");
  EXPECT_EQ(this->backend_->open(TaskId(7), "count"), this->store_);
  auto other = this->backend_->open(TaskId(8), "count");
  EXPECT_NE(other, this->store_);
  EXPECT_EQ(other->get("k"), std::nullopt);
}

TYPED_TEST(StateBackendContract, UndecodableValueNamesTaskStateAndKey) {
  this->store_->put(std::string("counts\0apple", 12), "abc");
  KeyValueState<std::string, std::int64_t> counts(this->store_, "counts", TaskId(7), "count");
  try {
    counts.get("apple");
    FAIL() << "no StateError";
  } catch (const StateError& e) {
    EXPECT_EQ(std::string(e.what()),
              "state 'counts' of task 7 (component 'count'): value of key 'apple' cannot be "
              "decoded as int64: 3 bytes, expected 8");
  }
}

TEST(RocksDbStateBackend, StateSurvivesClosingAndReopeningTheStore) {
  testing::TempDir dir;
  {
    RocksDbStateBackend backend(dir.path());
    KeyValueState<std::string, std::int64_t> counts(backend.open(TaskId(3), "count"), "counts");
    counts.put("apple", 3);
    counts.put("pear", 1);
    counts.remove("pear");
  }  // every handle gone: the database is closed
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() / "task-3"));
  RocksDbStateBackend again(dir.path());
  KeyValueState<std::string, std::int64_t> counts(again.open(TaskId(3), "count"), "counts");
  EXPECT_EQ(counts.scan_prefix(""),
            (std::vector<std::pair<std::string, std::int64_t>>{{"apple", 3}}));
}

TEST(RocksDbStateBackend, UnwritableDirectoryErrorNamesTaskAndPath) {
  testing::TempDir dir;
  // A regular file where a directory should be: cannot be created, even by root.
  const auto file = dir.path() / "not-a-dir";
  std::ofstream(file) << "x";
  RocksDbStateBackend backend(file / "state");
  try {
    backend.open(TaskId(4), "count");
    FAIL() << "no StateError";
  } catch (const StateError& e) {
    const std::string expected = "cannot open the state store of task 4 (component 'count') in " +
                                 (file / "state" / "task-4").string() + ": ";
    EXPECT_EQ(std::string(e.what()).substr(0, expected.size()), expected) << e.what();
  }
}

TEST(RocksDbStateBackend, StoreHeldByAnotherBackendErrorNamesTaskAndPath) {
  testing::TempDir dir;
  RocksDbStateBackend first(dir.path());
  auto held = first.open(TaskId(2), "split");
  RocksDbStateBackend second(dir.path());
  try {
    second.open(TaskId(2), "split");
    FAIL() << "no StateError";
  } catch (const StateError& e) {
    const std::string expected = "cannot open the state store of task 2 (component 'split') in " +
                                 (dir.path() / "task-2").string() + ": ";
    EXPECT_EQ(std::string(e.what()).substr(0, expected.size()), expected) << e.what();
  }
}

TEST(MakeStateBackend, NullProviderMeansTheRuntimesDefault) {
  Config config;
  config.set("topology.state.provider", nullptr, "conf/defaults.yaml");
  auto memory = make_state_backend(config, StateBackendDefaults{});
  ASSERT_TRUE(memory.ok()) << memory.status().message();
  EXPECT_NE(dynamic_cast<InMemoryStateBackend*>(memory->get()), nullptr);

  auto rocks =
      make_state_backend(config, {.provider = "rocksdb", .dir = "/w/state", .topology = "wc-1"});
  ASSERT_TRUE(rocks.ok()) << rocks.status().message();
  auto* r = dynamic_cast<RocksDbStateBackend*>(rocks->get());
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->task_dir(TaskId(7)), std::filesystem::path("/w/state/task-7"));
}

TEST(MakeStateBackend, ConfigChoosesProviderAndFolder) {
  Config config;
  config.set("topology.state.provider", "memory", "topology");
  auto memory =
      make_state_backend(config, {.provider = "rocksdb", .dir = "/w/state", .topology = "wc-1"});
  ASSERT_TRUE(memory.ok());
  EXPECT_NE(dynamic_cast<InMemoryStateBackend*>(memory->get()), nullptr);

  config.set("topology.state.provider", "rocksdb", "topology");
  config.set("topology.state.rocksdb.dir", "/data/state", "topology");
  auto rocks = make_state_backend(config, {.dir = "/w/state", .topology = "wc-1"});
  ASSERT_TRUE(rocks.ok());
  auto* r = dynamic_cast<RocksDbStateBackend*>(rocks->get());
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->task_dir(TaskId(2)), std::filesystem::path("/data/state/wc-1/task-2"));
}

TEST(MakeStateBackend, BadProviderIsNamed) {
  Config config;
  config.set("topology.state.provider", "disk", "topology");
  EXPECT_EQ(make_state_backend(config, {}).status().message(),
            "topology.state.provider: \"disk\" is not a state provider: expected \"memory\" or "
            "\"rocksdb\"");
  config.set("topology.state.provider", 3, "command line");
  EXPECT_NE(make_state_backend(config, {}).status().message().find("topology.state.provider"),
            std::string::npos);
  config.set("topology.state.provider", "rocksdb", "topology");
  EXPECT_EQ(make_state_backend(config, {}).status().message(),
            "topology.state.provider is \"rocksdb\" but there is no folder for the stores: set "
            "topology.state.rocksdb.dir");
}

}  // namespace
}  // namespace rstorm::worker
