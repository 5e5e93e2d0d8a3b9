#include "core/weight_memory.h"

#include <sys/mman.h>

#include <cstdlib>
#include <string>

#include "semroute/error.h"

namespace semroute {

std::shared_ptr<void> allocate_weight_memory(size_t nbytes) {
  const auto fail = [nbytes] { throw Error(ErrorCode::kOutOfMemory, "cannot allocate " + std::to_string(nbytes) + " bytes"); };
  if (nbytes < kHugePageBytes) {
    void* p = std::aligned_alloc(64, (nbytes + 63) / 64 * 64 + 64 * (nbytes == 0));
    if (p == nullptr) fail();
    return std::shared_ptr<void>(p, std::free);
  }
  // Whole 4 KB pages: huge pages back the 2 MB-aligned part, the tail stays
  // small (rounding up to 2 MB wasted 12 % of a ModernBERT-base model).
  const size_t length = (nbytes + 4095) / 4096 * 4096;
  void* pages = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pages == MAP_FAILED) fail();
  ::madvise(pages, length, MADV_HUGEPAGE);  // advice only: without it the pages are 4 KB
  return std::shared_ptr<void>(pages, [length](void* p) { ::munmap(p, length); });
}

}  // namespace semroute
