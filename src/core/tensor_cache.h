// Tensor memory that stays with the process between calls. libtorch takes
// every temporary from malloc; a forward over 512 tokens frees and asks again
// for blocks of several MB per layer, which glibc hands back to the kernel
// and faults in again page by page (a tenth of an fp32 forward went to page
// faults). The cache keeps freed blocks of 64 KB and more by size class
// (steps of 1/4 of a power of two, so lengths that differ a little share
// blocks) and gives them out again, up to a cap on what it holds idle.
//
// It is libtorch's CPU allocator for the whole process once installed (the
// process's own malloc is untouched). SEMROUTE_TENSOR_CACHE_MB sets the cap
// (default 512, `semroute train` more; 0 leaves libtorch's allocator alone). Not installed under
// AddressSanitizer, whose use-after-free checks a cache would hide.
#pragma once

#include <cstddef>

namespace semroute {

constexpr size_t kDefaultTensorCacheBytes = size_t{512} << 20;

// Installs the cache as libtorch's CPU allocator (once; thread-safe: the
// first call decides), holding at most SEMROUTE_TENSOR_CACHE_MB idle, or
// else `default_cap` bytes (training asks for more: its steps free and ask
// again for gigabytes).
void install_tensor_cache(size_t default_cap = kDefaultTensorCacheBytes);

struct TensorCacheStats {
  size_t idle_bytes = 0;   // freed blocks held for reuse
  size_t reused = 0;       // allocations served from held blocks
  size_t fresh = 0;        // allocations that went to the system
  size_t cap_bytes = 0;    // the most it holds idle
  bool installed = false;
};
TensorCacheStats tensor_cache_stats();

}  // namespace semroute
