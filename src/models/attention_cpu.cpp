// The CPU attention kernel: one task per (sequence, head, query block), each
// computing its block's scores against only the keys its pattern reaches,
// the softmax and the product with V in a buffer that stays in cache. Nothing
// S×S, no masks, no per-block tensor ops: the eager path in attention.cpp
// spent more time in those than in the arithmetic.
#include "models/attention_cpu.h"

#include <ATen/Parallel.h>
#include <ATen/ops/empty_like.h>

#include <dnnl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "semroute/error.h"

namespace semroute {
namespace {

// Score floats one task keeps (256 KB): small enough for L2.
constexpr int64_t kTaskScores = 64 * 1024;

// exp(x) for x <= 0 (scores minus their row maximum) to ~2 ulp, written so
// the compiler vectorizes the loops that call it: 2^n · p(r), n = round(x /
// ln 2), r = x − n·ln 2. Needs the default floating-point model (no
// -ffast-math, which would fold the rounding trick away).
inline float exp_nonpositive(float x) {
  x = x < -87.0f ? -87.0f : x;
  // Round to nearest by adding and removing 1.5 · 2^23 (no branch, no libcall).
  const float n = (x * 1.44269504f + 12582912.0f) - 12582912.0f;
  const float r = (x - n * 0.693145752f) - n * 1.42860677e-6f;
  float p = 1.98756912e-4f;
  p = p * r + 1.39819994e-3f;
  p = p * r + 8.33345205e-3f;
  p = p * r + 4.16657962e-2f;
  p = p * r + 1.66666657e-1f;
  p = p * r + 5.0e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

// Softmax of scores[lo, hi) in place; the rest of the row becomes 0. The
// reductions keep kLanes partial results so they vectorize without
// -ffast-math (which would reorder every float sum in the file).
constexpr int64_t kLanes = 16;

__attribute__((target_clones("avx512f", "avx2", "default"))) void softmax_range(float* row, int64_t width, int64_t lo,
                                                                                 int64_t hi) {
  float* x = row + lo;
  const int64_t n = hi - lo, whole = n / kLanes * kLanes;
  float lanes[kLanes];
  std::fill(lanes, lanes + kLanes, -INFINITY);
  for (int64_t j = 0; j < whole; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] = lanes[l] > x[j + l] ? lanes[l] : x[j + l];
  float max = *std::max_element(lanes, lanes + kLanes);
  for (int64_t j = whole; j < n; ++j) max = std::max(max, x[j]);
  for (int64_t j = 0; j < n; ++j) x[j] = exp_nonpositive(x[j] - max);
  std::fill(lanes, lanes + kLanes, 0.0f);
  for (int64_t j = 0; j < whole; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += x[j + l];
  float sum = 0;
  for (int64_t l = 0; l < kLanes; ++l) sum += lanes[l];
  for (int64_t j = whole; j < n; ++j) sum += x[j];
  const float inverse = 1.0f / sum;
  for (int64_t j = 0; j < n; ++j) x[j] *= inverse;
  std::fill(row, row + lo, 0.0f);
  std::fill(row + hi, row + width, 0.0f);
}

void sgemm(char trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
           int64_t ldb, float* c, int64_t ldc) {
  if (dnnl_sgemm('N', trans_b, m, n, k, alpha, a, lda, b, ldb, 0.0f, c, ldc) != dnnl_success)
    throw InternalError("oneDNN sgemm failed in attention");
}

}  // namespace

int64_t attention_query_block(int64_t keys) {
  return std::clamp<int64_t>(kTaskScores / std::max<int64_t>(keys, 1), 16, 128) / 16 * 16;
}

at::Tensor attention_cpu(const at::Tensor& q_in, const at::Tensor& k_in, const at::Tensor& v_in, double scale,
                         AttentionPattern pattern, int64_t block, double softcap) {
  const c10::ScalarType out_type = q_in.scalar_type();
  // Scores and sums in fp32 whatever the model dtype.
  const at::Tensor q = q_in.to(at::kFloat).contiguous(), k = k_in.to(at::kFloat).contiguous(),
                   v = v_in.to(at::kFloat).contiguous();
  const int64_t dim = q.size(-1), length = q.size(-2), heads = q.size(-3), kv_heads = k.size(-3);
  const int64_t sequences = q.numel() / std::max<int64_t>(heads * length * dim, 1);
  at::Tensor out = at::empty_like(q);
  if (q.numel() == 0) return out.to(out_type);
  const int64_t window = pattern.window;
  const int64_t reach = window >= 0 ? std::min(length, 2 * window + 1) : length;
  if (block <= 0) block = attention_query_block(reach);
  const int64_t blocks = (length + block - 1) / block, group = heads / kv_heads;
  const float* qp = q.data_ptr<float>();
  const float* kp = k.data_ptr<float>();
  const float* vp = v.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const int64_t head_stride = length * dim;

  at::parallel_for(0, sequences * heads * blocks, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scores;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t sequence = task / (heads * blocks), head = task / blocks % heads;
      const int64_t q0 = task % blocks * block, q1 = std::min(length, q0 + block), rows = q1 - q0;
      const int64_t k0 = window >= 0 ? std::max<int64_t>(0, q0 - window) : 0;
      int64_t k1 = window >= 0 ? std::min(length, q1 + window) : length;
      if (pattern.causal) k1 = std::min(k1, q1);
      const int64_t keys = k1 - k0;
      scores.resize(static_cast<size_t>(rows * keys));
      const int64_t kv_offset = (sequence * kv_heads + head / group) * head_stride + k0 * dim;
      const int64_t q_offset = (sequence * heads + head) * head_stride + q0 * dim;
      sgemm('T', rows, keys, dim, static_cast<float>(scale), qp + q_offset, dim, kp + kv_offset, dim, scores.data(),
            keys);
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
      sgemm('N', rows, dim, keys, 1.0f, scores.data(), keys, vp + kv_offset, dim, op + q_offset, dim);
    }
  });
  return out.to(out_type);
}

}  // namespace semroute
