#include "models/attention.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/softmax.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <limits>

namespace semroute {
namespace {

double lowest(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::kHalf: return static_cast<double>(std::numeric_limits<c10::Half>::lowest());
    case c10::kBFloat16: return static_cast<double>(std::numeric_limits<c10::BFloat16>::lowest());
    case c10::kDouble: return std::numeric_limits<double>::lowest();
    default: return static_cast<double>(std::numeric_limits<float>::lowest());
  }
}

}  // namespace

at::Tensor key_padding_bias(const at::Tensor& attention_mask, c10::ScalarType dtype) {
  const at::Tensor padding = attention_mask.eq(0).view({attention_mask.size(0), 1, 1, attention_mask.size(1)});
  return padding.to(dtype) * lowest(dtype);
}

at::Tensor dense_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias,
                           double scale) {
  at::Tensor scores = at::matmul(q, k.transpose(-2, -1)) * scale;
  if (bias.defined()) scores = scores + bias;
  const bool reduced = scores.scalar_type() == c10::kHalf || scores.scalar_type() == c10::kBFloat16;
  const at::Tensor probs = reduced ? at::softmax(scores, -1, c10::kFloat).to(v.scalar_type()) : at::softmax(scores, -1);
  return at::matmul(probs, v);
}

at::Tensor split_heads(const at::Tensor& x, int64_t heads) {
  return x.view({x.size(0), x.size(1), heads, -1}).transpose(1, 2);
}

at::Tensor merge_heads(const at::Tensor& x) {
  return x.transpose(1, 2).reshape({x.size(0), x.size(2), -1});
}

}  // namespace semroute
