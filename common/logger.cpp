#include "common/logger.hpp"

#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

namespace rstorm {

Logger::Logger(std::shared_ptr<spdlog::logger> logger, std::string context)
    : logger_(std::move(logger)),
      context_(std::move(context)),
      prefix_(context_.empty() ? "" : "[" + context_ + "] ") {}

Logger Logger::to_stderr(std::string name, spdlog::level::level_enum level) {
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>(std::move(name), std::move(sink));
  logger->set_level(level);
  return Logger(std::move(logger));
}

Logger Logger::null() {
  auto logger = std::make_shared<spdlog::logger>("null",
                                                 std::make_shared<spdlog::sinks::null_sink_mt>());
  logger->set_level(spdlog::level::off);
  return Logger(std::move(logger));
}

Logger Logger::with_context(std::string_view key, std::string_view value) const {
  std::string context = context_;
  if (!context.empty()) context += ' ';
  context.append(key).append("=").append(value);
  return Logger(logger_, std::move(context));
}

}  // namespace rstorm
