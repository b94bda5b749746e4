// What the data plane tests' topology libraries share (dataplane_topology.cpp,
// shapes_topology.cpp): config lookups with fallbacks, and an append-only
// record file written with one write(2) per line, so that a kill -9 loses
// nothing a spout acknowledged.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include <rstorm/config.hpp>

namespace rstorm::testing {

inline std::int64_t int_of(const Config& c, const char* key, std::int64_t fallback) {
  const auto* e = c.find(key);
  if (e == nullptr || e->value.is_null()) return fallback;
  return c.get_int(key);
}

inline std::string string_of(const Config& c, const char* key) {
  const auto* e = c.find(key);
  if (e == nullptr || e->value.is_null()) return "";
  return c.get_string(key);
}

// Not thread-safe: one per task.
class RecordFile {
 public:
  RecordFile() = default;
  RecordFile(const RecordFile&) = delete;
  RecordFile& operator=(const RecordFile&) = delete;
  ~RecordFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  // Throws naming the path when it cannot be opened.
  void open(const std::string& path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  }
  bool is_open() const { return fd_ >= 0; }
  void write_line(const std::string& line) {
    const std::string text = line + "\n";
    if (::write(fd_, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
      throw std::runtime_error("short write");
    }
  }

 private:
  int fd_ = -1;
};

}  // namespace rstorm::testing
