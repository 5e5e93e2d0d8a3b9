// Attention kernels shared by the backends. q, k, v are [batch, heads, seq, head_dim].
#pragma once

#include <ATen/core/Tensor.h>

namespace semroute {

// Additive key-padding bias [batch, 1, 1, seq]: 0 for real tokens, the dtype's
// lowest value for padding (as HF's eager path, so fully padded rows stay finite).
at::Tensor key_padding_bias(const at::Tensor& attention_mask, c10::ScalarType dtype);

// softmax(q kᵀ · scale + bias) v, with `bias` broadcastable to [B, H, Sq, Sk]
// (undefined = none). Softmax runs in fp32 for reduced-precision inputs.
at::Tensor dense_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias,
                           double scale);

// [batch, seq, heads*dim] <-> [batch, heads, seq, dim]
at::Tensor split_heads(const at::Tensor& x, int64_t heads);
at::Tensor merge_heads(const at::Tensor& x);

}  // namespace semroute
