#include "models/packed_sequences.h"

#include "models/attention_cpu.h"
#include "models/rope.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/zeros.h>

#include <algorithm>

namespace semroute {

PackedSequences PackedSequences::from_mask(const at::Tensor& attention_mask) {
  PackedSequences p;
  p.batch = attention_mask.size(0);
  p.seq = attention_mask.size(1);
  const at::Tensor mask = attention_mask.ne(0);
  p.positions = mask.flatten().nonzero().squeeze(1);
  const at::Tensor per_row = mask.sum(1).cpu();
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t n = per_row[b].item<int64_t>();
    if (n > 0) p.lengths.push_back(n);  // an all-padding row contributes nothing
  }
  return p;
}

int64_t PackedSequences::longest() const {
  return lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
}

at::Tensor PackedSequences::gather(const at::Tensor& per_position) const {
  return per_position.flatten(0, 1).index_select(0, positions);
}

at::Tensor PackedSequences::scatter(const at::Tensor& packed) const {
  at::Tensor out = at::zeros({batch * seq, packed.size(-1)}, packed.options());
  if (packed.numel() > 0) out.index_copy_(0, positions, packed);
  return out.view({batch, seq, -1});
}

at::Tensor PackedSequences::positions_in_sequence() const {
  std::vector<at::Tensor> parts;
  for (int64_t length : lengths) parts.push_back(at::arange(length, positions.options()));
  return parts.empty() ? positions.new_empty({0}) : at::cat(parts, 0);
}

at::Tensor for_each_sequence(const std::vector<int64_t>& lengths,
                             const std::function<at::Tensor(int64_t, int64_t, int64_t)>& attend) {
  const bool uniform = std::all_of(lengths.begin(), lengths.end(), [&](int64_t l) { return l == lengths[0]; });
  if (uniform) return attend(0, static_cast<int64_t>(lengths.size()), lengths[0]);
  std::vector<at::Tensor> outputs;
  int64_t offset = 0;
  for (int64_t length : lengths) {
    outputs.push_back(attend(offset, 1, length));
    offset += length;
  }
  return at::cat(outputs, 0);
}

at::Tensor attend_packed(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         const std::vector<int64_t>& lengths, const at::Tensor& cos, const at::Tensor& sin,
                         const PackedAttention& spec) {
  if (lengths.empty()) return q;  // nothing but padding
  const int64_t q_width = spec.heads * spec.head_dim;
  // [rows, count * head_dim] -> [rows, count, head_dim] (a view), per-head norm applied.
  const auto heads_of = [&](const at::Tensor& x, int64_t count, const RmsNorm* norm) {
    const at::Tensor h = x.view({x.size(0), count, spec.head_dim});
    return norm != nullptr ? (*norm)(h) : h;
  };
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  const auto rope_rows = [](const at::Tensor& table, int64_t length) {
    return table.defined() ? table.narrow(0, 0, length) : table;
  };
  if (q.device().is_cpu() && spec.block < longest)  // the CPU kernel: the whole batch at once, whatever its lengths
    return attention_cpu_packed(heads_of(q, spec.heads, spec.q_norm), heads_of(k, spec.kv_heads, spec.k_norm),
                                heads_of(v, spec.kv_heads, nullptr), lengths, rope_rows(cos, longest),
                                rope_rows(sin, longest), spec.scale, spec.pattern, spec.block, spec.softcap,
                                spec.bf16_products);
  return for_each_sequence(lengths, [&](int64_t offset, int64_t n, int64_t length) {
    // These sequences' rows as [n, L, count, head_dim].
    const auto sequences_of = [&](const at::Tensor& x, int64_t count, const RmsNorm* norm) {
      return heads_of(x.narrow(0, offset, n * length), count, norm).view({n, length, count, spec.head_dim});
    };
    const at::Tensor qh = sequences_of(q, spec.heads, spec.q_norm), kh = sequences_of(k, spec.kv_heads, spec.k_norm);
    const at::Tensor vh = sequences_of(v, spec.kv_heads, nullptr);
    const at::Tensor c = rope_rows(cos, length), s = rope_rows(sin, length);
    // Elsewhere (and for the one-shot reference): tensor ops, head-major.
    at::Tensor qt = qh.transpose(1, 2), kt = kh.transpose(1, 2);
    if (c.defined()) {
      qt = RotaryEmbedding::apply(qt, c, s);
      kt = RotaryEmbedding::apply(kt, c, s);
    }
    return blocked_attention(qt, kt, vh.transpose(1, 2), spec.scale, spec.pattern, spec.block, spec.softcap)
        .transpose(1, 2)
        .reshape({n * length, q_width});
  });
}

std::optional<AttentionPass> attend_packed_pass(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                const std::vector<int64_t>& lengths, const at::Tensor& cos,
                                                const at::Tensor& sin, const PackedAttention& spec) {
  if (lengths.empty() || spec.q_norm != nullptr || spec.k_norm != nullptr || !q.device().is_cpu()) return std::nullopt;
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  if (spec.block >= longest) return std::nullopt;  // attend_packed's tensor path
  const auto heads_of = [&](const at::Tensor& x, int64_t count) { return x.view({x.size(0), count, spec.head_dim}); };
  const auto rope_rows = [&](const at::Tensor& table) { return table.defined() ? table.narrow(0, 0, longest) : table; };
  return attention_cpu_packed_pass(heads_of(q, spec.heads), heads_of(k, spec.kv_heads), heads_of(v, spec.kv_heads),
                                   lengths, rope_rows(cos), rope_rows(sin), spec.scale, spec.pattern, spec.block,
                                   spec.softcap, spec.bf16_products, spec.arriving_panel);
}

at::Tensor gated_self_attention(const GatedProjections& p, const at::Tensor& normed, const std::vector<int64_t>& lengths,
                                const at::Tensor& cos, const at::Tensor& sin, PackedAttention spec,
                                const LinearDeltas* deltas) {
  spec.q_norm = &p.q_norm;
  spec.k_norm = &p.k_norm;
  const auto qkv = p.qkv(normed, deltas);
  const at::Tensor attention = attend_packed(qkv[0], qkv[1], qkv[2], lengths, cos, sin, spec);
  return p.o(attention, deltas);
}

}  // namespace semroute
