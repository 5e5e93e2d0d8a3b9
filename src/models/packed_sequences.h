// The unpadded ("packed") form every backend computes in: the real tokens of
// a padded batch laid end to end, with each sequence's length. Linear layers
// run on all tokens at once; attention runs per sequence.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <optional>
#include <vector>

#include "models/attention.h"
#include "models/attention_cpu.h"
#include "models/layers.h"

namespace semroute {

struct PackedSequences {
  at::Tensor positions;          // flat indices of the real tokens in [batch * seq]
  std::vector<int64_t> lengths;  // per non-empty row, in order
  int64_t batch = 0, seq = 0;

  static PackedSequences from_mask(const at::Tensor& attention_mask);
  int64_t longest() const;
  at::Tensor gather(const at::Tensor& per_position) const;  // [batch, seq, ...] -> [tokens, ...]
  // [tokens, hidden] -> [batch, seq, hidden], zeros at padding.
  at::Tensor scatter(const at::Tensor& packed) const;
  // Each real token's position inside its own sequence (0, 1, …, L−1).
  at::Tensor positions_in_sequence() const;
};

// Runs `attend(offset, n, length)` over packed rows: n sequences of `length`
// tokens starting at row `offset`, returning their [n * length, out] rows.
// Called once for all sequences when their lengths are equal, else sequence
// by sequence; `lengths` must not be empty.
at::Tensor for_each_sequence(const std::vector<int64_t>& lengths,
                             const std::function<at::Tensor(int64_t, int64_t, int64_t)>& attend);

// Multi-head (or grouped-query) self-attention over packed projections
// q [tokens, heads * head_dim] and k, v [tokens, kv_heads * head_dim]: per
// sequence, optional per-head RMSNorm of q and k, RoPE from `cos`/`sin`
// ([positions, head_dim]), then blocked attention. Returns [tokens, heads * head_dim].
struct PackedAttention {
  PackedAttention(int64_t heads, int64_t kv_heads, int64_t head_dim, double scale)
      : heads(heads), kv_heads(kv_heads), head_dim(head_dim), scale(scale) {}

  int64_t heads;
  int64_t kv_heads;
  int64_t head_dim;
  double scale;
  AttentionPattern pattern;
  int64_t block = 0;
  double softcap = 0;
  const RmsNorm* q_norm = nullptr;
  const RmsNorm* k_norm = nullptr;
  bool bf16_products = false;  // see attention_cpu_packed
  // For attend_packed_pass: q, k and v arrive by panels of this many
  // columns (attention_cpu_packed_pass); 0: whole, when its passes run.
  int64_t arriving_panel = 0;
};

at::Tensor attend_packed(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         const std::vector<int64_t>& lengths, const at::Tensor& cos, const at::Tensor& sin,
                         const PackedAttention& spec);
// attend_packed as a pass of a region that runs others too, reading q, k
// and v only as it runs (attention_cpu_packed_pass): none where it would run
// elsewhere or read them first (per-head norms, and attention_cpu_packed_pass's cases).
std::optional<AttentionPass> attend_packed_pass(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                const std::vector<int64_t>& lengths, const at::Tensor& cos,
                                                const at::Tensor& sin, const PackedAttention& spec);

// The self-attention of a Llama-family layer (Qwen3, Gemma3) on its normed
// input: q/k/v projections, per-head q/k norms, attend_packed, o_proj.
at::Tensor gated_self_attention(const GatedProjections& p, const at::Tensor& normed, const std::vector<int64_t>& lengths,
                                const at::Tensor& cos, const at::Tensor& sin, PackedAttention spec,
                                const LinearDeltas* deltas);

}  // namespace semroute
