#include "semroute/error.h"

namespace semroute {

const char* error_code_name(ErrorCode code) noexcept {
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

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(message), code_(code) {}

}  // namespace semroute
