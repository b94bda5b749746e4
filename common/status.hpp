// Status and Result<T>: expected failures as values, shared by every piece
// built on common/. A Status is an error code plus a message that names the
// thing at fault. Both are thread-compatible.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace rstorm {

enum class ErrorCode {
  kOk,
  kInvalidArgument,  // bad input: a config value, a corrupt encoding
  kNotFound,         // a node, key or blob that does not exist
  kAlreadyExists,    // create of a node or blob that exists
  kVersionConflict,  // compare-and-set lost against a newer version
  kNotEmpty,         // delete of a node that has children
  kCorruption,       // stored or uploaded data fails its checksum
  kUnavailable,      // a service (ZooKeeper, RocksDB) cannot be reached right now
  kSessionExpired,   // the coordination session ended; ephemeral nodes are gone
  kTimeout,
  kIoError,
  kInternal,
  kPermissionDenied,  // the caller may not do this (secure mode's authorizer)
};

std::string_view error_code_name(ErrorCode code);

class Status;

// What Status::ok() returns: an OK Status wherever one is expected, and a
// compile error where it would be tested: on a Status s, `if (!s.ok())` would
// call the static member and test a new OK Status, never s (as
// rstorm::api::OkStatus).
class [[nodiscard]] OkStatus {
 public:
  operator Status() const;  // NOLINT: implicit, an OK Status
  // Status::ok() is not a test: use is_ok() or `if (!status)`.
  explicit operator bool() const = delete;
  bool operator!() const = delete;
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static OkStatus ok() { return {}; }

  bool is_ok() const { return code_ == ErrorCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "NotFound: znode /rstorm/x does not exist", or "OK".
  std::string to_string() const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline OkStatus::operator Status() const { return {}; }

// A value or the Status saying why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  // REQUIRES: !status.is_ok().
  Result(Status status) : v_(std::move(status)) { assert(!std::get<Status>(v_).is_ok()); }
  Result(ErrorCode code, std::string message) : Result(Status(code, std::move(message))) {}

  bool is_ok() const { return v_.index() == 0; }
  explicit operator bool() const { return is_ok(); }

  // REQUIRES: is_ok().
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // The error, or OK when there is a value.
  Status status() const { return is_ok() ? Status() : std::get<1>(v_); }
  ErrorCode code() const { return is_ok() ? ErrorCode::kOk : std::get<1>(v_).code(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace rstorm
