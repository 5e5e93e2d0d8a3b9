#include "classifiers/int8_dot.h"

#include "core/cpu_features.h"

// GCC 12's AVX-512 headers fill "undefined" vectors by self-initialization
// (__Y = __Y), which its own uninitialized-use warnings then report at every
// inlined call (GCC bug 105593, fixed in GCC 13): silenced for this file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

namespace semroute {

int32_t dot_i8_scalar(const int8_t* a, const int8_t* b, int64_t n) {
  int32_t total = 0;
  for (int64_t i = 0; i < n; ++i) total += static_cast<int32_t>(a[i]) * b[i];
  return total;
}

__attribute__((target("avx2"))) int32_t dot_i8_avx2(const int8_t* a, const int8_t* b, int64_t n) {
  __m256i acc = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i va = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m256i vb = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(va, vb));
  }
  __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  sum = _mm_hadd_epi32(sum, sum);
  sum = _mm_hadd_epi32(sum, sum);
  return _mm_cvtsi128_si32(sum) + dot_i8_scalar(a + i, b + i, n - i);
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) int32_t dot_u8s8_vnni(const uint8_t* query, const int8_t* row,
                                                                                 int64_t n, int32_t row_sum) {
  __m512i acc = _mm512_setzero_si512();
  int64_t i = 0;
  for (; i + 64 <= n; i += 64)
    acc = _mm512_dpbusd_epi32(acc, _mm512_loadu_si512(query + i), _mm512_loadu_si512(row + i));
  int32_t total = _mm512_reduce_add_epi32(acc);
  for (; i < n; ++i) total += static_cast<int32_t>(query[i]) * row[i];
  return total - 128 * row_sum;
}

bool has_vnni() {
  return cpu_features().avx512_vnni;
}

bool has_avx2() {
  return cpu_features().avx2;
}

DotI8 dot_i8() { return has_avx2() ? dot_i8_avx2 : dot_i8_scalar; }

}  // namespace semroute
