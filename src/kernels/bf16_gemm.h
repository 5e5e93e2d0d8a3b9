// bf16 products with fp32 sums, for the attention of int8 models on CPUs
// with AVX-512 BF16: `vdpbf16ps` multiplies 32 bf16 pairs and adds them into
// 16 fp32 sums, twice the multiply-adds of an fp32 FMA. Inputs keep 8 bits of
// mantissa (as int8 models' activations keep 8 bits); sums stay fp32.
//
// C = alpha · A · Bᵀ with A rows converted to bf16 and B packed in panels of
// 16 of its rows x pairs of inputs, the layout the instruction reads: the
// attention's scores (A = queries, B = keys) and its context (A = the
// probabilities, B = the values transposed, packed from V's columns).
#pragma once

#include <cstddef>
#include <cstdint>

namespace semroute::kernels {

// Whether this CPU (under the caps of cpu_features()) runs the bf16 kernel.
bool bf16_dot_here();

// k rounded up to a pair.
inline int64_t bf16_padded_k(int64_t k) { return (k + 1) / 2 * 2; }
// uint16_t elements of B [n][k] packed (n rounded up to 16, k to a pair).
inline size_t bf16_panels_size(int64_t n, int64_t k) {
  return static_cast<size_t>((n + 15) / 16 * 16 * bf16_padded_k(k));
}

// Packs B, element (i, j) at b[i * n_stride + j * k_stride], i < n, j < k;
// the padding is zero.
void pack_bf16_panels(const float* b, int64_t n_stride, int64_t k_stride, int64_t n, int64_t k, uint16_t* packed);
// The same for the part of B in rows [i0, i1) and inputs [j0, j1), into the
// whole B's layout (`b` and `packed` as for the whole): writes that part's
// elements only, so that parts packed at once (threads) together make the
// whole; the padding is written by the part that holds B's last row and
// all inputs (rows), or its last input and all rows (the input).
void pack_bf16_panel_part(const float* b, int64_t n_stride, int64_t k_stride, int64_t n, int64_t k, int64_t i0,
                          int64_t i1, int64_t j0, int64_t j1, uint16_t* packed);
// Rows [rows][k] of a (row stride a_stride) as bf16 rows of bf16_padded_k(k).
void bf16_rows(const float* a, int64_t a_stride, int64_t rows, int64_t k, uint16_t* out);
// c[r][i] = alpha · Σⱼ a[r][j] · B[i][j] for r < rows, i < n (c row stride
// c_stride); `a` from bf16_rows, `packed` from pack_bf16_panels, its panels
// `panel_stride` elements apart (0: packed for this k; more: the first k
// inputs of a B packed for a longer k). With `row_scales`, row r's results
// are times row_scales[r] too.
void bf16_gemm(const uint16_t* a, int64_t rows, const uint16_t* packed, int64_t n, int64_t k, float alpha, float* c,
               int64_t c_stride, int64_t panel_stride = 0, const float* row_scales = nullptr);

}  // namespace semroute::kernels
