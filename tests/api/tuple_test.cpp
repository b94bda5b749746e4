#include <gtest/gtest.h>

#include <limits>
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

TEST(Tuple, FieldPastTheTuplesValuesSaysHowManyItHas) {
  Tuple t(&kCounts, TaskId(7), Values{"apple"});
  EXPECT_EQ(t.get_string("word"), "apple");
  try {
    (void)t.get_int("count");
    FAIL() << "no exception";
  } catch (const TupleError& e) {
    EXPECT_STREQ(e.what(),
                 "field 'count' of stream 'default' from component 'count' is missing: the "
                 "tuple has 1 values");
  }
}

TEST(Tuple, FieldOfATupleWithNoSourceIsRefused) {
  Tuple t;
  try {
    (void)t.get("word");
    FAIL() << "no exception";
  } catch (const TupleError& e) {
    EXPECT_STREQ(e.what(), "no field 'word' of a tuple with no source (fields: )");
  }
}

TEST(Tuple, FieldsAreFoundByNameWhateverTheirPosition) {
  static const StreamInfo kThree{"c", "s", Fields{"a", "bb", "ccc"}, false};
  Tuple t(&kThree, TaskId(1), Values{1, "two", 3.5});
  EXPECT_EQ(t.get_int("a"), 1);
  EXPECT_EQ(t.get_string("bb"), "two");
  EXPECT_EQ(t.get_double("ccc"), 3.5);
  EXPECT_THROW((void)t.get("b"), TupleError);
  EXPECT_THROW((void)t.get("cccc"), TupleError);
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

// Value is a hand-written tagged union: every change of type through copy,
// move and assignment must leave the right value and no leak (ASan).
TEST(Value, CopiesMovesAndAssignsAcrossEveryType) {
  const std::string long_text(100, 'x');  // not a small string: on the heap
  const std::vector<Value> all = {
      Value(),          Value(true),          Value(-7), Value(2.5), Value("hi"),
      Value(long_text), Value(Bytes{1, 2, 3})};
  for (const Value& from : all) {
    for (const Value& to : all) {
      Value a = to;
      a = from;  // copy-assign over every type
      EXPECT_EQ(a, from) << from.to_string() << " over " << to.to_string();
      Value b = to;
      Value moved = from;
      b = std::move(moved);  // move-assign over every type
      EXPECT_EQ(b, from);
      Value c(std::move(b));  // move-construct
      EXPECT_EQ(c, from);
    }
    Value self = from;
    const Value& alias = self;
    self = alias;  // self-assignment keeps the value
    EXPECT_EQ(self, from);
  }
  EXPECT_EQ(Value(long_text).as_string(), long_text);
  EXPECT_EQ(Value(Bytes{1, 2, 3}).as_bytes(), (Bytes{1, 2, 3}));
}

// The fused hop's copy of a pair: every combination of a scalar and a
// string in the four places; a pair is copied only when all four are
// scalars, and nothing is touched otherwise.
TEST(Value, AssignsAPairOnlyWhenAllFourAreScalars) {
  const std::vector<Value> kinds = {Value(),        Value(true), Value(-7),
                                    Value(2.5),     Value("hi"), Value(std::string(100, 'x')),
                                    Value(Bytes{1})};
  for (const Value& t0 : kinds) {
    for (const Value& t1 : kinds) {
      for (const Value& f0 : kinds) {
        for (const Value& f1 : kinds) {
          Value to[2] = {t0, t1};
          const Value from[2] = {f0, f1};
          const bool scalars = t0.type() < ValueType::kString && t1.type() < ValueType::kString &&
                               f0.type() < ValueType::kString && f1.type() < ValueType::kString;
          EXPECT_EQ(Value::assign_two_if_scalar(to, from), scalars);
          EXPECT_EQ(to[0], scalars ? f0 : t0);
          EXPECT_EQ(to[1], scalars ? f1 : t1);
        }
      }
    }
  }
}

TEST(Value, ComparesTypeThenValue) {
  EXPECT_NE(Value(1), Value(1.0));  // int64 and double are different types
  EXPECT_NE(Value(1), Value(true));
  EXPECT_NE(Value(0), Value());
  EXPECT_EQ(Value(-0.0), Value(0.0));  // compared as doubles, not as bits
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(Value(nan), Value(nan));
  EXPECT_EQ(Value("a"), Value(std::string("a")));
  EXPECT_NE(Value("a"), Value(Bytes{'a'}));
}

TEST(Value, AccessOfAnotherTypeThrows) {
  EXPECT_THROW((void)Value(3).as_string(), std::bad_variant_access);
  EXPECT_THROW((void)Value("3").as_int(), std::bad_variant_access);
  EXPECT_THROW((void)Value().as_bool(), std::bad_variant_access);
  EXPECT_EQ(Value(std::int8_t{-3}).as_int(), -3);
  EXPECT_EQ(Value(1.5f).as_double(), 1.5);
  EXPECT_FALSE(Value(false).as_bool());
}

}  // namespace
}  // namespace rstorm
