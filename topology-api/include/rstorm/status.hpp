// api::Status and api::Result<T>: expected failures as values of the public API
// (in their own namespace so that they never clash with the daemons' own). A Status is either ok or
// carries one or more messages (TopologyBuilder::build reports every problem at
// once). Both are plain values: thread-compatible.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rstorm::api {

class Status;

// What Status::ok() returns: an ok Status wherever one is expected (returned,
// stored, passed, in `c ? Status::ok() : e`), and a compile error where it
// would be tested. C++ lets an instance call a static member, so on a
// Status s, `if (!s.ok())` would test a new ok Status, never s, and let every
// error through; s.is_ok() (or `if (!s)`) tests s. (Result<T>::ok() is a test.)
class [[nodiscard]] OkStatus {
 public:
  operator Status() const;  // NOLINT: implicit, an ok Status
  // Status::ok() is not a test: use is_ok() or `if (!status)`.
  explicit operator bool() const = delete;
  bool operator!() const = delete;
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  static OkStatus ok() { return {}; }
  static Status error(std::string message) {
    Status s;
    s.messages_.push_back(std::move(message));
    return s;
  }
  // REQUIRES: !messages.empty().
  static Status errors(std::vector<std::string> messages) {
    assert(!messages.empty());
    Status s;
    s.messages_ = std::move(messages);
    return s;
  }

  bool is_ok() const { return messages_.empty(); }
  explicit operator bool() const { return is_ok(); }
  // Every problem, one per entry; empty when ok.
  const std::vector<std::string>& messages() const { return messages_; }
  // The messages joined by "; " ("ok" when ok).
  std::string message() const {
    if (messages_.empty()) return "ok";
    std::string out = messages_.front();
    for (std::size_t i = 1; i < messages_.size(); ++i) out += "; " + messages_[i];
    return out;
  }

 private:
  std::vector<std::string> messages_;
};

inline OkStatus::operator Status() const { return Status(); }

// A T or the Status that says why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}
  // REQUIRES: !status.is_ok().
  Result(Status status) : status_(std::move(status)) { assert(!status_.is_ok()); }

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace rstorm::api
