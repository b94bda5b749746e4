// User metrics (rstorm/metrics.hpp) as a task registers them through its
// TopologyContext: one metric per (name, task), name rules, kind clashes.
#include <gtest/gtest.h>

#include <stdexcept>

#include "rstorm/rstorm.hpp"

namespace rstorm {
namespace {

std::string thrown(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(UserMetrics, SameNameOnOneTaskIsOneMetricAndEachTaskHasItsOwn) {
  auto store = std::make_shared<UserMetrics>();
  auto layout = std::make_shared<TaskLayout>();
  TopologyContext a("t", "split", TaskId(3), 0, layout, store);
  TopologyContext b("t", "split", TaskId(4), 1, layout, store);
  a.counter("words_total").inc(2);
  a.counter("words_total").inc();
  b.counter("words_total").inc(10);
  a.gauge("backlog").set(5);
  a.gauge("backlog").add(-2);
  auto& h = a.histogram("lengths", {1, 10});
  for (double v : {0.5, 1.0, 5.0, 100.0}) h.observe(v);
  EXPECT_EQ(a.counter("words_total").value(), 3u);
  EXPECT_EQ(b.counter("words_total").value(), 10u);
  EXPECT_EQ(a.gauge("backlog").value(), 3.0);
  EXPECT_EQ(h.counts(), (std::vector<std::uint64_t>{2, 1, 1}));  // <=1, <=10, +Inf
  EXPECT_EQ(h.count(), 4u);
  EXPECT_EQ(h.sum(), 106.5);
  const auto entries = store->entries();
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].name, "words_total");
  EXPECT_EQ(entries[0].task, TaskId(3));
  EXPECT_EQ(entries[1].task, TaskId(4));
  EXPECT_EQ(entries[3].kind, MetricKind::kHistogram);
}

TEST(UserMetrics, BadNamesKindClashesAndBucketsAreRefusedNamingTheMetricAndTask) {
  auto store = std::make_shared<UserMetrics>();
  TopologyContext c("t", "count", TaskId(7), 0, std::make_shared<TaskLayout>(), store);
  EXPECT_EQ(thrown([&] { c.counter("words seen"); }),
            "metric 'words seen' of component 'count' task 7: ' ' cannot be in a name: letters, digits, '_' "
            "and ':' only (Prometheus's rule)");
  EXPECT_NE(thrown([&] { c.counter("9lives"); }).find("starts with a letter"), std::string::npos);
  EXPECT_NE(thrown([&] { c.counter("rstorm_tuples_acked_total"); }).find("rstorm's own"), std::string::npos);
  c.counter("seen_total");
  EXPECT_EQ(thrown([&] { c.gauge("seen_total"); }),
            "metric 'seen_total' of component 'count' task 7 is asked for as a gauge, but component 'count' "
            "task 7 registered it as a counter");
  EXPECT_NE(thrown([&] { c.histogram("h", {}); }).find("at least one bucket bound"), std::string::npos);
  EXPECT_NE(thrown([&] { c.histogram("h", {5, 1}); }).find("must ascend"), std::string::npos);
  c.histogram("h", {1, 5});
  EXPECT_NE(thrown([&] { c.histogram("h", {1, 6}); }).find("other bucket bounds"), std::string::npos);
}

TEST(UserMetrics, AContextMadeWithoutAStoreHasItsOwn) {
  TopologyContext c("t", "split", TaskId(1), 0, std::make_shared<TaskLayout>());
  c.counter("n").inc();
  EXPECT_EQ(c.metrics()->entries().size(), 1u);
}

}  // namespace
}  // namespace rstorm
