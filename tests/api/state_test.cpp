// Keyed state of the API (rstorm/state.hpp): codecs and the order of their
// keys, typed states over the in-memory store, prefix scans, named states
// sharing one store, errors naming task, state and key, and the state a
// TopologyContext hands out.
#include "rstorm/state.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "rstorm/topology_context.hpp"

struct Point {
  std::int32_t x = 0, y = 0;
  friend bool operator==(const Point&, const Point&) = default;
};

// The user codec of state_codec.hpp's comment, as written there.
namespace rstorm {
template <>
struct StateCodec<Point> {
  static std::string encode(const Point& p) {
    return StateCodec<std::int32_t>::encode(p.x) + StateCodec<std::int32_t>::encode(p.y);
  }
  static Point decode(std::string_view bytes) {
    if (bytes.size() != 8) {
      throw StateCodecError("Point", std::to_string(bytes.size()) + " bytes, expected 8");
    }
    return {StateCodec<std::int32_t>::decode(bytes.substr(0, 4)),
            StateCodec<std::int32_t>::decode(bytes.substr(4))};
  }
};
}  // namespace rstorm

namespace rstorm {
namespace {

template <typename T>
T round_trip(const T& v) {
  return StateCodec<T>::decode(StateCodec<T>::encode(v));
}

// Sorts `values` by the bytes of their encodings.
template <typename T>
std::vector<T> sorted_by_encoding(std::vector<T> values) {
  std::vector<std::string> encoded;
  for (const T& v : values) encoded.push_back(StateCodec<T>::encode(v));
  std::sort(encoded.begin(), encoded.end());
  std::vector<T> out;
  for (const auto& e : encoded) out.push_back(StateCodec<T>::decode(e));
  return out;
}

TEST(StateCodec, IntegersRoundTrip) {
  for (std::int64_t v :
       {std::numeric_limits<std::int64_t>::min(), std::int64_t{-1}, std::int64_t{0},
        std::int64_t{1}, std::int64_t{1} << 40, std::numeric_limits<std::int64_t>::max()}) {
    EXPECT_EQ(round_trip(v), v);
    EXPECT_EQ(StateCodec<std::int64_t>::encode(v).size(), 8u);
  }
  EXPECT_EQ(round_trip(std::int32_t{-123456}), -123456);
  EXPECT_EQ(round_trip(std::int8_t{-128}), -128);
  EXPECT_EQ(round_trip(std::uint8_t{255}), 255);
  EXPECT_EQ(round_trip(std::uint64_t{18446744073709551615u}), 18446744073709551615u);
  EXPECT_EQ(StateCodec<std::int16_t>::encode(-1).size(), 2u);
}

TEST(StateCodec, OtherTypesRoundTrip) {
  EXPECT_EQ(round_trip(true), true);
  EXPECT_EQ(round_trip(false), false);
  for (double d : {0.0, -0.0, 1.5, -1.5, 1e-310, -1e300, std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(round_trip(d), d);
    EXPECT_EQ(std::signbit(round_trip(d)), std::signbit(d)) << d;
  }
  EXPECT_TRUE(std::isnan(round_trip(std::numeric_limits<double>::quiet_NaN())));
  const std::string with_nul("a\0b", 3);
  EXPECT_EQ(round_trip(with_nul), with_nul);
  EXPECT_EQ(round_trip(std::string()), "");
  EXPECT_EQ(round_trip(Bytes{0, 255, 7}), (Bytes{0, 255, 7}));
  for (const Value& v : {Value(), Value(true), Value(std::int64_t{-42}), Value(2.5), Value("text"),
                         Value(Bytes{1, 2}), Value(std::string())}) {
    EXPECT_EQ(round_trip(v), v) << v.to_string();
  }
  EXPECT_EQ(round_trip(Point{-3, 4}), (Point{-3, 4}));
}

TEST(StateCodec, IntegerKeysSortNumerically) {
  const std::vector<std::int64_t> ints = {5,    -1,  std::numeric_limits<std::int64_t>::max(), 0,
                                          -300, 256, std::numeric_limits<std::int64_t>::min(), 1};
  std::vector<std::int64_t> expected = ints;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(sorted_by_encoding(ints), expected);

  const std::vector<std::int32_t> small = {7, -7, 0, -2147483647 - 1, 2147483647, 65536, -65536};
  std::vector<std::int32_t> small_expected = small;
  std::sort(small_expected.begin(), small_expected.end());
  EXPECT_EQ(sorted_by_encoding(small), small_expected);

  const std::vector<std::uint16_t> unsigned_keys = {65535, 0, 256, 255, 1};
  EXPECT_EQ(sorted_by_encoding(unsigned_keys), (std::vector<std::uint16_t>{0, 1, 255, 256, 65535}));
}

TEST(StateCodec, DoubleAndValueKeysSortByValue) {
  const std::vector<double> doubles = {2.5, -0.5, 1e300, -1e300, 0.0, -2.5, 1e-300};
  std::vector<double> expected = doubles;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(sorted_by_encoding(doubles), expected);

  const std::vector<Value> values = {Value(std::int64_t{3}), Value(std::int64_t{-3}),
                                     Value(std::int64_t{0})};
  EXPECT_EQ(sorted_by_encoding(values),
            (std::vector<Value>{Value(std::int64_t{-3}), Value(std::int64_t{0}),
                                Value(std::int64_t{3})}));
}

TEST(StateCodec, BytesOfAnotherTypeAreRefusedSayingWhy) {
  auto what = [](auto decode) {
    try {
      decode();
    } catch (const StateCodecError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(what([] { StateCodec<std::int64_t>::decode("abc"); }),
            "cannot be decoded as int64: 3 bytes, expected 8");
  EXPECT_EQ(what([] { StateCodec<std::uint16_t>::decode("abc"); }),
            "cannot be decoded as uint16: 3 bytes, expected 2");
  EXPECT_EQ(what([] { StateCodec<bool>::decode("x"); }),
            "cannot be decoded as bool: byte 120, expected 0 or 1");
  EXPECT_EQ(what([] { StateCodec<double>::decode(""); }),
            "cannot be decoded as double: 0 bytes, expected 8");
  EXPECT_EQ(what([] { StateCodec<Value>::decode(std::string("\2ab", 3)); }),
            "cannot be decoded as Value: int64 of 2 bytes, expected 8");
  EXPECT_EQ(what([] { StateCodec<Value>::decode("\x09"); }),
            "cannot be decoded as Value: unknown type byte 9");
}

class KeyValueStateTest : public ::testing::Test {
 protected:
  std::shared_ptr<InMemoryStateStore> store_ = std::make_shared<InMemoryStateStore>();
};

TEST_F(KeyValueStateTest, PutGetRemove) {
  KeyValueState<std::string, std::int64_t> counts(store_, "counts", TaskId(7), "count");
  EXPECT_EQ(counts.get("apple"), std::nullopt);
  EXPECT_EQ(counts.get("apple", 0), 0);
  EXPECT_FALSE(counts.contains("apple"));
  counts.put("apple", 3);
  counts.put("pear", -4);
  EXPECT_EQ(counts.get("apple"), 3);
  EXPECT_EQ(counts.get("pear", 0), -4);
  EXPECT_TRUE(counts.contains("pear"));
  counts.put("apple", 4);
  EXPECT_EQ(counts.get("apple"), 4);
  counts.remove("apple");
  counts.remove("never-there");
  EXPECT_EQ(counts.get("apple"), std::nullopt);
  EXPECT_EQ(counts.name(), "counts");
  // The store holds `<name>\0<key>`.
  EXPECT_EQ(store_->size(), 1u);
  EXPECT_EQ(store_->get(std::string("counts\0pear", 11)), StateCodec<std::int64_t>::encode(-4));
}

TEST_F(KeyValueStateTest, PrefixScanVisitsKeysWithThePrefixInOrder) {
  KeyValueState<std::string, std::int64_t> counts(store_, "counts");
  for (const char* w : {"banana", "apricot", "ap", "apple", "a", "aq"}) counts.put(w, 1);
  std::vector<std::string> seen;
  counts.for_each_prefix("ap", [&](const std::string& k, std::int64_t) { seen.push_back(k); });
  EXPECT_EQ(seen, (std::vector<std::string>{"ap", "apple", "apricot"}));

  seen.clear();
  counts.for_each_prefix("ap", [&](const std::string& k, std::int64_t) {
    seen.push_back(k);
    return seen.size() < 2;  // stop after two
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"ap", "apple"}));

  const auto all = counts.scan_prefix("");
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all.front().first, "a");
  EXPECT_EQ(all.back().first, "banana");
  EXPECT_TRUE(counts.scan_prefix("c").empty());
}

TEST_F(KeyValueStateTest, IntegerKeysAreVisitedInNumericOrder) {
  KeyValueState<std::int64_t, std::string> names(store_, "names");
  for (std::int64_t k : {300, -2, 0, 7, -1000, 256}) names.put(k, std::to_string(k));
  std::vector<std::int64_t> keys;
  names.for_each([&](std::int64_t k, const std::string& v) {
    EXPECT_EQ(v, std::to_string(k));
    keys.push_back(k);
  });
  EXPECT_EQ(keys, (std::vector<std::int64_t>{-1000, -2, 0, 7, 256, 300}));
  EXPECT_EQ(names.scan_prefix(7), (std::vector<std::pair<std::int64_t, std::string>>{{7, "7"}}));
}

TEST_F(KeyValueStateTest, VisitorMayWriteToTheStateItScans) {
  KeyValueState<std::string, std::int64_t> counts(store_, "counts");
  counts.put("a", 1);
  counts.put("b", 2);
  counts.for_each([&](const std::string& k, std::int64_t v) {
    counts.put(k, v * 10);
    counts.put(k + "x", v);
  });
  EXPECT_EQ(counts.get("a"), 10);
  EXPECT_EQ(counts.get("bx"), 2);
  EXPECT_EQ(counts.scan_prefix("").size(), 4u);
}

TEST_F(KeyValueStateTest, TwoNamedStatesInOneStoreDoNotCollide) {
  // "a" is a prefix of "ab": their keys still differ (`a\0...` and `ab\0...`).
  KeyValueState<std::string, std::string> a(store_, "a", TaskId(1), "c");
  KeyValueState<std::string, std::string> ab(store_, "ab", TaskId(1), "c");
  KeyValueState<std::string, std::int64_t> a_again(store_, "a", TaskId(1), "c");
  a.put("bx", "of a");
  ab.put("x", "of ab");
  a.put("", "empty key of a");
  EXPECT_EQ(a.get("bx"), "of a");
  EXPECT_EQ(ab.get("x"), "of ab");
  EXPECT_EQ(a.get("x"), std::nullopt);
  EXPECT_EQ(ab.get("bx"), std::nullopt);
  EXPECT_EQ(a.scan_prefix("").size(), 2u);
  EXPECT_EQ(ab.scan_prefix("").size(), 1u);
  a.clear();
  EXPECT_TRUE(a.scan_prefix("").empty());
  EXPECT_EQ(ab.get("x"), "of ab");
  EXPECT_EQ(store_->size(), 1u);
}

TEST_F(KeyValueStateTest, ValueThatCannotBeDecodedNamesTaskStateAndKey) {
  KeyValueState<std::string, std::string> as_text(store_, "counts", TaskId(7), "count");
  as_text.put("apple", "abc");
  KeyValueState<std::string, std::int64_t> counts(store_, "counts", TaskId(7), "count");
  try {
    counts.get("apple");
    FAIL() << "no StateError";
  } catch (const StateError& e) {
    EXPECT_EQ(std::string(e.what()),
              "state 'counts' of task 7 (component 'count'): value of key 'apple' cannot be "
              "decoded as int64: 3 bytes, expected 8");
  }
  EXPECT_THROW(counts.for_each([](const std::string&, std::int64_t) {}), StateError);
}

TEST_F(KeyValueStateTest, KeyThatCannotBeDecodedInAScanIsNamed) {
  KeyValueState<std::string, std::string> as_text(store_, "ids", TaskId(3), "split");
  as_text.put("abc", "x");
  as_text.put(std::string("\1\2", 2), "y");
  KeyValueState<std::int64_t, std::string> ids(store_, "ids", TaskId(3), "split");
  try {
    ids.for_each([](std::int64_t, const std::string&) {});
    FAIL() << "no StateError";
  } catch (const StateError& e) {
    EXPECT_EQ(std::string(e.what()),
              "state 'ids' of task 3 (component 'split'): key 0x0102 cannot be decoded as int64: "
              "2 bytes, expected 8");
  }
}

// A store whose writes fail, as a full disk would make them.
class FailingStore final : public StateStore {
 public:
  std::optional<std::string> get(std::string_view) override { return std::nullopt; }
  void put(std::string_view, std::string_view) override { throw StateError("disk full"); }
  void remove(std::string_view) override { throw StateError("disk full"); }
  std::vector<std::pair<std::string, std::string>> scan_prefix(std::string_view) override {
    throw StateError("disk full");
  }
  void apply(const std::vector<StateWrite>&) override { throw StateError("disk full"); }
};

TEST(KeyValueState, StoreFailureNamesTaskStateAndKey) {
  KeyValueState<std::int64_t, std::int64_t> sums(std::make_shared<FailingStore>(), "sums",
                                                 TaskId(4), "sum");
  try {
    sums.put(42, 1);
    FAIL() << "no StateError";
  } catch (const StateError& e) {
    EXPECT_EQ(std::string(e.what()),
              "state 'sums' of task 4 (component 'sum'): put of key 42 failed: disk full");
  }
  try {
    sums.for_each([](std::int64_t, std::int64_t) {});
    FAIL() << "no StateError";
  } catch (const StateError& e) {
    EXPECT_EQ(std::string(e.what()),
              "state 'sums' of task 4 (component 'sum'): scan failed: disk full");
  }
}

TEST(KeyValueState, NamesThatCannotBeUsedAreRefused) {
  auto store = std::make_shared<InMemoryStateStore>();
  auto message = [&](std::string name) {
    try {
      KeyValueState<std::string, std::string>(store, std::move(name), TaskId(2), "c");
    } catch (const StateError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message(""), "state '' of task 2 (component 'c'): a state needs a name");
  EXPECT_EQ(message(std::string("a\0b", 3)),
            "state 0x610062 of task 2 (component 'c'): a state name cannot hold '\\0'");
  EXPECT_EQ(message("__window"),
            "state '__window' of task 2 (component 'c'): state names "
            "starting with \"__\" are reserved");
  EXPECT_EQ(message("counts"), "accepted");
}

TEST(KeyValueState, UnboundStateThrowsInsteadOfCrashing) {
  KeyValueState<std::string, std::int64_t> unbound;
  EXPECT_FALSE(unbound.bound());
  EXPECT_THROW(unbound.get("a"), StateError);
  EXPECT_THROW(unbound.put("a", 1), StateError);
}

TEST(KeyValueState, WritesOfSeveralStatesApplyTogether) {
  TopologyContext context("t", "count", TaskId(5), 0, std::make_shared<TaskLayout>());
  auto counts = context.key_value_state<std::string, std::int64_t>("counts");
  auto total = context.key_value_state<std::string, std::int64_t>("total");
  counts.put("stale", 1);
  context.state_store()->apply(
      {counts.put_write("apple", 2), total.put_write("all", 2), counts.remove_write("stale")});
  EXPECT_EQ(counts.get("apple"), 2);
  EXPECT_EQ(total.get("all"), 2);
  EXPECT_EQ(counts.get("stale"), std::nullopt);
}

TEST(TopologyContextState, ContextWithoutBackendKeepsStateOfItsOwn) {
  auto layout = std::make_shared<TaskLayout>();
  TopologyContext a("t", "count", TaskId(1), 0, layout);
  TopologyContext b("t", "count", TaskId(2), 1, layout);
  auto first = a.key_value_state<std::string, std::int64_t>("counts");
  first.put("apple", 1);
  // Every call with one name views the same entries; another context does not.
  EXPECT_EQ((a.key_value_state<std::string, std::int64_t>("counts").get("apple")), 1);
  EXPECT_EQ(a.state_store(), a.state_store());
  EXPECT_EQ((b.key_value_state<std::string, std::int64_t>("counts").get("apple")), std::nullopt);
}

TEST(TopologyContextState, TasksSharingABackendHaveAStoreEach) {
  auto layout = std::make_shared<TaskLayout>();
  auto backend = std::make_shared<InMemoryStateBackend>();
  TopologyContext a("t", "count", TaskId(1), 0, layout, nullptr, backend);
  TopologyContext b("t", "count", TaskId(2), 1, layout, nullptr, backend);
  TopologyContext a_again("t", "count", TaskId(1), 0, layout, nullptr, backend);
  a.key_value_state<std::string, std::int64_t>("counts").put("apple", 1);
  EXPECT_EQ((a_again.key_value_state<std::string, std::int64_t>("counts").get("apple")), 1);
  EXPECT_EQ((b.key_value_state<std::string, std::int64_t>("counts").get("apple")), std::nullopt);
  EXPECT_NE(a.state_store(), b.state_store());
}

TEST(TopologyContextState, ErrorsNameTheContextsTask) {
  TopologyContext c("t", "count", TaskId(9), 0, std::make_shared<TaskLayout>());
  c.key_value_state<std::string, std::string>("counts").put("apple", "x");
  try {
    c.key_value_state<std::string, double>("counts").get("apple");
    FAIL() << "no StateError";
  } catch (const StateError& e) {
    EXPECT_EQ(std::string(e.what()),
              "state 'counts' of task 9 (component 'count'): value of key 'apple' cannot be "
              "decoded as double: 1 byte, expected 8");
  }
}

}  // namespace
}  // namespace rstorm
