#include "tasks/pooling.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/argmax.h>
#include <ATen/ops/sum.h>

#include "semroute/error.h"

namespace semroute {

at::Tensor cls_pool(const at::Tensor& hidden) { return hidden.select(1, 0); }

at::Tensor mean_pool(const at::Tensor& hidden, const at::Tensor& attention_mask) {
  const at::Tensor mask = attention_mask.to(hidden.scalar_type()).unsqueeze(-1);
  return (hidden * mask).sum(1) / mask.sum(1).clamp_min(1e-9);
}

at::Tensor last_token_pool(const at::Tensor& hidden, const at::Tensor& attention_mask) {
  // Index of the last 1 in each row: argmax over mask * position picks it for
  // right padding (…1 1 0 0) and left padding (0 0 1 1 …) alike.
  const int64_t seq = attention_mask.size(1);
  const at::Tensor positions = at::arange(seq, attention_mask.options().dtype(c10::kLong));
  const at::Tensor last = (attention_mask.to(c10::kLong) * (positions + 1)).argmax(1);
  const at::Tensor rows = at::arange(hidden.size(0), last.options());
  return hidden.index({rows, last});
}

at::Tensor pool(Pooling pooling, const at::Tensor& hidden, const at::Tensor& attention_mask) {
  switch (pooling) {
    case Pooling::kCls: return cls_pool(hidden);
    case Pooling::kMean: return mean_pool(hidden, attention_mask);
    case Pooling::kLastToken: return last_token_pool(hidden, attention_mask);
  }
  throw InternalError("unhandled pooling");
}

}  // namespace semroute
