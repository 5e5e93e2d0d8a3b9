#include "models/int8_rows.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "models/vector_math.h"

namespace semroute::int8 {
namespace {

// Rounds v in [0, 2^22) to the nearest integer without a libcall, so loops vectorize.
inline float round_small(float v) { return (v + 12582912.0f) - 12582912.0f; }

// Clamps to [0, hi]; NaN becomes 0 (a float->int conversion of NaN is undefined).
inline float clamp_levels(float v, float hi) {
  v = v >= 0.0f ? v : 0.0f;
  return v <= hi ? v : hi;
}

template <typename V>
inline void quantize_row_body(const float* x, int64_t k, int levels, uint8_t* q, float* scale, int32_t* zero) {
  float lo, hi;  // the range always holds 0, so 0 is exact
  bool finite;
  vec::range_with_zero<V>(x, k, &lo, &hi, &finite);
  const float top = static_cast<float>(levels);
  float s = (hi - lo) / top;
  if (s == 0.0f) s = 1.0f;  // an all-zero row
  const float inv = 1.0f / s;
  const float z = round_small(clamp_levels(-lo * inv, top));
  for (int64_t i = 0; i < k; ++i) q[i] = static_cast<uint8_t>(round_small(clamp_levels(x[i] * inv + z, top)));
  *scale = finite ? s : std::numeric_limits<float>::quiet_NaN();
  *zero = static_cast<int32_t>(z);
}

inline void dequantize_row_body(const int32_t* acc, int64_t n, float scale, int32_t zero, const float* weight_scale,
                                const int32_t* weight_sum, const float* bias, float* y) {
  if (bias != nullptr) {
    for (int64_t j = 0; j < n; ++j)
      y[j] = static_cast<float>(acc[j] - zero * weight_sum[j]) * (scale * weight_scale[j]) + bias[j];
  } else {
    for (int64_t j = 0; j < n; ++j) y[j] = static_cast<float>(acc[j] - zero * weight_sum[j]) * (scale * weight_scale[j]);
  }
}

SEMROUTE_ISA_DISPATCH_VECTOR(void, quantize_row, quantize_row_body,
                             (const float* x, int64_t k, int levels, uint8_t* q, float* scale, int32_t* zero),
                             (x, k, levels, q, scale, zero))
SEMROUTE_ISA_DISPATCH(dequantize_row, dequantize_row_body,
                      (const int32_t* acc, int64_t n, float scale, int32_t zero, const float* weight_scale,
                       const int32_t* weight_sum, const float* bias, float* y),
                      (acc, n, scale, zero, weight_scale, weight_sum, bias, y))

// Rows per task: about 16 K elements, so that tiny inputs stay on one thread.
int64_t grain(int64_t width) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(width, 1)); }

}  // namespace

void quantize_rows_between(const float* x, int64_t x_stride, int64_t begin, int64_t end, int64_t k, int levels,
                           uint8_t* q, int64_t q_stride, float* scale, int32_t* zero) {
  for (int64_t r = begin; r < end; ++r) {
    quantize_row(x + r * x_stride, k, levels, q + r * q_stride, scale + r, zero + r);
    std::fill(q + r * q_stride + k, q + (r + 1) * q_stride, uint8_t{0});
  }
}

void quantize_rows(const float* x, int64_t x_stride, int64_t rows, int64_t k, int levels, uint8_t* q,
                   int64_t q_stride, float* scale, int32_t* zero) {
  at::parallel_for(0, rows, grain(k), [&](int64_t begin, int64_t end) {
    quantize_rows_between(x, x_stride, begin, end, k, levels, q, q_stride, scale, zero);
  });
}

void quantize_made_rows_between(const std::function<void(int64_t, int64_t, float*)>& make, int64_t begin,
                                int64_t end, int64_t k, int levels, uint8_t* q, int64_t q_stride, float* scale,
                                int32_t* zero) {
  constexpr int64_t kRowsAtOnce = 8;  // 8 rows of a 4K-wide input: 128 KB, within L2
  thread_local std::vector<float> made;
  made.resize(static_cast<size_t>(kRowsAtOnce * k));
  for (int64_t first = begin; first < end; first += kRowsAtOnce) {
    const int64_t last = std::min(end, first + kRowsAtOnce);
    make(first, last, made.data());
    quantize_rows_between(made.data(), k, 0, last - first, k, levels, q + first * q_stride, q_stride, scale + first,
                          zero + first);
  }
}

void dequantize_rows(const int32_t* acc, int64_t rows, int64_t n, const float* scale, const int32_t* zero,
                     const float* weight_scale, const int32_t* weight_sum, const float* bias, float* y) {
  at::parallel_for(0, rows, grain(n), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      dequantize_row(acc + r * n, n, scale[r], zero[r], weight_scale, weight_sum, bias, y + r * n);
  });
}

}  // namespace semroute::int8
