// Tests of __NAME__: each bolt alone against the rstorm API (a tuple in, an
// output collector that records what it emits), then the whole topology run
// in-process with rstorm::testing::complete_topology and a mocked spout.
#include <gtest/gtest.h>

#include <rstorm/rstorm.hpp>
#include <rstorm/testing.hpp>

#include <algorithm>
#include <map>

#include "../src/components.hpp"

namespace {

// Records every emit, ack and fail instead of sending them anywhere.
class RecordingCollector : public rstorm::OutputCollector {
 public:
  void emit_to(std::string_view stream, const rstorm::Tuple* const*, std::size_t,
               rstorm::Values&& values, rstorm::TaskId) override {
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

TEST(Topology, SumsEveryNumberByParity) {
  auto topology = __NAME__::build_topology();
  ASSERT_TRUE(topology.ok()) << topology.status().message();
  rstorm::testing::CompleteTopologyOptions options;
  std::vector<rstorm::Values> numbers;
  for (std::int64_t n = 1; n <= 10; ++n) numbers.push_back({n});
  options.mocked_sources.add("numbers", numbers);
  auto run = rstorm::testing::complete_topology(*topology, options);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->acked("numbers"), 10u);
  EXPECT_EQ(run->failed("numbers"), 0u);
  // totals emits (parity, running sum): the largest sum of each parity is its total.
  std::map<std::string, std::int64_t> total;
  for (const auto& v : run->emitted("totals")) {
    total[v[0].as_string()] = std::max(total[v[0].as_string()], v[1].as_int());
  }
  EXPECT_EQ(total, (std::map<std::string, std::int64_t>{{"even", 30}, {"odd", 25}}));
}

}  // namespace
