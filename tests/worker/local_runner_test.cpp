// run_local, the logic behind `rstorm local`.
#include <gtest/gtest.h>

#include <sstream>

#include "rstorm/worker/local_runner.hpp"

namespace rstorm::worker {
namespace {

TEST(LocalRunner, MissingLibraryIsAClearError) {
  LocalRunOptions o;
  o.library_path = "/nonexistent/libword_count.so";
  std::ostringstream out;
  auto status = run_local(o, out);
  EXPECT_EQ(status.message(), "topology library '/nonexistent/libword_count.so' does not exist");
}

TEST(LocalRunner, RunsWordCountUntilTheDurationAndSummarizes) {
  LocalRunOptions o;
  o.library_path = RSTORM_WORD_COUNT_LIB;
  o.config.set("wordcount.sentences.limit", 200);
  o.config.set("wordcount.report.print", false);
  o.duration = std::chrono::milliseconds(1500);
  o.report_interval = std::chrono::milliseconds(500);
  o.kill_wait = std::chrono::seconds(30);
  std::ostringstream out;
  TopologyStats final;
  auto status = run_local(o, out, &final);
  ASSERT_TRUE(status.is_ok()) << status.message();
  EXPECT_NE(out.str().find("rstorm local: running 'word_count'"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("rstorm local: 'word_count' stopped after"), std::string::npos);
  ASSERT_NE(final.component("sentences"), nullptr);
  EXPECT_EQ(final.component("sentences")->emitted, 200u);
}

TEST(LocalRunner, InterruptStopsTheRunAtOnce) {
  std::atomic<bool> interrupted{true};
  LocalRunOptions o;
  o.library_path = RSTORM_WORD_COUNT_LIB;
  o.config.set("wordcount.report.print", false);
  o.interrupted = &interrupted;  // as if Ctrl-C came right away
  std::ostringstream out;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(run_local(o, out).is_ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_NE(out.str().find("stopped after"), std::string::npos);
}

TEST(LocalRunner, BoundedSpoutEndsTheRunOnceEveryTreeIsCompleteWithExactTotals) {
  LocalRunOptions o;
  o.library_path = RSTORM_WORD_COUNT_LIB;
  o.config.set("wordcount.sentences.limit", 500);  // the spout then calls finish()
  o.config.set("wordcount.report.print", false);
  std::ostringstream out;
  TopologyStats final;
  auto status = run_local(o, out, &final);  // no duration: only the input's end stops it
  ASSERT_TRUE(status.is_ok()) << status.message();
  EXPECT_NE(out.str().find("every spout has finished its input and every tree is complete"),
            std::string::npos)
      << out.str();
  ASSERT_NE(final.component("sentences"), nullptr);
  EXPECT_EQ(final.component("sentences")->emitted, 500u);
  EXPECT_EQ(final.component("sentences")->acked, 500u);  // totals taken after the drain
  EXPECT_EQ(final.component("sentences")->failed, 0u);
}

TEST(LocalRunner, UntilIdleEndsTheRunWhenNothingMoves) {
  LocalRunOptions o;
  o.library_path = RSTORM_FAILING_BOLT_LIB;  // emits 20 numbers, then nothing
  o.until_idle = std::chrono::milliseconds(500);
  std::ostringstream out;
  TopologyStats final;
  auto status = run_local(o, out, &final);
  ASSERT_TRUE(status.is_ok()) << status.message();
  EXPECT_NE(out.str().find("nothing moved for 0.5 s"), std::string::npos) << out.str();
  EXPECT_EQ(final.component("numbers")->emitted, 20u);
}

TEST(LocalRunner, ComponentWhosePrepareThrowsEndsTheRunWithTheReason) {
  LocalRunOptions o;
  o.library_path = RSTORM_FAILING_BOLT_LIB;
  o.config.set("failing_bolt.prepare.throw", true);
  bool failed = false;
  o.component_failed = &failed;
  std::ostringstream out;
  auto status = run_local(o, out);  // no duration: the failure alone ends it
  ASSERT_FALSE(status.is_ok());
  EXPECT_TRUE(failed);
  EXPECT_EQ(status.message(),
            "topology 'failing_bolt' cannot run: component 'picky' task 2: prepare threw: cannot "
            "open the database");
}

}  // namespace
}  // namespace rstorm::worker
