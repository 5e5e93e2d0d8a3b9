#include "core/device.h"

#include <ATen/Context.h>

#include "core/cpu_features.h"
#include "semroute/error.h"

namespace semroute {

bool cuda_available() { return at::hasCUDA(); }

c10::Device parse_device(const std::string& name) {
  if (name.empty() || name == "auto") return cuda_available() ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
  if (name == "cpu") return c10::Device(c10::kCPU);
  if (name.rfind("cuda", 0) == 0) {
    if (!cuda_available()) throw Unsupported("device '" + name + "' requested, but this libtorch has no CUDA");
    c10::Device device(c10::kCUDA);
    try {
      device = c10::Device(name);
    } catch (const std::exception&) {
      throw InvalidInput("invalid device '" + name + "' (use cpu, cuda or cuda:N)");
    }
    // Checked here: CUDA's own error comes at the first copy, mid-load.
    const size_t devices = at::getNumGPUs();
    if (device.has_index() && static_cast<size_t>(device.index()) >= devices)
      throw InvalidInput("device '" + name + "' requested, but this machine has " + std::to_string(devices) +
                         " CUDA device" + (devices == 1 ? "" : "s"));
    return device;
  }
  throw InvalidInput("unknown device '" + name + "' (use cpu, cuda, cuda:N or auto)");
}

Precision parse_precision(const std::string& name, c10::Device device) {
  if (name.empty() || name == "auto") {
    if (device.is_cuda()) return {c10::kHalf};
    return {cpu_features().amx_bf16 ? c10::kBFloat16 : c10::kFloat};
  }
  if (name == "float32" || name == "fp32" || name == "float") return {c10::kFloat};
  if (name == "float16" || name == "fp16" || name == "half") return {c10::kHalf};
  if (name == "bfloat16" || name == "bf16") return {c10::kBFloat16};
  if (name == "int8" || name == "qint8") {
    if (!device.is_cpu()) throw Unsupported("dtype int8 runs on the CPU only");
    return {c10::kFloat, true};
  }
  throw InvalidInput("unknown dtype '" + name + "' (use float32, float16, bfloat16, int8 or auto)");
}

std::string precision_name(const Precision& precision) {
  return precision.int8 ? "int8" : dtype_display_name(precision.dtype);
}

std::string dtype_display_name(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::kFloat: return "float32";
    case c10::kHalf: return "float16";
    case c10::kBFloat16: return "bfloat16";
    default: return c10::toString(dtype);
  }
}

}  // namespace semroute
