// Worker files that fuzz_worker_spec found faults with: a number with a
// fraction where an integer belongs was cast to an integer, undefined
// behaviour when it does not fit (4e73 milliseconds); now the file is
// unreadable, as any other malformed file.
#include <gtest/gtest.h>

#include "tests/fuzz/regression_input.hpp"
#include "worker/process/worker_spec.hpp"

namespace rstorm::fuzz {
namespace {

TEST(FuzzWorkerSpec, HeartbeatWithAFractionalTimeIsUnreadable) {
  auto beat = worker_process::heartbeat_from_json(
      testing::regression_input("fuzz_worker_spec", "fraction"));
  ASSERT_FALSE(beat.is_ok());
  EXPECT_EQ(beat.status().message(), "bad worker heartbeat: a number with a fraction");
}

TEST(FuzzWorkerSpec, SpecWithAFractionalNumberIsUnreadable) {
  auto spec = worker_process::spec_from_json(
      R"({"topology_id": "wc-1", "topology_name": "wc", "library": "/l.so",
          "supervisor_id": "s", "host": "h", "port": 1e300, "worker_dir": "/w",
          "executors": [], "config": {}})");
  ASSERT_FALSE(spec.is_ok());
  EXPECT_EQ(spec.status().message(), "bad worker spec: a number with a fraction");
}

}  // namespace
}  // namespace rstorm::fuzz
