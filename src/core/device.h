// Device and dtype selection from user-facing names.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <string>

namespace semroute {

// "cpu", "cuda", "cuda:N", or "auto" (CUDA when available, else CPU).
// Throws Unsupported when CUDA is asked for but this libtorch has none.
c10::Device parse_device(const std::string& name);

// What a dtype name asks for: the dtype of activations and float weights, and
// whether linear weights are quantized to int8 (activations stay float32).
struct Precision {
  c10::ScalarType dtype = c10::kFloat;
  bool int8 = false;
};

// "float32"/"fp32", "float16"/"fp16", "bfloat16"/"bf16", "int8", or "auto":
// the fastest float path the device runs natively: fp16 on CUDA; bf16 on a
// CPU with AMX; else fp32. With AVX-512 BF16 alone, bf16 GEMMs are native but
// a whole forward is no faster than fp32 (0.9-1.1x, benchmarks/speed_bench),
// so auto keeps fp32 there. int8 changes answers slightly and is never chosen
// by "auto". Throws InvalidInput / Unsupported (int8 off the CPU).
Precision parse_precision(const std::string& name, c10::Device device);
std::string dtype_display_name(c10::ScalarType dtype);
// "int8", or the dtype's display name.
std::string precision_name(const Precision& precision);

bool cuda_available();

}  // namespace semroute
