// The arguments of one fp32 micro-kernel run, as plain data: shared by the
// per-ISA translation units (f32_gemm_*.cpp, compiled with their own -m
// flags) and the rest, so it holds no inline code (int8_panels.h says why).
#pragma once

#include <cstdint>

#include "kernels/gemm_output.h"

namespace semroute::kernels {

// y[r][n] = Σₖ a[r][k] · w[n][k] + bias[n] + residual[r][n]
using F32Output = GemmOutput;

struct F32Panels {
  const float* a;       // rows x k, row stride a_stride
  int64_t a_stride, rows;
  const float* packed;  // every panel: k x width floats
  int64_t k, n, first_panel, last_panel;
  const F32Output* out;
};

// One per path; each multiplies panels [first_panel, last_panel) with the
// panel width of its path (f32_gemm.cpp knows them).
void f32_panels_avx2(const F32Panels& p);
void f32_panels_avx512(const F32Panels& p);

}  // namespace semroute::kernels
