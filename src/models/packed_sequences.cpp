#include "models/packed_sequences.h"

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

at::Tensor for_each_sequence(const at::Tensor& packed, const std::vector<int64_t>& lengths,
                             const std::function<at::Tensor(const at::Tensor&)>& attend) {
  if (lengths.empty()) return packed;  // nothing but padding
  const bool uniform = std::all_of(lengths.begin(), lengths.end(), [&](int64_t l) { return l == lengths[0]; });
  if (uniform) return attend(packed.view({static_cast<int64_t>(lengths.size()), lengths[0], -1}));
  std::vector<at::Tensor> outputs;
  int64_t offset = 0;
  for (int64_t length : lengths) {
    outputs.push_back(attend(packed.narrow(0, offset, length).unsqueeze(0)));
    offset += length;
  }
  return at::cat(outputs, 0);
}

at::Tensor attend_packed(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         const std::vector<int64_t>& lengths, const at::Tensor& cos, const at::Tensor& sin,
                         const PackedAttention& spec) {
  const int64_t q_width = spec.heads * spec.head_dim, kv_width = spec.kv_heads * spec.head_dim;
  const at::Tensor qkv = at::cat({q, k, v}, -1);
  return for_each_sequence(qkv, lengths, [&](const at::Tensor& part) {
    const int64_t n = part.size(0), length = part.size(1);
    const auto pieces = part.split({q_width, kv_width, kv_width}, -1);
    const auto heads_of = [&](const at::Tensor& x, int64_t count, const RmsNorm* norm) {
      const at::Tensor h = x.reshape({n, length, count, spec.head_dim});
      return (norm != nullptr ? (*norm)(h) : h).transpose(1, 2);  // [n, heads, L, head_dim]
    };
    at::Tensor qh = heads_of(pieces[0], spec.heads, spec.q_norm), kh = heads_of(pieces[1], spec.kv_heads, spec.k_norm);
    if (cos.defined()) {
      const at::Tensor c = cos.narrow(0, 0, length), s = sin.narrow(0, 0, length);
      qh = RotaryEmbedding::apply(qh, c, s);
      kh = RotaryEmbedding::apply(kh, c, s);
    }
    const at::Tensor vh = heads_of(pieces[2], spec.kv_heads, nullptr);
    return blocked_attention(qh, kh, vh, spec.scale, spec.pattern, spec.block, spec.softcap)
        .transpose(1, 2)
        .reshape({n * length, q_width});
  });
}

at::Tensor gated_self_attention(const GatedProjections& p, const at::Tensor& normed, const std::vector<int64_t>& lengths,
                                const at::Tensor& cos, const at::Tensor& sin, PackedAttention spec,
                                const LinearDeltas* deltas) {
  spec.q_norm = &p.q_norm;
  spec.k_norm = &p.k_norm;
  const at::Tensor attention =
      attend_packed(p.q(normed, deltas), p.k(normed, deltas), p.v(normed, deltas), lengths, cos, sin, spec);
  return p.o(attention, deltas);
}

}  // namespace semroute
