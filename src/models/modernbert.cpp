#include "models/modernbert.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/embedding.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/zeros.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>

#include "models/attention.h"
#include "semroute/error.h"

namespace semroute {

ModernBertEncoder::ModernBertEncoder(ModernBertConfig config, const LoadOptions& options)
    : CoreModel(config.base, options),
      config_(std::move(config)),
      activation_(parse_activation(config_.hidden_activation)),
      global_rope_(config_.global_rope, config_.head_dim(), config_.base.max_position_embeddings),
      local_rope_(config_.local_rope, config_.head_dim(), config_.base.max_position_embeddings) {}

std::unique_ptr<CoreModel> ModernBertEncoder::create(const ModelSource& source, WeightMap& weights,
                                                     const LoadOptions& options) {
  std::unique_ptr<ModernBertEncoder> model(new ModernBertEncoder(ModernBertConfig::parse(source.config), options));
  model->load(weights);
  return model;
}

void ModernBertEncoder::load(WeightMap& w) {
  const auto& c = config_;
  const int64_t h = c.base.hidden_size, inter = c.base.intermediate_size;
  token_embeddings_ = w.get("embeddings.tok_embeddings.weight", {c.base.vocab_size, h});
  embedding_norm_ = LayerNorm::load(w, "embeddings.norm", h, c.norm_eps, c.norm_bias);
  final_norm_ = LayerNorm::load(w, "final_norm", h, c.norm_eps, c.norm_bias);
  for (int64_t i = 0; i < c.base.num_hidden_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    Layer layer;
    layer.global = c.is_global(i);
    // Layer 0 has no attention norm: the embedding norm precedes it.
    layer.has_attn_norm = i != 0;
    if (layer.has_attn_norm) layer.attn_norm = LayerNorm::load(w, p + "attn_norm", h, c.norm_eps, c.norm_bias);
    layer.wqkv = Linear::load(w, p + "attn.Wqkv", h, 3 * h, c.attention_bias);
    layer.wo = Linear::load(w, p + "attn.Wo", h, h, c.attention_bias);
    layer.mlp_norm = LayerNorm::load(w, p + "mlp_norm", h, c.norm_eps, c.norm_bias);
    layer.wi = Linear::load(w, p + "mlp.Wi", h, 2 * inter, c.mlp_bias);
    layer.mlp_wo = Linear::load(w, p + "mlp.Wo", inter, h, c.mlp_bias);
    layers_.push_back(std::move(layer));
  }
}

namespace {

// Attention for packed qkv [tokens, 3 * hidden] of sequences of `lengths`.
at::Tensor packed_attention(const at::Tensor& qkv, const std::vector<int64_t>& lengths, int64_t heads,
                            const at::Tensor& cos, const at::Tensor& sin, int64_t window, int64_t block) {
  const int64_t head_dim = qkv.size(1) / (3 * heads);
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  // [n, L, 3 * hidden] -> q, k, v [n, heads, L, head_dim] with RoPE applied.
  const auto attend = [&](const at::Tensor& part) {
    const int64_t n = part.size(0), length = part.size(1);
    const at::Tensor split = part.view({n, length, 3, heads, head_dim});
    const at::Tensor c = cos.narrow(0, 0, length), s = sin.narrow(0, 0, length);
    const at::Tensor q = RotaryEmbedding::apply(split.select(2, 0).transpose(1, 2), c, s);
    const at::Tensor k = RotaryEmbedding::apply(split.select(2, 1).transpose(1, 2), c, s);
    const at::Tensor v = split.select(2, 2).transpose(1, 2);
    return blocked_attention(q, k, v, scale, window, block).transpose(1, 2).reshape({n * length, -1});
  };
  const bool uniform = std::all_of(lengths.begin(), lengths.end(), [&](int64_t l) { return l == lengths[0]; });
  if (uniform) return attend(qkv.view({static_cast<int64_t>(lengths.size()), lengths[0], -1}));
  std::vector<at::Tensor> outputs;
  int64_t offset = 0;
  for (int64_t length : lengths) {
    outputs.push_back(attend(qkv.narrow(0, offset, length).unsqueeze(0)));
    offset += length;
  }
  return at::cat(outputs, 0);
}

}  // namespace

at::Tensor ModernBertEncoder::run_layer(const Layer& layer, const at::Tensor& x, const std::vector<int64_t>& lengths,
                                        const at::Tensor& cos_global, const at::Tensor& sin_global,
                                        const at::Tensor& cos_local, const at::Tensor& sin_local,
                                        int64_t block) const {
  const at::Tensor normed = layer.has_attn_norm ? layer.attn_norm(x) : x;
  const int64_t window = layer.global ? -1 : config_.local_attention / 2;
  const at::Tensor attention =
      packed_attention(layer.wqkv(normed), lengths, config_.base.num_attention_heads,
                       layer.global ? cos_global : cos_local, layer.global ? sin_global : sin_local, window, block);
  const at::Tensor h = x + layer.wo(attention);
  const auto input_gate = layer.wi(layer.mlp_norm(h)).chunk(2, -1);
  return h + layer.mlp_wo(activate(activation_, input_gate[0]) * input_gate[1]);
}

at::Tensor ModernBertEncoder::forward(const ModelInputs& inputs, const ForwardOptions& options) const {
  check_inputs(inputs);
  const int64_t layers = layers_to_run(options, static_cast<int64_t>(layers_.size()));
  c10::InferenceMode guard;
  const int64_t batch = inputs.input_ids.size(0), seq = inputs.input_ids.size(1);
  const at::Tensor mask = inputs.attention_mask.ne(0);
  const at::Tensor real = mask.flatten().nonzero().squeeze(1);  // packed positions
  const at::Tensor per_row = mask.sum(1).cpu();
  std::vector<int64_t> lengths;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t n = per_row[b].item<int64_t>();
    if (n > 0) lengths.push_back(n);  // an all-padding row contributes nothing
  }
  at::Tensor out = at::zeros({batch * seq, config_.base.hidden_size},
                             at::TensorOptions().dtype(dtype()).device(device()));
  if (lengths.empty()) return out.view({batch, seq, -1});

  at::Tensor x = embedding_norm_(at::embedding(token_embeddings_, inputs.input_ids.flatten().index_select(0, real)));
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  const auto [cos_global, sin_global] = global_rope_.cos_sin(longest, dtype(), device());
  const auto [cos_local, sin_local] = local_rope_.cos_sin(longest, dtype(), device());
  for (int64_t i = 0; i < layers; ++i)
    x = run_layer(layers_[static_cast<size_t>(i)], x, lengths, cos_global, sin_global, cos_local, sin_local,
                  options.attention_block);
  out.index_copy_(0, real, final_norm_(x));
  return out.view({batch, seq, -1});
}

}  // namespace semroute
