#include "core/error_report.h"

#include <c10/util/Exception.h>

#include <cstring>
#include <new>

namespace semroute {
namespace {

bool mentions_out_of_memory(const char* message) {
  return std::strstr(message, "out of memory") != nullptr || std::strstr(message, "Out of memory") != nullptr;
}

}  // namespace

ErrorReport report_current_exception() {
  try {
    throw;
  } catch (const Error& e) {
    return {e.code(), e.what()};
  } catch (const std::bad_alloc&) {
    return {ErrorCode::kOutOfMemory, "out of memory"};
  } catch (const c10::Error& e) {
    const char* message = e.what_without_backtrace();
    return {mentions_out_of_memory(message) ? ErrorCode::kOutOfMemory : ErrorCode::kInternal, message};
  } catch (const std::exception& e) {
    return {ErrorCode::kInternal, e.what()};
  } catch (...) {
    return {ErrorCode::kInternal, "unknown exception"};
  }
}

}  // namespace semroute
