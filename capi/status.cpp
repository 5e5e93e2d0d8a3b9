// Status objects, version queries, and the mapping of every exception the
// library can throw to a stable code.

#include <cstring>
#include <new>

#include "core/error_report.h"
#include "handles.h"
#include "semroute/error.h"
#include "semroute/version.h"

// One error-code table: the C header's codes are the C++ ErrorCode values,
// one for one (the Go package checks its copy against semroute_code_name).
#define SEMROUTE_SAME_CODE(c_code, cpp_code) \
  static_assert(static_cast<int>(c_code) == static_cast<int>(semroute::ErrorCode::cpp_code), #c_code)
SEMROUTE_SAME_CODE(SEMROUTE_ERR_INVALID_ARGUMENT, kInvalidArgument);
SEMROUTE_SAME_CODE(SEMROUTE_ERR_NOT_FOUND, kNotFound);
SEMROUTE_SAME_CODE(SEMROUTE_ERR_INVALID_MODEL, kInvalidModel);
SEMROUTE_SAME_CODE(SEMROUTE_ERR_UNSUPPORTED, kUnsupported);
SEMROUTE_SAME_CODE(SEMROUTE_ERR_INVALID_UTF8, kInvalidUtf8);
SEMROUTE_SAME_CODE(SEMROUTE_ERR_TOO_LONG, kTooLong);
SEMROUTE_SAME_CODE(SEMROUTE_ERR_OUT_OF_MEMORY, kOutOfMemory);
SEMROUTE_SAME_CODE(SEMROUTE_ERR_INTERNAL, kInternal);
static_assert(static_cast<int>(semroute::ErrorCode::kLast) == SEMROUTE_ERR_INTERNAL,
              "a new ErrorCode needs its SEMROUTE_ERR_ code (and a line above)");
#undef SEMROUTE_SAME_CODE

namespace semroute::capi {
namespace {

// Returned when a status cannot be allocated; semroute_status_free ignores it.
semroute_status out_of_memory_status{SEMROUTE_ERR_OUT_OF_MEMORY, "out of memory"};

}  // namespace

semroute_status* make_status(semroute_code code, std::string_view message) noexcept {
  try {
    return new semroute_status{code, std::string(message)};
  } catch (...) {
    return &out_of_memory_status;
  }
}

semroute_status* status_of_current_exception() noexcept {
  try {
    const ErrorReport report = report_current_exception();
    return make_status(static_cast<semroute_code>(report.code), report.message);
  } catch (...) {
    return &out_of_memory_status;  // the report itself could not be allocated
  }
}

void require(const void* p, const char* what) {
  if (p == nullptr) throw InvalidInput(std::string(what) + " is NULL");
}

}  // namespace semroute::capi

extern "C" {

const char* semroute_version(void) { return SEMROUTE_VERSION_STRING; }

int semroute_abi_version(void) { return SEMROUTE_ABI_VERSION; }

semroute_code semroute_status_code(const semroute_status* status) {
  return status != nullptr ? status->code : SEMROUTE_OK;
}

const char* semroute_status_message(const semroute_status* status) {
  return status != nullptr ? status->message.c_str() : "";
}

const char* semroute_code_name(semroute_code code) {
  if (code == SEMROUTE_OK) return "ok";
  return semroute::error_code_name(static_cast<semroute::ErrorCode>(code));
}

void semroute_status_free(semroute_status* status) {
  if (status != &semroute::capi::out_of_memory_status) delete status;
}

}  // extern "C"
