// Unit tests of __NAME__'s bolts against the rstorm API: each bolt gets a
// tuple and an output collector that records what it emits.
#include <gtest/gtest.h>

#include <rstorm/rstorm.hpp>

#include "../src/components.hpp"

namespace {

// Records every emit, ack and fail instead of sending them anywhere.
class RecordingCollector : public rstorm::OutputCollector {
 public:
  void emit_to(std::string_view stream, const rstorm::Tuple* const*, std::size_t,
               rstorm::Values values, rstorm::TaskId) override {
    emitted.push_back({std::string(stream), std::move(values)});
  }
  void ack(const rstorm::Tuple&) override { ++acked; }
  void fail(const rstorm::Tuple&) override { ++failed; }
  void report_error(std::string_view message) override { errors.emplace_back(message); }

  std::vector<std::pair<std::string, rstorm::Values>> emitted;
  int acked = 0;
  int failed = 0;
  std::vector<std::string> errors;
};

// A tuple of component `from`'s default stream with these fields.
struct Input {
  Input(const std::string& from, rstorm::Fields fields) {
    stream.component = from;
    stream.stream = std::string(rstorm::kDefaultStream);
    stream.fields = std::move(fields);
  }
  rstorm::Tuple tuple(rstorm::Values values) const {
    return rstorm::Tuple(&stream, rstorm::TaskId(1), std::move(values));
  }
  rstorm::StreamInfo stream;
};

TEST(ParityBolt, TagsEachNumberOddOrEven) {
  __NAME__::ParityBolt bolt;
  RecordingCollector out;
  const Input numbers("numbers", rstorm::Fields{"n"});
  for (std::int64_t n : {1, 2, 7}) {
    const rstorm::Tuple input = numbers.tuple({n});
    rstorm::BasicOutputCollector basic(out, input);
    bolt.execute(input, basic);
  }
  ASSERT_EQ(out.emitted.size(), 3u);
  EXPECT_EQ(out.emitted[0].second[0].as_string(), "odd");
  EXPECT_EQ(out.emitted[1].second[0].as_string(), "even");
  EXPECT_EQ(out.emitted[2].second[1].as_int(), 7);
}

TEST(TotalsBolt, KeepsARunningSumPerParity) {
  __NAME__::TotalsBolt bolt;
  RecordingCollector out;
  const Input parity("parity", rstorm::Fields{"parity", "n"});
  for (std::int64_t n : {1, 3, 4}) {
    const rstorm::Tuple input = parity.tuple({std::string(n % 2 ? "odd" : "even"), n});
    rstorm::BasicOutputCollector basic(out, input);
    bolt.execute(input, basic);
  }
  ASSERT_EQ(out.emitted.size(), 3u);
  EXPECT_EQ(out.emitted[1].second[1].as_int(), 4);  // odd: 1 + 3
  EXPECT_EQ(out.emitted[2].second[1].as_int(), 4);  // even: 4
}

}  // namespace
