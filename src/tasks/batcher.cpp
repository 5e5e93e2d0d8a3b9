#include "tasks/batcher.h"

#include <string>

#include "core/runtime.h"
#include "semroute/error.h"

namespace semroute {

void check_batching(const BatchingOptions& options) {
  if (options.max_batch < 0 || options.max_batch > 4096)
    throw InvalidInput("max_batch must be in [0, 4096], not " + std::to_string(options.max_batch));
  if (options.max_wait_us < 0 || options.max_wait_us > 1000000)
    throw InvalidInput("max_wait_us must be in [0, 1000000], not " + std::to_string(options.max_wait_us));
}

std::mutex& compute_lane() {
  static std::mutex lane;
  return lane;
}

void prepare_dispatcher_thread() {
  ensure_runtime_initialized();
  prepare_calling_thread();
}

}  // namespace semroute
