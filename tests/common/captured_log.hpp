// CapturedLog: a logger whose lines a test can read back, for asserting on
// what the code under test said. Keeps the last 1000 lines, each formatted as
// "<level> <message>". Thread-safe.
#pragma once

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <vector>

namespace rstorm::testing {

class CapturedLog {
 public:
  explicit CapturedLog(const std::string& name = "test")
      : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000)),
        logger(std::make_shared<spdlog::logger>(name, sink_)) {
    logger->set_level(spdlog::level::info);
    sink_->set_pattern("%l %v");
  }

  // Lines containing `needle`.
  std::vector<std::string> lines_with(const std::string& needle) const {
    std::vector<std::string> out;
    for (auto& l : sink_->last_formatted()) {
      if (l.find(needle) != std::string::npos) out.push_back(l);
    }
    return out;
  }
  // Every line kept, in order.
  std::string all() const {
    std::string s;
    for (auto& l : sink_->last_formatted()) s += l;
    return s;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;

 public:
  // Hand this to the code under test.
  std::shared_ptr<spdlog::logger> logger;
};

}  // namespace rstorm::testing
