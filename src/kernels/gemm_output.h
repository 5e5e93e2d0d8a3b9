// Where a GEMM kernel's epilogue writes: y = product + bias + residual.
// Plain data shared by the per-ISA translation units (int8_panels.h says why).
#pragma once

#include <cstdint>

namespace semroute::kernels {

struct GemmOutput {
  const float* bias = nullptr;      // [n], optional
  const float* residual = nullptr;  // optional, row stride residual_stride; may equal y
  int64_t residual_stride = 0;
  float* y = nullptr;               // row stride y_stride
  int64_t y_stride = 0;
};

}  // namespace semroute::kernels
