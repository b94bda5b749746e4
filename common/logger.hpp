// Logger: a named spdlog logger plus a context prefix such as
// "[topology=wc component=split task=7] ". Libraries take a Logger in their
// constructor (never a global); with_context() derives a narrower one.
// Copyable and cheap (a shared sink pointer and a string). Thread-safe: the
// underlying spdlog loggers are the thread-safe (_mt) kind.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace rstorm {

class Logger {
 public:
  // REQUIRES: logger != nullptr.
  explicit Logger(std::shared_ptr<spdlog::logger> logger, std::string context = "");

  // A logger that writes to stderr, named `name` (e.g. "nimbus"), not registered
  // in spdlog's global registry.
  static Logger to_stderr(std::string name, spdlog::level::level_enum level = spdlog::level::info);
  // A logger that drops everything (for tests that do not look at logs).
  static Logger null();

  // A copy whose prefix has `key=value` appended: "[topology=wc task=7] ".
  Logger with_context(std::string_view key, std::string_view value) const;

  const std::string& prefix() const { return prefix_; }
  const std::string& name() const { return logger_->name(); }
  spdlog::logger& spdlog_logger() const { return *logger_; }
  bool should_log(spdlog::level::level_enum level) const { return logger_->should_log(level); }

  template <typename... Args>
  void log(spdlog::level::level_enum level, spdlog::format_string_t<Args...> format,
           Args&&... args) const {
    if (!logger_->should_log(level)) return;
    logger_->log(level, "{}{}", prefix_, fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  void debug(spdlog::format_string_t<Args...> format, Args&&... args) const {
    log(spdlog::level::debug, format, std::forward<Args>(args)...);
  }
  template <typename... Args>
  void info(spdlog::format_string_t<Args...> format, Args&&... args) const {
    log(spdlog::level::info, format, std::forward<Args>(args)...);
  }
  template <typename... Args>
  void warn(spdlog::format_string_t<Args...> format, Args&&... args) const {
    log(spdlog::level::warn, format, std::forward<Args>(args)...);
  }
  template <typename... Args>
  void error(spdlog::format_string_t<Args...> format, Args&&... args) const {
    log(spdlog::level::err, format, std::forward<Args>(args)...);
  }

 private:
  std::shared_ptr<spdlog::logger> logger_;
  std::string context_;  // "topology=wc task=7", without brackets
  std::string prefix_;   // "[topology=wc task=7] " or ""
};

}  // namespace rstorm
