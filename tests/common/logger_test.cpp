// Logger: named spdlog loggers with a context prefix, no global registry.
#include "common/logger.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <sstream>

namespace rstorm {
namespace {

struct Captured {
  std::ostringstream out;
  Logger logger;
  Captured() : logger(make()) {}
  Logger make() {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
    sink->set_pattern("%n %l %v");
    auto l = std::make_shared<spdlog::logger>("worker", sink);
    l->set_level(spdlog::level::info);
    return Logger(l);
  }
};

TEST(Logger, ContextPrefixIsPrependedInOrder) {
  Captured c;
  Logger task = c.logger.with_context("topology", "wc").with_context("component", "split")
                    .with_context("task", "7");
  task.info("emitted {} tuples", 42);
  EXPECT_EQ(c.out.str(), "worker info [topology=wc component=split task=7] emitted 42 tuples\n");
  EXPECT_EQ(task.prefix(), "[topology=wc component=split task=7] ");
}

TEST(Logger, ParentLoggerIsUnchangedByDerivedContext) {
  Captured c;
  Logger derived = c.logger.with_context("task", "1");
  c.logger.warn("plain");
  EXPECT_EQ(c.out.str(), "worker warning plain\n");
  EXPECT_EQ(derived.name(), "worker");
}

TEST(Logger, LevelBelowThresholdIsDropped) {
  Captured c;
  c.logger.debug("hidden {}", 1);
  c.logger.error("shown {}", 2);
  EXPECT_EQ(c.out.str(), "worker error shown 2\n");
  EXPECT_FALSE(c.logger.should_log(spdlog::level::debug));
}

TEST(Logger, NullLoggerDropsEverythingAndIsNotRegistered) {
  Logger null = Logger::null();
  EXPECT_FALSE(null.should_log(spdlog::level::critical));
  null.error("nothing {}", 1);
  Logger err = Logger::to_stderr("nimbus");
  EXPECT_EQ(err.name(), "nimbus");
  EXPECT_EQ(spdlog::get("nimbus"), nullptr);  // no global registry entry
}

}  // namespace
}  // namespace rstorm
