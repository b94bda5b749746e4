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

}  // namespace
}  // namespace rstorm::fuzz
