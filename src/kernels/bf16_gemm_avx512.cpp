// The bf16 kernel (bf16_gemm.h) for AVX-512 BF16 (flags: src/CMakeLists.txt).
// Internal linkage and no standard-library templates: no wider-ISA copy of
// an inline function can stand in for another translation unit's.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/bf16_panels.h"

namespace semroute::kernels {
namespace {

constexpr int kLanes = 16;   // fp32 sums per register, B rows per panel
constexpr int kRows = 6;     // tile: 6 rows x 4 panels = 24 sums (of 32 registers)
constexpr int kPanels = 4;

// Round to nearest even, as vcvtneps2bf16 does (NaN stays NaN).
inline uint16_t to_bf16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

inline int64_t padded(int64_t k) { return (k + 1) / 2 * 2; }

inline __mmask16 mask(int64_t valid) {
  return valid >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << valid) - 1u);
}

// Where a tile reads and writes: B's panels and the output.
struct Operands {
  const uint16_t* a;
  int64_t pk;
  const uint16_t* packed;
  int64_t panel_size, n;
  float alpha;
  const float* row_scales;
  float* c;
  int64_t c_stride;
};

// Rows [row, row + R) x panels [panel, panel + V).
template <int R, int V>
inline void tile(const Operands& o, int64_t row, int64_t panel) {
  const uint16_t *a = o.a, *packed = o.packed;
  const int64_t pk = o.pk, panel_size = o.panel_size;
  __m512 acc[R][V];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
  const int64_t pairs = pk / 2;
  for (int64_t p = 0; p < pairs; ++p) {
    __m512bh w[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      w[v] = (__m512bh)_mm512_loadu_si512(packed + (panel + v) * panel_size + p * 2 * kLanes);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      int32_t pair;
      std::memcpy(&pair, a + (row + r) * pk + 2 * p, 4);
      const __m512bh x = (__m512bh)_mm512_set1_epi32(pair);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], x, w[v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const __m512 scale = _mm512_set1_ps(o.row_scales != nullptr ? o.alpha * o.row_scales[row + r] : o.alpha);
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const int64_t col = (panel + v) * kLanes;
      _mm512_mask_storeu_ps(o.c + (row + r) * o.c_stride + col, mask(o.n - col), _mm512_mul_ps(acc[r][v], scale));
    }
  }
}

template <int R>
inline void panels(const Operands& o, int64_t row, int64_t panel, int64_t left) {
  switch (left) {
    case 1: return tile<R, 1>(o, row, panel);
    case 2: return tile<R, 2>(o, row, panel);
    case 3: return tile<R, 3>(o, row, panel);
    default: return tile<R, 4>(o, row, panel);
  }
}

template <int R>
inline void rows_tail(const Operands& o, int64_t row, int64_t left_rows, int64_t panel, int64_t left) {
  if constexpr (R > 0) {
    if (left_rows == R) return panels<R>(o, row, panel, left);
    rows_tail<R - 1>(o, row, left_rows, panel, left);
  }
}

// rows[r] element c -> rows[c] element r, for 16 rows of 16 32-bit elements:
// pairs within 128-bit lanes, then the lanes, four at a time (maskz forms:
// the plain ones start from _mm512_undefined, which GCC 12 flags).
inline void transpose_16x16(__m512i rows[kLanes]) {
  __m512i t[kLanes], u[kLanes];
  for (int k = 0; k < kLanes; k += 2) {
    t[k] = _mm512_maskz_unpacklo_epi32(0xFFFF, rows[k], rows[k + 1]);
    t[k + 1] = _mm512_maskz_unpackhi_epi32(0xFFFF, rows[k], rows[k + 1]);
  }
  // u[4g + m], lane q: element 4q + m of rows 4g .. 4g + 3.
  for (int g = 0; g < kLanes; g += 4) {
    u[g] = _mm512_maskz_unpacklo_epi64(0xFF, t[g], t[g + 2]);
    u[g + 1] = _mm512_maskz_unpackhi_epi64(0xFF, t[g], t[g + 2]);
    u[g + 2] = _mm512_maskz_unpacklo_epi64(0xFF, t[g + 1], t[g + 3]);
    u[g + 3] = _mm512_maskz_unpackhi_epi64(0xFF, t[g + 1], t[g + 3]);
  }
  // Row 4q + m gathers lane q of u[m], u[4 + m], u[8 + m], u[12 + m].
  for (int m = 0; m < 4; ++m) {
    const __m512i v0 = _mm512_maskz_shuffle_i32x4(0xFFFF, u[m], u[4 + m], 0x44);
    const __m512i v1 = _mm512_maskz_shuffle_i32x4(0xFFFF, u[m], u[4 + m], 0xEE);
    const __m512i v2 = _mm512_maskz_shuffle_i32x4(0xFFFF, u[8 + m], u[12 + m], 0x44);
    const __m512i v3 = _mm512_maskz_shuffle_i32x4(0xFFFF, u[8 + m], u[12 + m], 0xEE);
    rows[m] = _mm512_maskz_shuffle_i32x4(0xFFFF, v0, v2, 0x88);
    rows[4 + m] = _mm512_maskz_shuffle_i32x4(0xFFFF, v0, v2, 0xDD);
    rows[8 + m] = _mm512_maskz_shuffle_i32x4(0xFFFF, v1, v3, 0x88);
    rows[12 + m] = _mm512_maskz_shuffle_i32x4(0xFFFF, v1, v3, 0xDD);
  }
}

}  // namespace

// Two cases run vectorized: B's rows contiguous (k_stride 1: the keys) and
// B's columns contiguous (n_stride 1: the values, read as Vᵀ); others, and
// the tails, one element at a time. Only the part's own slots are written
// (parts packed at once by other threads share panels, and pairs of inputs).
void bf16_pack_part_avx512(const float* b, int64_t n_stride, int64_t k_stride, int64_t n, int64_t k, int64_t i0,
                           int64_t i1, int64_t j0, int64_t j1, uint16_t* packed) {
  const int64_t pk = padded(k);
  // The padding (rows up to a whole panel, the input up to a pair) is the
  // part's that reaches B's end.
  const int64_t i_end = i1 == n ? (n + kLanes - 1) / kLanes * kLanes : i1, j_end = j1 == k ? pk : j1;
  const auto slot = [&](int64_t i, int64_t j) {  // (unsigned: no sign fixes in the divisions)
    const auto row = static_cast<uint64_t>(i), input = static_cast<uint64_t>(j);
    return packed + row / kLanes * pk * kLanes + input / 2 * 2 * kLanes + row % kLanes * 2 + input % 2;
  };
  const auto at = [&](int64_t i, int64_t j) { return i < n && j < k ? to_bf16(b[i * n_stride + j * k_stride]) : uint16_t{0}; };
  if (k_stride == 1) {
    // The row's inputs from j on to bf16, 16 at a time; its pairs to their
    // slots, a panel row (2 · kLanes) apart from the row's first.
    const auto pack_row = [&](int64_t i, int64_t j) {
      uint16_t* row_slots = slot(i, 0);
      if (i < n && j % 2 == 0)
        for (; j + kLanes <= j1; j += kLanes) {
          uint32_t pairs[kLanes / 2];
          const __m256i v = (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(b + i * n_stride + j));
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(pairs), v);
          uint16_t* out = row_slots + j * kLanes;
#pragma GCC unroll 8
          for (int p = 0; p < kLanes / 2; ++p) std::memcpy(out + p * 2 * kLanes, &pairs[p], 4);
        }
      for (; j < j_end; ++j) *slot(i, j) = at(i, j);
    };
    int64_t i = i0;
    // Whole panels of 16 rows, 32 inputs at a time: their 16 x 16 pairs
    // transposed in registers, one store per panel row.
    if (i % kLanes == 0 && j0 % 2 == 0)
      for (; i + kLanes <= std::min(i1, n); i += kLanes) {
        int64_t j = j0;
        for (; j + 2 * kLanes <= j1; j += 2 * kLanes) {
          __m512i pairs[kLanes];
          for (int r = 0; r < kLanes; ++r) {
            const float* x = b + (i + r) * n_stride + j;
            pairs[r] = (__m512i)_mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + kLanes), _mm512_loadu_ps(x));
          }
          transpose_16x16(pairs);
          uint16_t* out = slot(i, j);
          for (int p = 0; p < kLanes; ++p) _mm512_storeu_si512(out + p * 2 * kLanes, pairs[p]);
        }
        for (int r = 0; r < kLanes; ++r) pack_row(i + r, j);
      }
    for (; i < i_end; ++i) pack_row(i, j0);
    return;
  }
  if (n_stride == 1) {
    int64_t j = j0;
    if (j % 2 == 1) {  // the second of a pair whose first is another part's
      for (int64_t i = i0; i < i_end; ++i) *slot(i, j) = at(i, j);
      ++j;
    }
    for (; j + 2 <= j_end; j += 2) {
      int64_t i = i0;
      // Two inputs' 16 rows each, interleaved: one panel row of pairs, in
      // each panel (pk · kLanes apart) from pair_row on.
      uint16_t* const pair_row = packed + j * kLanes;
      if (i % kLanes == 0)
        for (uint16_t* out = pair_row + i / kLanes * pk * kLanes; i + kLanes <= std::min(i1, n);
             i += kLanes, out += pk * kLanes) {
          const __m256i even = (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(b + i + j * k_stride));
          const __m256i odd = j + 1 < k ? (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(b + i + (j + 1) * k_stride))
                                        : _mm256_setzero_si256();
          // maskz forms: the plain ones start from _mm512_undefined, which GCC flags at -O1.
          const __m512i e = _mm512_maskz_cvtepu16_epi32(0xFFFF, even);
          const __m512i o = _mm512_maskz_slli_epi32(0xFFFF, _mm512_maskz_cvtepu16_epi32(0xFFFF, odd), 16);
          _mm512_storeu_si512(out, _mm512_or_si512(e, o));
        }
      for (; i < i_end; ++i) {
        *slot(i, j) = at(i, j);
        *slot(i, j + 1) = at(i, j + 1);
      }
    }
    if (j < j_end)  // the first of a pair whose second is another part's
      for (int64_t i = i0; i < i_end; ++i) *slot(i, j) = at(i, j);
    return;
  }
  for (int64_t i = i0; i < i_end; ++i)
    for (int64_t j = j0; j < j_end; ++j) *slot(i, j) = at(i, j);
}

void bf16_rows_avx512(const float* a, int64_t a_stride, int64_t rows, int64_t k, uint16_t* out) {
  const int64_t pk = padded(k);
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = a + r * a_stride;
    uint16_t* o = out + r * pk;
    int64_t j = 0;
    for (; j + kLanes <= k; j += kLanes)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + j), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(x + j)));
    for (; j < pk; ++j) o[j] = j < k ? to_bf16(x[j]) : uint16_t{0};
  }
}

void bf16_gemm_avx512(const uint16_t* a, int64_t rows, const uint16_t* packed, int64_t n, int64_t k, float alpha,
                      float* c, int64_t c_stride, int64_t panel_stride, const float* row_scales) {
  const Operands o{a, padded(k), packed, panel_stride, n, alpha, row_scales, c, c_stride};
  const int64_t count = (n + kLanes - 1) / kLanes;
  for (int64_t panel = 0; panel < count; panel += kPanels) {
    const int64_t left = count - panel < kPanels ? count - panel : kPanels;
    int64_t row = 0;
    for (; row + kRows <= rows; row += kRows) panels<kRows>(o, row, panel, left);
    rows_tail<kRows - 1>(o, row, rows - row, panel, left);
  }
}

}  // namespace semroute::kernels
