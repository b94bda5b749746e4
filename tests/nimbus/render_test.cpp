// `rstorm describe`'s text, from the answers nimbus gives (render.hpp).
#include <gtest/gtest.h>

#include "nimbus/render.hpp"

namespace rstorm::nimbus {
namespace {

// A topology on assignment `version`, whose latest assignment moved `moved`
// executors.
std::string describe_after_moving(int version, int moved) {
  thrift::TopologyInfo info;
  info.summary.id = "wc-1";
  info.summary.name = "wc";
  info.summary.moved_executors = moved;
  thrift::TopologyPlacement placement;
  placement.topology_id = "wc-1";
  placement.assignment.version = version;
  return render_describe_text(info, placement);
}

TEST(RenderDescribeTest, FirstAssignmentSaysNothingOfMoves) {
  const std::string text = describe_after_moving(1, 0);
  EXPECT_NE(text.find("Placement (assignment version 1):"), std::string::npos) << text;
}

TEST(RenderDescribeTest, MovedExecutorsAreCountedInTheirNumber) {
  EXPECT_NE(describe_after_moving(2, 1).find("(assignment version 2; it moved or resized 1 "
                                             "executor):"),
            std::string::npos);
  EXPECT_NE(describe_after_moving(3, 4).find("(assignment version 3; it moved or resized 4 "
                                             "executors):"),
            std::string::npos);
}

}  // namespace
}  // namespace rstorm::nimbus
