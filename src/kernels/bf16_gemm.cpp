#include "kernels/bf16_gemm.h"

#include "core/cpu_features.h"
#include "kernels/bf16_panels.h"
#include "semroute/error.h"

namespace semroute::kernels {

bool bf16_dot_here() { return cpu_features().avx512_bf16; }

namespace {
void require_bf16() {
  if (!bf16_dot_here()) throw InternalError("bf16 kernel called on a CPU without AVX-512 BF16");
}
}  // namespace

void pack_bf16_panels(const float* b, int64_t n_stride, int64_t k_stride, int64_t n, int64_t k, uint16_t* packed) {
  require_bf16();
  bf16_pack_part_avx512(b, n_stride, k_stride, n, k, 0, n, 0, k, packed);
}

void pack_bf16_panel_part(const float* b, int64_t n_stride, int64_t k_stride, int64_t n, int64_t k, int64_t i0,
                          int64_t i1, int64_t j0, int64_t j1, uint16_t* packed) {
  require_bf16();
  if (i0 < 0 || i0 > i1 || i1 > n || j0 < 0 || j0 > j1 || j1 > k) throw InternalError("bf16 pack: a part outside B");
  bf16_pack_part_avx512(b, n_stride, k_stride, n, k, i0, i1, j0, j1, packed);
}

void bf16_rows(const float* a, int64_t a_stride, int64_t rows, int64_t k, uint16_t* out) {
  require_bf16();
  bf16_rows_avx512(a, a_stride, rows, k, out);
}

void bf16_gemm(const uint16_t* a, int64_t rows, const uint16_t* packed, int64_t n, int64_t k, float alpha, float* c,
               int64_t c_stride, int64_t panel_stride, const float* row_scales) {
  require_bf16();
  const int64_t own = bf16_padded_k(k) * 16;
  if (panel_stride != 0 && panel_stride < own) throw InternalError("bf16 product: panels closer than the input length");
  bf16_gemm_avx512(a, rows, packed, n, k, alpha, c, c_stride, panel_stride == 0 ? own : panel_stride, row_scales);
}

}  // namespace semroute::kernels
