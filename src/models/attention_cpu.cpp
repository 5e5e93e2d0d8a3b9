// The CPU attention kernel: one task per (sequence, head, query block), each
// rotating its queries and keys (RoPE), computing the block's scores against
// only the keys its pattern reaches, the softmax and the product with V in
// buffers that stay in cache, and writing its rows straight into the
// token-major output. Nothing S×S, no masks, no transposes, no per-block
// tensor ops: the eager path in attention.cpp spent more time in those than
// in the arithmetic.
#include "models/attention_cpu.h"

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>

#include <dnnl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "models/vector_math.h"
#include "semroute/error.h"

namespace semroute {
namespace {

// Score floats one task keeps (1 MB): small enough for L2.
constexpr int64_t kTaskScores = 256 * 1024;

// Softmax of scores[lo, hi) in place; the rest of the row becomes 0.
inline void softmax_range_body(float* row, int64_t width, int64_t lo, int64_t hi) {
  float* x = row + lo;
  const int64_t n = hi - lo;
  const float max = vec::max(x, n);
  for (int64_t j = 0; j < n; ++j) x[j] = vec::exp_nonpositive(x[j] - max);
  const float inverse = 1.0f / vec::sum(x, n);
  for (int64_t j = 0; j < n; ++j) x[j] *= inverse;
  std::fill(row, row + lo, 0.0f);
  std::fill(row + hi, row + width, 0.0f);
}
SEMROUTE_ISA_DISPATCH(softmax_range, softmax_range_body, (float* row, int64_t width, int64_t lo, int64_t hi),
                      (row, width, lo, hi))

// out[r] = rotate_half RoPE of rows x[r] (row stride `stride`) at positions
// first + r · step: x·cos + (−x₂, x₁)·sin, with cos/sin rows of `dim` floats
// (step 0: every row at one position).
inline void rotate_rows_body(const float* x, int64_t stride, int64_t rows, int64_t first, const float* cos,
                             const float* sin, int64_t dim, float* out, int64_t step) {
  const int64_t half = dim / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * stride, *c = cos + (first + r * step) * dim, *s = sin + (first + r * step) * dim;
    float* o = out + r * dim;
    for (int64_t i = 0; i < half; ++i) o[i] = xr[i] * c[i] - xr[i + half] * s[i];
    for (int64_t i = half; i < dim; ++i) o[i] = xr[i] * c[i] + xr[i - half] * s[i];
  }
}
SEMROUTE_ISA_DISPATCH(rotate_rows, rotate_rows_body,
                      (const float* x, int64_t stride, int64_t rows, int64_t first, const float* cos, const float* sin,
                       int64_t dim, float* out, int64_t step),
                      (x, stride, rows, first, cos, sin, dim, out, step))

// A [sequences, length, heads, dim] fp32 view whose rows can be handed to
// sgemm (unit stride in the last dimension).
struct TokenMajor {
  at::Tensor data;
  const float* base;
  int64_t sequence_stride, token_stride, head_stride;

  explicit TokenMajor(const at::Tensor& x) : data(x.to(at::kFloat)) {
    if (data.stride(-1) != 1) data = data.contiguous();
    base = data.data_ptr<float>();
    sequence_stride = data.stride(0);
    token_stride = data.stride(1);
    head_stride = data.stride(2);
  }
  const float* row(int64_t sequence, int64_t token, int64_t head) const {
    return base + sequence * sequence_stride + token * token_stride + head * head_stride;
  }
};

void sgemm(char trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
           int64_t ldb, float* c, int64_t ldc) {
  if (dnnl_sgemm('N', trans_b, m, n, k, alpha, a, lda, b, ldb, 0.0f, c, ldc) != dnnl_success)
    throw InternalError("oneDNN sgemm failed in attention");
}

// x [sequences, length, heads, dim] rotated (RoPE) at positions 0..length-1:
// a new fp32 tensor, one parallel pass over the tokens.
at::Tensor rotated(const at::Tensor& x_in, const at::Tensor& cos_in, const at::Tensor& sin_in) {
  const TokenMajor x(x_in);
  const int64_t sequences = x_in.size(0), length = x_in.size(1), heads = x_in.size(2), dim = x_in.size(3);
  const at::Tensor cos = cos_in.to(at::kFloat).contiguous(), sin = sin_in.to(at::kFloat).contiguous();
  at::Tensor out = at::empty({sequences, length, heads, dim}, x_in.options().dtype(at::kFloat));
  float* o = out.data_ptr<float>();
  const float *c = cos.data_ptr<float>(), *s = sin.data_ptr<float>();
  at::parallel_for(0, sequences * length, std::max<int64_t>(1, 4096 / std::max<int64_t>(heads * dim, 1)),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t t = begin; t < end; ++t) {
                       const int64_t sequence = t / length, token = t % length;
                       // The heads of one token share its cos/sin row: rows of `dim` at head stride.
                       rotate_rows(x.row(sequence, token, 0), x.head_stride, heads, 0, c + token * dim, s + token * dim,
                                   dim, o + t * heads * dim, 0);
                     }
                   });
  return out;
}

}  // namespace

int64_t attention_query_block(int64_t keys) {
  // 64 measured best on AVX-512 for window 64 and for 512-2048 global keys.
  return std::clamp<int64_t>(kTaskScores / std::max<int64_t>(keys, 1), 16, 64) / 16 * 16;
}

at::Tensor attention_cpu(const at::Tensor& q_in, const at::Tensor& k_in, const at::Tensor& v_in, const at::Tensor& cos_in,
                         const at::Tensor& sin_in, double scale, AttentionPattern pattern, int64_t block, double softcap) {
  const int64_t sequences = q_in.size(0), length = q_in.size(1), heads = q_in.size(2), dim = q_in.size(3);
  const int64_t kv_heads = k_in.size(2);
  at::Tensor out = at::empty({sequences, length, heads * dim}, q_in.options().dtype(at::kFloat));
  if (out.numel() == 0) return out.to(q_in.scalar_type());
  const bool rotary = cos_in.defined();
  // RoPE once per token, before the tasks: a task per query block would
  // otherwise rotate every key it reads again (8 times per head at 512
  // global keys).
  const TokenMajor q(rotary ? rotated(q_in, cos_in, sin_in) : q_in), k(rotary ? rotated(k_in, cos_in, sin_in) : k_in);
  const TokenMajor v(v_in);
  const int64_t window = pattern.window >= length - 1 ? -1 : pattern.window;
  if (block <= 0) block = attention_query_block(window >= 0 ? 2 * window + 1 : length);
  const int64_t blocks = (length + block - 1) / block, group = heads / kv_heads, out_stride = heads * dim;
  float* op = out.data_ptr<float>();

  at::parallel_for(0, sequences * heads * blocks, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scores;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t sequence = task / (heads * blocks), head = task / blocks % heads, kv_head = head / group;
      const int64_t q0 = task % blocks * block, q1 = std::min(length, q0 + block), rows = q1 - q0;
      const int64_t k0 = window >= 0 ? std::max<int64_t>(0, q0 - window) : 0;
      int64_t k1 = window >= 0 ? std::min(length, q1 + window) : length;
      if (pattern.causal) k1 = std::min(k1, q1);
      const int64_t keys = k1 - k0;
      scores.resize(static_cast<size_t>(rows * keys));
      sgemm('T', rows, keys, dim, static_cast<float>(scale), q.row(sequence, q0, head), q.token_stride,
            k.row(sequence, k0, kv_head), k.token_stride, scores.data(), keys);
      for (int64_t r = 0; r < rows; ++r) {
        float* row = scores.data() + r * keys;
        const int64_t query = q0 + r;
        int64_t lo = 0, hi = keys;
        if (window >= 0) {
          lo = std::max<int64_t>(0, query - window - k0);
          hi = std::min<int64_t>(keys, query + window + 1 - k0);
        }
        if (pattern.causal) hi = std::min<int64_t>(hi, query + 1 - k0);
        if (softcap > 0)
          for (int64_t j = lo; j < hi; ++j) row[j] = static_cast<float>(softcap * std::tanh(row[j] / softcap));
        softmax_range(row, keys, lo, hi);
      }
      sgemm('N', rows, dim, keys, 1.0f, scores.data(), keys, v.row(sequence, k0, kv_head), v.token_stride,
            op + (sequence * length + q0) * out_stride + head * dim, out_stride);
    }
  });
  return out.to(q_in.scalar_type());
}

}  // namespace semroute
