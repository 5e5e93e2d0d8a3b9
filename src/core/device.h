// Device and dtype selection from user-facing names.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <string>

namespace semroute {

// "cpu", "cuda", "cuda:N", or "auto" (CUDA when available, else CPU).
// Throws Unsupported when CUDA is asked for but this libtorch has none.
c10::Device parse_device(const std::string& name);

// "float32"/"fp32", "float16"/"fp16", "bfloat16"/"bf16", or "auto" (fp32 on
// CPU, fp16 on CUDA).
c10::ScalarType parse_dtype_name(const std::string& name, c10::Device device);
std::string dtype_display_name(c10::ScalarType dtype);

bool cuda_available();

}  // namespace semroute
