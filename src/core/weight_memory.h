// Memory for weights: large, long-lived, written once at load. From 2 MB on
// it is backed by transparent huge pages where the kernel allows them
// ("madvise" mode, Debian's default): filling 4 KB pages one fault at a time
// was a third of a model load on virtual machines.
#pragma once

#include <cstddef>
#include <memory>

namespace semroute {

// Buffers from this size on get huge pages.
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// Uninitialized memory for `nbytes`, 64-byte aligned (what oneDNN asks for),
// released when the last owner goes. Throws Error (kOutOfMemory).
std::shared_ptr<void> allocate_weight_memory(size_t nbytes);

}  // namespace semroute
