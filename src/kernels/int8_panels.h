// The arguments of one int8 micro-kernel run, as plain data: this header is
// what the per-ISA translation units (int8_gemm_*.cpp, compiled with their
// own -m flags) share with the rest, so it holds no inline code that the
// linker could take from a wider-ISA object.
#pragma once

#include <cstdint>

#include "kernels/gemm_output.h"

namespace semroute::kernels {

// What the epilogue does with a tile's int32 sums:
// y[r][n] = row_scale[r] · weight_scale[n] · (sum[r][n] − row_zero[r] · Σₖ w[n][k])
//           + bias[n] + residual[r][n]
struct Int8Output : GemmOutput {
  const float* row_scale = nullptr;  // per row of a
  const int32_t* row_zero = nullptr;
};

struct Int8Panels {
  const uint8_t* a;           // rows x padded_k bytes, row stride a_stride
  int64_t a_stride, rows;
  const int8_t* packed;       // every panel: groups x width x 4 bytes
  int64_t groups;             // padded_k / 4
  const float* weight_scale;  // padded to panels x width
  const int32_t* weight_sum;
  int64_t n, first_panel, last_panel;
  const Int8Output* out;
};

// One per path; each multiplies panels [first_panel, last_panel) with the
// panel width of its path (int8_gemm.cpp knows them).
void int8_panels_avx2(const Int8Panels& p);
void int8_panels_avx_vnni(const Int8Panels& p);
void int8_panels_avx512(const Int8Panels& p);
void int8_panels_avx512_vnni(const Int8Panels& p);

}  // namespace semroute::kernels
