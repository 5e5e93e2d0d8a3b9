// Upstream's input validation helpers and allocation bookkeeping (exported,
// not called by the router): implemented, since they are cheap and exact.
#include <unordered_map>

#include "support.h"

using namespace candle;

namespace {

enum Code { kOk = 0, kNull = 1, kTooLong = 3, kTooShort = 4, kBatchSize = 5, kConfidence = 6, kModelPath = 7,
            kEncoding = 8, kAllocation = 9 };
constexpr size_t kMaxTextBytes = 1 << 20;
constexpr int kMaxBatch = 1000;

ValidationResult verdict(Code code, const char* message = nullptr, const char* suggestion = nullptr) {
  return guarded("validate", ValidationResult{false, kAllocation, nullptr, nullptr}, [&] {
    return ValidationResult{code == kOk, code, message ? copy_string(message) : nullptr,
                            suggestion ? copy_string(suggestion) : nullptr};
  });
}

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n;
  }
  return true;
}

ValidationResult check_text(const char* text) {
  if (text == nullptr) return verdict(kNull, "text is NULL", "pass a NUL-terminated UTF-8 string");
  const std::string_view t(text);
  if (t.empty()) return verdict(kTooShort, "text is empty", "pass a non-empty text");
  if (t.size() > kMaxTextBytes) return verdict(kTooLong, "text is longer than 1 MiB", "shorten the text");
  if (!valid_utf8(t)) return verdict(kEncoding, "text is not valid UTF-8", "encode the text as UTF-8");
  return verdict(kOk);
}

// Sizes of live allocations made through safe_alloc_*; LoRA ones counted.
struct Allocations {
  std::mutex mutex;
  std::unordered_map<uint8_t*, std::pair<size_t, bool>> live;
  size_t lora_bytes = 0;
};
Allocations& allocations() {
  static Allocations* a = new Allocations;  // outlives every caller
  return *a;
}

uint8_t* tracked_alloc(size_t size, bool lora) {
  if (size == 0) return nullptr;
  auto* p = static_cast<uint8_t*>(std::calloc(size, 1));
  if (p == nullptr) return nullptr;
  Allocations& a = allocations();
  std::lock_guard<std::mutex> lock(a.mutex);
  a.live[p] = {size, lora};
  if (lora) a.lora_bytes += size;
  return p;
}

}  // namespace

extern "C" {

ValidationResult validate_text_input(const char* text, int) { return check_text(text); }

ValidationResult validate_batch_input(const char** texts, int texts_count, int) {
  if (texts == nullptr) return verdict(kNull, "texts is NULL", "pass an array of strings");
  if (texts_count <= 0 || texts_count > kMaxBatch)
    return verdict(kBatchSize, "batch size must be between 1 and 1000", "split the batch");
  for (int i = 0; i < texts_count; ++i) {
    ValidationResult r = check_text(texts[i]);
    if (!r.is_valid) return r;
    free_validation_result(r);
  }
  return verdict(kOk);
}

ValidationResult validate_model_path(const char* model_path, int) {
  if (model_path == nullptr) return verdict(kNull, "model path is NULL", "pass a model directory");
  try {
    directory_arg(model_path, "model path");
  } catch (const std::exception& e) {
    return verdict(kModelPath, e.what(), "pass a local model directory");
  }
  return verdict(kOk);
}

ValidationResult validate_confidence_threshold(float confidence, int) {
  if (!(confidence >= 0.0f && confidence <= 1.0f))
    return verdict(kConfidence, "confidence threshold must be within [0, 1]", "use a value such as 0.5");
  return verdict(kOk);
}

ValidationResult validate_memory_parameters(size_t size, size_t alignment) {
  if (size == 0 || alignment == 0 || (alignment & (alignment - 1)) != 0)
    return verdict(kAllocation, "size must be > 0 and alignment a power of two", nullptr);
  return verdict(kOk);
}

void free_validation_result(ValidationResult result) {
  std::free(result.error_message);
  std::free(result.suggestions);
}

uint8_t* safe_alloc_traditional(size_t size) { return tracked_alloc(size, false); }
uint8_t* safe_alloc_lora(size_t size) { return tracked_alloc(size, true); }

bool safe_free(uint8_t* ptr) {
  if (ptr == nullptr) return false;
  Allocations& a = allocations();
  std::lock_guard<std::mutex> lock(a.mutex);
  const auto it = a.live.find(ptr);
  if (it == a.live.end()) return false;  // not ours, or freed already
  if (it->second.second) a.lora_bytes -= it->second.first;
  a.live.erase(it);
  std::free(ptr);
  return true;
}

bool get_memory_safety_status(void) { return true; }

size_t get_lora_memory_usage(void) {
  Allocations& a = allocations();
  std::lock_guard<std::mutex> lock(a.mutex);
  return a.lora_bytes;
}

// Bookkeeping only: live blocks stay valid until safe_free.
void cleanup_dual_path_memory(void) {}

}  // extern "C"
