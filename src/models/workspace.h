// Temporaries kept per thread between calls: a product's (oneDNN's
// scratchpad; int8's quantized rows, their scales and the int32 sums) and an
// attention task's (scores, rotated rows, bf16 rows). Allocated per call,
// glibc gave blocks of a few MB back to the kernel and faulted them in again
// (an int8 product of 2048 rows took 68 ms instead of 5.6), and vectors
// zeroed them (a 512-token attention task's 128 KB of scores) or cost six
// allocations a call (a 16-token layer's attention is 12 calls of ~4 µs).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "semroute/error.h"

namespace semroute {

class Workspace {
 public:
  enum Slot {
    kScratchpad, kQuantized, kScales, kZeroPoints, kSums,                         // a product's
    kScores, kInverseSums, kRotatedQueries, kRotatedKeys, kTransposedKeys, kBf16Rows,  // an attention task's
    kSlots
  };
  // `count` elements of slot `slot`, 64-byte aligned, not initialized, valid
  // until the next call for it on this thread.
  template <typename T>
  T* get(Slot slot, size_t count) {
    Buffer& b = buffers_[slot];
    const size_t bytes = std::max<size_t>(count * sizeof(T), 1);
    if (b.capacity < bytes) {
      b.capacity = std::max(bytes, b.capacity * 2);
      b.data.reset(static_cast<uint8_t*>(std::aligned_alloc(64, (b.capacity + 63) / 64 * 64)));
      if (!b.data) throw Error(ErrorCode::kOutOfMemory, "cannot allocate " + std::to_string(b.capacity) + " bytes");
    }
    return reinterpret_cast<T*>(b.data.get());
  }
  static Workspace& of_this_thread() {
    thread_local Workspace workspace;
    return workspace;
  }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  struct Buffer {
    std::unique_ptr<uint8_t, Free> data;
    size_t capacity = 0;
  };
  Buffer buffers_[kSlots];
};

}  // namespace semroute
