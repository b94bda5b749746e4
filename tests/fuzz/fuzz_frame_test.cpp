// Data-plane frames that fuzz_frame found faults with.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/fuzz/regression_input.hpp"
#include "tests/transport/transport_test_support.hpp"
#include "worker/transport/codec.hpp"

namespace rstorm::fuzz {
namespace {

using ::testing::HasSubstr;

// A hello frame that also carries a tuple batch claiming 16 million envelopes:
// the generated reader sized the list (1.3 GB) before reading any envelope.
TEST(FuzzFrame, ControlFrameClaimingAHugeListIsRefusedBeforeAllocatingIt) {
  const auto plan = transport::testing::make_test_plan();
  const transport::PlanIndex index(*plan);
  const std::string frame = testing::regression_input("fuzz_frame", "control-frame-huge-list");
  transport::FrameDecoder decoder(index, nullptr);
  worker::Batch out;
  transport::ControlMessage control;
  auto type = decoder.decode(reinterpret_cast<const std::uint8_t*>(frame.data()), frame.size(), out,
                             control);
  ASSERT_FALSE(type.is_ok());
  EXPECT_THAT(type.status().message(), HasSubstr("size limit"));
  EXPECT_TRUE(out.empty());
}

// A tuple frame whose batch has a field in long form and garbage after it:
// reading it failed inside a struct, and the decoder's protocol kept that
// struct's field ids, so the same bytes decoded again failed for another
// reason and a good frame after them did not decode at all.
TEST(FuzzFrame, ADecoderThatRefusedAFrameReadsTheNextOneAfresh) {
  const auto plan = transport::testing::make_test_plan();
  const transport::PlanIndex index(*plan);
  const std::string bad =
      testing::regression_input("fuzz_frame", "decoder-reused-after-a-failed-read");
  const std::vector<char> worker_b = {0, 0, 0, 1, 1, 0, 1};
  transport::FrameDecoder decoder(index, &worker_b);
  worker::Batch out;
  transport::ControlMessage control;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(bad.data());
  auto first = decoder.decode(bytes, bad.size(), out, control);
  ASSERT_FALSE(first.is_ok());
  for (int i = 0; i < 3; ++i) {
    auto again = decoder.decode_with_thrift(bytes, bad.size(), out, control);
    ASSERT_FALSE(again.is_ok());
    EXPECT_EQ(again.status().message(), first.status().message());
  }
  worker::Batch good{transport::testing::data_envelope(*plan, 3, 7)};
  transport::FrameEncoder encoder;
  ASSERT_EQ(encoder.add_tuples(index, good, 256), 1u);
  auto type =
      decoder.decode_with_thrift(encoder.data() + transport::kLengthPrefixBytes,
                                 encoder.size() - transport::kLengthPrefixBytes, out, control);
  ASSERT_TRUE(type.is_ok()) << type.status().message();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tuple.values(), good[0].tuple.values());
}

}  // namespace
}  // namespace rstorm::fuzz
