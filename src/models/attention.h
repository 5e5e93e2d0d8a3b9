// Attention kernels shared by the backends. q, k, v are [batch, heads, seq, head_dim].
#pragma once

#include <ATen/core/Tensor.h>

namespace semroute {

// Which keys a query may see: all (window < 0) or those with |i - j| <=
// window; with `causal`, only keys at or before the query as well.
struct AttentionPattern {
  int64_t window = -1;
  bool causal = false;
};

// Memory-bounded attention over unpadded sequences: q, k, v are
// [..., heads, length, head_dim] with every position real (k and v may have
// fewer heads: grouped-query attention). Queries are processed in blocks,
// and a block only looks at the keys its pattern reaches, so neither an S×S
// mask nor an S×S score tensor is ever built. On the CPU the blocks run in
// one fused kernel (attention_cpu.h); elsewhere as tensor ops, with blocks
// sized so their scores stay within a few MB. `block` > 0 forces the block
// size; block >= length gives the one-shot eager computation, the reference
// the tests compare the kernels with. `softcap` > 0 applies
// cap·tanh(score / cap) to the scores (Gemma).
at::Tensor blocked_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double scale,
                             AttentionPattern pattern, int64_t block = 0, double softcap = 0);

// [batch, seq, heads*dim] <-> [batch, heads, seq, dim]
at::Tensor split_heads(const at::Tensor& x, int64_t heads);
at::Tensor merge_heads(const at::Tensor& x);

}  // namespace semroute
