// Data parallelism over independent items with TBB, except under
// ThreadSanitizer: Debian's libtbb is not instrumented, so TSan cannot see
// its synchronization and reports races inside it. There the loop runs
// serially, and every report that remains is about our own code.
#pragma once

#include <tbb/parallel_for.h>

#include <cstddef>

namespace semroute {

template <class Fn>
void parallel_for_each(size_t count, const Fn& fn) {
#if defined(__SANITIZE_THREAD__)
  for (size_t i = 0; i < count; ++i) fn(i);
#else
  tbb::parallel_for(size_t{0}, count, fn);
#endif
}

}  // namespace semroute
