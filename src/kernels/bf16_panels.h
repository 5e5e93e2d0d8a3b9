// The entries of the AVX-512 BF16 translation unit (bf16_gemm_avx512.cpp,
// compiled with its own -m flags; int8_panels.h says why this header holds
// declarations only). Arguments as in bf16_gemm.h.
#pragma once

#include <cstdint>

namespace semroute::kernels {

void bf16_pack_part_avx512(const float* b, int64_t n_stride, int64_t k_stride, int64_t n, int64_t k, int64_t i0,
                           int64_t i1, int64_t j0, int64_t j1, uint16_t* packed);
void bf16_rows_avx512(const float* a, int64_t a_stride, int64_t rows, int64_t k, uint16_t* out);
void bf16_gemm_avx512(const uint16_t* a, int64_t rows, const uint16_t* packed, int64_t n, int64_t k, float alpha,
                      float* c, int64_t c_stride, int64_t panel_stride, const float* row_scales);

}  // namespace semroute::kernels
