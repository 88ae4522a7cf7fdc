// PJRT errors as C++ exceptions. Every PJRT call that can fail goes through
// Api::check(), so no PJRT failure is ever silently dropped or turned into an
// abort.
#pragma once

#include <stdexcept>
#include <string>

namespace torch_tpu::pjrt {

// Mirrors the PJRT_Error_Code values that callers care about; the numeric
// value of any other code is kept in code().
enum class ErrorCode : int {
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

class Error : public std::runtime_error {
 public:
  Error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }
  bool is_resource_exhausted() const {
    return code_ == static_cast<int>(ErrorCode::kResourceExhausted);
  }

 private:
  int code_;
};

}  // namespace torch_tpu::pjrt
