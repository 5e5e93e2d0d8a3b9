// The stable code and message of whatever exception is being handled, for
// the places that turn exceptions into data (C API status objects, a failed
// path's answer in the unified classifier): semroute's errors keep their
// code; allocation failures (std::bad_alloc, libtorch's "out of memory"
// errors, CPU and CUDA) are out_of_memory; anything else is internal.
#pragma once

#include <string>

#include "semroute/error.h"

namespace semroute {

struct ErrorReport {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

// Call from inside a catch handler only.
ErrorReport report_current_exception();

}  // namespace semroute
