// semroute: the error hierarchy of the C++ API.
//
// Every failure inside the library is thrown as a semroute::Error (or a
// subclass) carrying a stable ErrorCode; the C API turns it into a status
// object with the same code, so a C or Go caller sees the same classification,
// and the C++ client API (semroute.hpp) turns statuses back into Errors.
// Header-only, so a consumer needs nothing but this file.
#pragma once

#include <stdexcept>
#include <string>

namespace semroute {

// Stable numeric codes: never renumber, only append.
enum class ErrorCode : int {
  kInvalidArgument = 1,  // a caller passed something that cannot be used
  kNotFound = 2,         // a file, directory, tensor or label does not exist
  kInvalidModel = 3,     // a model file exists but is malformed or inconsistent
  kUnsupported = 4,      // valid, but not something this build can do
  kInvalidUtf8 = 5,      // input text is not valid UTF-8
  kTooLong = 6,          // input exceeds a configured or hard limit
  kOutOfMemory = 7,
  kInternal = 8,         // a bug: please report it
  kLast = kInternal,     // the highest code (codes are only ever appended)
};

// Short stable name of a code, e.g. "invalid_model".
inline const char* error_code_name(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kNotFound: return "not_found";
    case ErrorCode::kInvalidModel: return "invalid_model";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kInvalidUtf8: return "invalid_utf8";
    case ErrorCode::kTooLong: return "too_long";
    case ErrorCode::kOutOfMemory: return "out_of_memory";
    case ErrorCode::kInternal: return "internal";
  }
  return "unknown";
}

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

// A model directory or file could not be loaded (missing or malformed).
class LoadError : public Error {
 public:
  explicit LoadError(const std::string& message, ErrorCode code = ErrorCode::kInvalidModel)
      : Error(code, message) {}
};

// A caller-supplied argument or input is not acceptable.
class InvalidInput : public Error {
 public:
  explicit InvalidInput(const std::string& message, ErrorCode code = ErrorCode::kInvalidArgument)
      : Error(code, message) {}
};

// The request is well-formed but this build or model cannot serve it.
class Unsupported : public Error {
 public:
  explicit Unsupported(const std::string& message) : Error(ErrorCode::kUnsupported, message) {}
};

// An invariant of the library itself was violated.
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& message) : Error(ErrorCode::kInternal, message) {}
};

}  // namespace semroute
