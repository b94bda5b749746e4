// The collectors' emit overloads reach the abstract core of a collector
// that implements only that core (as a test's or a library's own does):
// each overload with its stream, anchors, message id and direct task, its
// values copied or moved.
#include <gtest/gtest.h>

#include <rstorm/rstorm.hpp>
#include <vector>

namespace rstorm {
namespace {

struct Emitted {
  std::string stream;
  std::size_t num_anchors = 0;
  Values values;
  Value msg_id;
  TaskId direct;
};

class CoreSpoutCollector final : public SpoutOutputCollector {
 public:
  void emit_to(std::string_view stream, Values&& values, Value msg_id, TaskId direct) override {
    emitted.push_back({std::string(stream), 0, std::move(values), std::move(msg_id), direct});
  }
  void report_error(std::string_view) override {}
  void finish() override {}
  std::vector<Emitted> emitted;
};

class CoreCollector final : public OutputCollector {
 public:
  void emit_to(std::string_view stream, const Tuple* const*, std::size_t num_anchors,
               Values&& values, TaskId direct) override {
    emitted.push_back({std::string(stream), num_anchors, std::move(values), Value(), direct});
  }
  void ack(const Tuple&) override {}
  void fail(const Tuple&) override {}
  void report_error(std::string_view) override {}
  std::vector<Emitted> emitted;
};

TEST(Collectors, SpoutEmitsReachTheCoreWithTheirStreamIdAndTask) {
  CoreSpoutCollector c;
  const Values copied{Value(3), Value("three")};
  c.emit({1, 2});
  c.emit(copied);
  c.emit(Values{Value(4)});
  c.emit({5}, Value(50));
  c.emit("side", {6});
  c.emit_direct(TaskId(7), Values{Value(7)});
  ASSERT_EQ(c.emitted.size(), 6u);
  EXPECT_EQ(c.emitted[0].stream, kDefaultStream);
  EXPECT_EQ(c.emitted[0].values, (Values{Value(1), Value(2)}));
  EXPECT_TRUE(c.emitted[0].msg_id.is_null());
  EXPECT_FALSE(c.emitted[0].direct.valid());
  EXPECT_EQ(c.emitted[1].stream, kDefaultStream);
  EXPECT_EQ(c.emitted[1].values, copied);
  EXPECT_TRUE(c.emitted[1].msg_id.is_null());
  EXPECT_EQ(c.emitted[2].values, Values{Value(4)});
  EXPECT_EQ(c.emitted[3].msg_id, Value(50));
  EXPECT_EQ(c.emitted[4].stream, "side");
  EXPECT_EQ(c.emitted[5].direct, TaskId(7));
}

TEST(Collectors, BoltEmitsReachTheCoreWithTheirStreamAnchorsAndTask) {
  CoreCollector c;
  const Tuple input(nullptr, TaskId(1), Values{Value(0)});
  const Values copied{Value(3), Value("three")};
  c.emit({1, 2});
  c.emit(input, copied);
  c.emit(std::vector<const Tuple*>{&input, &input}, {Value(4)});
  c.emit("side", input, {5});
  BasicOutputCollector basic(c, input);
  basic.emit({6});
  basic.emit(copied);
  basic.emit(Values{Value(7)});
  basic.emit_direct(TaskId(8), Values{Value(8)});
  ASSERT_EQ(c.emitted.size(), 8u);
  EXPECT_EQ(c.emitted[0].stream, kDefaultStream);
  EXPECT_EQ(c.emitted[0].num_anchors, 0u);
  EXPECT_EQ(c.emitted[0].values, (Values{Value(1), Value(2)}));
  EXPECT_EQ(c.emitted[1].num_anchors, 1u);
  EXPECT_EQ(c.emitted[1].values, copied);
  EXPECT_EQ(c.emitted[2].num_anchors, 2u);
  EXPECT_EQ(c.emitted[3].stream, "side");
  EXPECT_EQ(c.emitted[3].num_anchors, 1u);
  for (std::size_t i = 4; i < 8; ++i) {
    EXPECT_EQ(c.emitted[i].stream, kDefaultStream) << i;
    EXPECT_EQ(c.emitted[i].num_anchors, 1u) << i;
  }
  EXPECT_EQ(c.emitted[4].values, Values{Value(6)});
  EXPECT_EQ(c.emitted[5].values, copied);
  EXPECT_EQ(c.emitted[6].values, Values{Value(7)});
  EXPECT_FALSE(c.emitted[6].direct.valid());
  EXPECT_EQ(c.emitted[7].direct, TaskId(8));
}

}  // namespace
}  // namespace rstorm
