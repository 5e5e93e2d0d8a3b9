// Rotary position embeddings as Hugging Face computes them: inverse
// frequencies from θ ("default"), divided by the factor ("linear"), or
// blended per dimension with an attention scale ("yarn"); applied to the two
// halves of each head (rotate_half convention).
#pragma once

#include <ATen/core/Tensor.h>

#include "models/configs.h"

namespace semroute {

class RotaryEmbedding {
 public:
  RotaryEmbedding() = default;
  // `max_position_embeddings` is YaRN's fallback pre-scaling length.
  RotaryEmbedding(const RopeParams& params, int64_t head_dim, int64_t max_position_embeddings);

  // cos and sin for positions [0, length), each [length, head_dim], in `dtype`.
  std::pair<at::Tensor, at::Tensor> cos_sin(int64_t length, c10::ScalarType dtype, c10::Device device) const;

  // x * cos + rotate_half(x) * sin, with x [..., length, head_dim] and
  // cos/sin broadcastable to it.
  static at::Tensor apply(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

  const at::Tensor& inv_freq() const { return inv_freq_; }
  double attention_scaling() const { return attention_scaling_; }

 private:
  at::Tensor inv_freq_;  // [head_dim / 2], fp32 on CPU
  double attention_scaling_ = 1.0;
};

// RoPE (rotate_half) of `rows` rows of `heads` heads of `dim` floats side by
// side (row stride `stride`), row r at position first + r: out = x·cos +
// (−x₂, x₁)·sin, with fp32 cos / sin rows of `dim` floats per position.
// `out` (row stride `out_stride`) may be x itself.
void rotate_rows(const float* x, int64_t stride, int64_t rows, int64_t first, const float* cos, const float* sin,
                 int64_t dim, int64_t heads, float* out, int64_t out_stride);

}  // namespace semroute
