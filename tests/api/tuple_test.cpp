#include <gtest/gtest.h>

#include <rstorm/tuple.hpp>

namespace rstorm {
namespace {

const StreamInfo kCounts{"count", "default", Fields{"word", "count"}};

TEST(Tuple, ReadsValuesByIndexAndByFieldName) {
  Tuple t(&kCounts, TaskId(7), Values{"apple", 3});
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.get_string(0), "apple");
  EXPECT_EQ(t.get_string("word"), "apple");
  EXPECT_EQ(t.get_int("count"), 3);
  EXPECT_EQ(t.get("count"), Value(3));
  EXPECT_EQ(t.source_component(), "count");
  EXPECT_EQ(t.source_stream(), "default");
  EXPECT_EQ(t.source_task(), TaskId(7));
  EXPECT_FALSE(t.is_tick());
  EXPECT_TRUE(t.contains("word"));
  EXPECT_FALSE(t.contains("size"));
}

TEST(Tuple, TypeMismatchNamesFieldStreamAndTypes) {
  Tuple t(&kCounts, TaskId(7), Values{"apple", 3});
  try {
    (void)t.get_int("word");
    FAIL() << "no exception";
  } catch (const TupleError& e) {
    EXPECT_STREQ(e.what(),
                 "field 'word' of stream 'default' from component 'count' holds a string, "
                 "not an int64");
  }
  try {
    (void)t.get_string(1);
    FAIL() << "no exception";
  } catch (const TupleError& e) {
    EXPECT_STREQ(e.what(),
                 "field 'count' of stream 'default' from component 'count' holds an int64, "
                 "not a string");
  }
}

TEST(Tuple, UnknownFieldNamesDeclaredFields) {
  Tuple t(&kCounts, TaskId(7), Values{"apple", 3});
  try {
    (void)t.get("size");
    FAIL() << "no exception";
  } catch (const TupleError& e) {
    EXPECT_STREQ(e.what(),
                 "no field 'size' of stream 'default' from component 'count' (fields: word, "
                 "count)");
  }
}

TEST(Tuple, IndexOutOfRangeSaysHowManyValues) {
  Tuple t(&kCounts, TaskId(7), Values{"apple", 3});
  try {
    (void)t.get_double(5);
    FAIL() << "no exception";
  } catch (const TupleError& e) {
    EXPECT_STREQ(e.what(),
                 "value 5 of stream 'default' from component 'count' does not exist: the "
                 "tuple has 2 values");
  }
}

TEST(Tuple, AnchorsKeepOneRootInlineAndXorEdges) {
  MessageAnchors a;
  a.xor_in(10, 0b1100);
  a.xor_in(10, 0b0101);
  a.xor_in(20, 7);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].root, 10u);
  EXPECT_EQ(a[0].edge, 0b1001u);
  EXPECT_EQ(a[1].root, 20u);
  EXPECT_EQ(a[1].edge, 7u);
}

TEST(Value, RendersEachType) {
  EXPECT_EQ(Value().to_string(), "null");
  EXPECT_EQ(Value(true).to_string(), "true");
  EXPECT_EQ(Value(-4).to_string(), "-4");
  EXPECT_EQ(Value(0.5).to_string(), "0.5");
  EXPECT_EQ(Value("hi").to_string(), "hi");
  EXPECT_EQ(Value(Bytes{0x0f, 0xa0}).to_string(), "0x0fa0");
  EXPECT_EQ(type_name(ValueType::kBytes), "bytes");
}

}  // namespace
}  // namespace rstorm
