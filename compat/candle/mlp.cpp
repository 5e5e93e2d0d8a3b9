// candle_mlp_*: the MLP model selector behind opaque handles (CPU only: the
// device argument is accepted and ignored, as upstream does without CUDA).
#include "mlp_selector.h"
#include "support.h"

using namespace candle;

namespace {

MlpPrecision precision_of(int dtype) {
  return dtype == 1 ? MlpPrecision::kFloat16 : dtype == 2 ? MlpPrecision::kBFloat16 : MlpPrecision::kFloat32;
}

void* load(const char* function, const char* json, int dtype) {
  return guarded(function, static_cast<void*>(nullptr), [&] {
    return static_cast<void*>(MlpSelector::from_json(std::string(text_arg(json, "json")), precision_of(dtype)).release());
  });
}

}  // namespace

extern "C" {

void* candle_mlp_new(void) { return candle_mlp_new_with_device_and_dtype(0, 0); }
void* candle_mlp_new_with_device(int device_type) { return candle_mlp_new_with_device_and_dtype(device_type, 0); }
void* candle_mlp_new_with_device_and_dtype(int, int dtype) {
  return guarded("candle_mlp_new", static_cast<void*>(nullptr),
                 [&] { return static_cast<void*>(new MlpSelector(precision_of(dtype))); });
}

void candle_mlp_free(void* handle) { delete static_cast<MlpSelector*>(handle); }

char* candle_mlp_select(void* handle, double* query, size_t query_len) {
  return guarded("candle_mlp_select", static_cast<char*>(nullptr), [&] {
    if (handle == nullptr) throw Failure("handle is NULL");
    return copy_string(static_cast<const MlpSelector*>(handle)->select(query, query_len));
  });
}

int candle_mlp_is_trained(void* handle) {
  return handle != nullptr && static_cast<const MlpSelector*>(handle)->trained() ? 1 : 0;
}

char* candle_mlp_to_json(void* handle) {
  return guarded("candle_mlp_to_json", static_cast<char*>(nullptr), [&] {
    if (handle == nullptr) throw Failure("handle is NULL");
    return copy_string(static_cast<const MlpSelector*>(handle)->to_json());
  });
}

void* candle_mlp_from_json(char* json) { return load("candle_mlp_from_json", json, 0); }
void* candle_mlp_from_json_with_device(char* json, int) { return load("candle_mlp_from_json_with_device", json, 0); }
void* candle_mlp_from_json_with_device_and_dtype(char* json, int, int dtype) {
  return load("candle_mlp_from_json_with_device_and_dtype", json, dtype);
}

void candle_mlp_free_string(char* ptr) { std::free(ptr); }

}  // extern "C"
