// What semroute does not do: multimodal (image / audio) encoders, DeBERTa-v3,
// Qwen3 generative classifiers and Qwen3Guard. Each returns upstream's
// documented failure value and logs why; nothing here crashes or answers.
#include "support.h"

using namespace candle;

namespace {

constexpr const char* kMultimodal = "multimodal (image / audio) embedding models are not supported by semroute";
constexpr const char* kDeberta = "DeBERTa-v3 models are not supported by semroute";
constexpr const char* kQwen3Generative = "Qwen3 generative classifiers are not supported by semroute";
constexpr const char* kGuard = "Qwen3Guard generation is not supported by semroute";

int multimodal_failure(const char* function, MultiModalEmbeddingResult* result) {
  log_line(function, kMultimodal);
  if (result != nullptr) *result = MultiModalEmbeddingResult{nullptr, 0, true, -1, 0.0f};
  return -1;
}

template <class Result>
int failure_with_message(const char* function, const char* why, Result* result) {
  log_line(function, why);
  if (result != nullptr) {
    *result = Result{};
    result->error = true;
    result->error_message = guarded(function, static_cast<char*>(nullptr), [&] { return copy_string(why); });
  }
  return -1;
}

}  // namespace

extern "C" {

bool init_multimodal_embedding_model(const char*, bool) {
  log_line("init_multimodal_embedding_model", kMultimodal);
  return false;
}
int multimodal_encode_text(const char*, int, MultiModalEmbeddingResult* result) {
  return multimodal_failure("multimodal_encode_text", result);
}
int multimodal_encode_image_from_bytes(const unsigned char*, size_t, int, MultiModalEmbeddingResult* result) {
  return multimodal_failure("multimodal_encode_image_from_bytes", result);
}
int multimodal_encode_image(const float*, int, int, int, MultiModalEmbeddingResult* result) {
  return multimodal_failure("multimodal_encode_image", result);
}
int multimodal_encode_audio(const float*, int, int, int, MultiModalEmbeddingResult* result) {
  return multimodal_failure("multimodal_encode_audio", result);
}
void free_multimodal_embedding(float* data, int) { std::free(data); }

bool init_deberta_jailbreak_classifier(const char*, bool) {
  log_line("init_deberta_jailbreak_classifier", kDeberta);
  return false;
}
ClassificationResult classify_deberta_jailbreak_text(const char*) {
  log_line("classify_deberta_jailbreak_text", kDeberta);
  return ClassificationResult{-1, 0.0f, nullptr};
}

int init_qwen3_multi_lora_classifier(const char*) {
  log_line("init_qwen3_multi_lora_classifier", kQwen3Generative);
  return -1;
}
int load_qwen3_lora_adapter(const char*, const char*) {
  log_line("load_qwen3_lora_adapter", kQwen3Generative);
  return -1;
}
int classify_with_qwen3_adapter(const char*, const char*, GenerativeClassificationResult* result) {
  return failure_with_message("classify_with_qwen3_adapter", kQwen3Generative, result);
}
int get_qwen3_loaded_adapters(char*** adapters_out, int* num_adapters) {
  if (adapters_out != nullptr) *adapters_out = nullptr;
  if (num_adapters != nullptr) *num_adapters = 0;
  log_line("get_qwen3_loaded_adapters", kQwen3Generative);
  return -1;
}
int classify_zero_shot_qwen3(const char*, const char**, int, GenerativeClassificationResult* result) {
  return failure_with_message("classify_zero_shot_qwen3", kQwen3Generative, result);
}
int is_qwen3_multi_lora_initialized(void) { return 0; }
void free_generative_classification_result(GenerativeClassificationResult* result) {
  if (result == nullptr) return;
  std::free(result->category_name);
  std::free(result->probabilities);
  std::free(result->error_message);
  *result = GenerativeClassificationResult{};
}
void free_categories(char** categories, int num_categories) { free_strings(categories, num_categories); }

int init_qwen3_guard(const char*) {
  log_line("init_qwen3_guard", kGuard);
  return -1;
}
int classify_with_qwen3_guard(const char*, const char*, GuardResult* result) {
  return failure_with_message("classify_with_qwen3_guard", kGuard, result);
}
int is_qwen3_guard_initialized(void) { return 0; }
void free_guard_result(GuardResult* result) {
  if (result == nullptr) return;
  std::free(result->raw_output);
  std::free(result->error_message);
  *result = GuardResult{};
}

// ---- plain frees
void free_cstring(char* s) { std::free(s); }
void free_c_string_array(char** array, int length) { free_strings(array, length); }
void free_c_int_array(int* array, int) { std::free(array); }
void free_c_float_array(float* array, int) { std::free(array); }

}  // extern "C"
