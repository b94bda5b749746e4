// `rstorm describe`'s text, from the answers nimbus gives (render.hpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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

// One error thrown by several tasks names them all, not only the last.
TEST(RenderDescribeTest, AnErrorFromSeveralTasksNamesThemAll) {
  thrift::TopologyInfo info;
  info.summary.id = "wc-1";
  info.summary.name = "wc";
  const auto error = [](std::int32_t task, std::int64_t time_ms) {
    thrift::ErrorInfo e;
    e.component = "count";
    e.message = "execute threw: boom";
    e.task_id = task;
    e.time_ms = time_ms;
    e.host = "127.0.0.1";
    e.port = 6700;
    return e;
  };
  info.errors = {error(5, 1000), error(3, 2000), error(5, 3000), error(7, 2500)};
  thrift::TopologyPlacement placement;
  placement.topology_id = "wc-1";
  placement.assignment.version = 1;
  const std::string text = render_describe_text(info, placement);
  EXPECT_NE(text.find("count: execute threw: boom (4 times in tasks 3, 5 and 7, last "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(", task 5 on 127.0.0.1:6700)"), std::string::npos) << text;
  const auto json = nlohmann::json::parse(render_describe_json(info, placement));
  EXPECT_EQ(json["errors"][0]["tasks"], nlohmann::json({3, 5, 7})) << json.dump();
}

}  // namespace
}  // namespace rstorm::nimbus
