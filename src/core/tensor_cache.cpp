#include "core/tensor_cache.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <torch/csrc/api/include/torch/version.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "semroute/error.h"

namespace semroute {
namespace {

constexpr size_t kSmallest = size_t{64} << 10;  // below this, malloc is cheap and fault-free
constexpr size_t kAlignment = 64;                // what libtorch's own allocator gives
constexpr size_t kHeader = kAlignment;           // the block's size class, in front of its data

// Classes: 4 per power of two (1, 1.25, 1.5, 1.75 x 2^n): at most 25 % slack.
int size_class(size_t bytes) {
  int power = 0;
  while ((size_t{1} << (power + 1)) <= bytes) ++power;
  const size_t base = size_t{1} << power, quarter = base / 4;
  const int step = static_cast<int>((bytes - base + quarter - 1) / quarter);  // 0..4
  return power * 4 + step;
}

size_t class_bytes(int size_class) {
  const size_t base = size_t{1} << (size_class / 4);
  return base + base / 4 * static_cast<size_t>(size_class % 4);
}

class TensorCache final : public c10::Allocator {
 public:
  explicit TensorCache(size_t cap) : cap_(cap), idle_(64 * 4) {}

#if TORCH_VERSION_MAJOR >= 2  // allocate() lost its const; copy_data() is new
  c10::DataPtr allocate(size_t bytes) override { return allocate_block(bytes); }
  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }
#else
  c10::DataPtr allocate(size_t bytes) const override { return allocate_block(bytes); }
#endif

  c10::DeleterFnPtr raw_deleter() const override { return &give_back; }

  TensorCacheStats stats() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return {idle_bytes_, reused_, fresh_, cap_, true};
  }

 private:
  // Every block carries its size class in a header in front of the data
  // (-1: a small block, freed at once), so that one deleter serves all and
  // data and context are the same pointer, as libtorch's raw_allocate needs.
  c10::DataPtr allocate_block(size_t bytes) const {
    const int cls = bytes < kSmallest ? -1 : size_class(bytes);
    void* block = cls < 0 ? nullptr : take(cls);
    if (block == nullptr) {
      const size_t data_bytes = cls < 0 ? (bytes + kAlignment - 1) / kAlignment * kAlignment : class_bytes(cls);
      block = std::aligned_alloc(kAlignment, kHeader + data_bytes);
      if (block == nullptr) throw Error(ErrorCode::kOutOfMemory, "cannot allocate " + std::to_string(bytes) + " bytes");
    }
    *static_cast<int*>(block) = cls;
    void* data = static_cast<char*>(block) + kHeader;
    return {data, data, &give_back, c10::Device(c10::DeviceType::CPU)};
  }

  void* take(int cls) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto& list = idle_[static_cast<size_t>(cls)];
    if (list.empty()) {
      ++fresh_;
      return nullptr;
    }
    void* block = list.back();
    list.pop_back();
    idle_bytes_ -= class_bytes(cls);
    ++reused_;
    return block;
  }

  // Keeps a freed block for reuse while the idle blocks stay within the cap.
  void keep_or_free(void* block) const {
    const int cls = *static_cast<int*>(block);
    if (cls >= 0) {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (idle_bytes_ + class_bytes(cls) <= cap_) {
        idle_[static_cast<size_t>(cls)].push_back(block);
        idle_bytes_ += class_bytes(cls);
        return;
      }
    }
    std::free(block);
  }

  static void give_back(void* data);

  const size_t cap_;
  mutable std::mutex mutex_;
  mutable std::vector<std::vector<void*>> idle_;  // per size class
  mutable size_t idle_bytes_ = 0, reused_ = 0, fresh_ = 0;
};

TensorCache* installed = nullptr;  // set once, never destroyed: tensors may outlive any static

void TensorCache::give_back(void* data) { installed->keep_or_free(static_cast<char*>(data) - kHeader); }

[[maybe_unused]] size_t cap_from_environment(size_t default_cap) {  // unused under ASan (no cache there)
  const char* value = std::getenv("SEMROUTE_TENSOR_CACHE_MB");
  if (value == nullptr) return default_cap;
  const long long mb = std::atoll(value);
  return mb > 0 ? static_cast<size_t>(mb) << 20 : 0;
}

}  // namespace

// GCC says __SANITIZE_ADDRESS__, clang __has_feature(address_sanitizer).
#if defined(__SANITIZE_ADDRESS__)
#define SEMROUTE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SEMROUTE_ASAN 1
#endif
#endif

void install_tensor_cache([[maybe_unused]] size_t default_cap) {
#if defined(SEMROUTE_ASAN)
  return;
#else
  static std::once_flag once;
  std::call_once(once, [default_cap] {
    const size_t cap = cap_from_environment(default_cap);
    if (cap == 0) return;
    installed = new TensorCache(cap);
    // Priority above libtorch's default CPU allocator (0).
    c10::SetCPUAllocator(installed, 10);
  });
#endif
}

TensorCacheStats tensor_cache_stats() { return installed != nullptr ? installed->stats() : TensorCacheStats{}; }

}  // namespace semroute
