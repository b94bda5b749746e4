#include "common/status.hpp"

namespace rstorm {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "OK";
    case ErrorCode::kInvalidArgument: return "InvalidArgument";
    case ErrorCode::kNotFound: return "NotFound";
    case ErrorCode::kAlreadyExists: return "AlreadyExists";
    case ErrorCode::kVersionConflict: return "VersionConflict";
    case ErrorCode::kNotEmpty: return "NotEmpty";
    case ErrorCode::kCorruption: return "Corruption";
    case ErrorCode::kUnavailable: return "Unavailable";
    case ErrorCode::kSessionExpired: return "SessionExpired";
    case ErrorCode::kTimeout: return "Timeout";
    case ErrorCode::kIoError: return "IoError";
    case ErrorCode::kInternal: return "Internal";
    case ErrorCode::kPermissionDenied:
      return "PermissionDenied";
  }
  return "Unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "OK";
  return std::string(error_code_name(code_)) + ": " + message_;
}

}  // namespace rstorm
