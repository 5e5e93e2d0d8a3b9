// The two passes around an int8 GEMM with dynamic activation quantization:
// before it, each input row is quantized to unsigned 8-bit with its own scale
// and zero point (asymmetric: a row after GELU spans [-0.17, max], not
// [-max, max]); after it, the int32 products are turned back into floats with
// the row's and the output channel's scales, the zero point's share and the
// bias. Both are vectorized per ISA and parallel over rows.
#pragma once

#include <cstdint>
#include <functional>

namespace semroute::int8 {

// Quantizes `rows` rows of `k` floats to [0, levels] (255, or 127 where the
// int8 GEMM adds pairs of products in 16 bits and 8-bit inputs could
// saturate). Row r: q = round(x / scale[r]) + zero[r], written with row
// stride q_stride >= k (the bytes past k set to 0). A row holding NaN or
// infinity gets a NaN scale, so the answer is NaN (and reported), not a
// finite guess.
void quantize_rows(const float* x, int64_t x_stride, int64_t rows, int64_t k, int levels, uint8_t* q,
                   int64_t q_stride, float* scale, int32_t* zero);

// quantize_rows for rows [begin, end) of x only, on the calling thread: for
// a caller that splits the rows itself (an int8 product's own region).
void quantize_rows_between(const float* x, int64_t x_stride, int64_t begin, int64_t end, int64_t k, int levels,
                           uint8_t* q, int64_t q_stride, float* scale, int32_t* zero);

// The same for rows [begin, end) that make(begin, end, out) writes (rows of
// k floats, k apart): made a few at a time into a buffer of the thread's and
// quantized while in cache.
void quantize_made_rows_between(const std::function<void(int64_t, int64_t, float*)>& make, int64_t begin,
                                int64_t end, int64_t k, int levels, uint8_t* q, int64_t q_stride, float* scale,
                                int32_t* zero);

// y[r][n] = scale[r] · weight_scale[n] · (acc[r][n] − zero[r] · weight_sum[n]) + bias[n]
// for `rows` rows of `n` outputs; `weight_sum` is the sum of the int8 weights
// of each output channel, `bias` may be null.
void dequantize_rows(const int32_t* acc, int64_t rows, int64_t n, const float* scale, const int32_t* zero,
                     const float* weight_scale, const int32_t* weight_sum, const float* bias, float* y);

}  // namespace semroute::int8
