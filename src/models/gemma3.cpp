#include "models/gemma3.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/embedding.h>
#include <ATen/ops/scalar_tensor.h>
#include <c10/core/InferenceMode.h>

#include <cmath>

#include "models/attention.h"
#include "models/packed_sequences.h"

namespace semroute {
namespace {

RopeParams unscaled(RopeParams params) {
  params.scaling = RopeScaling{};
  return params;
}

}  // namespace

Gemma3Encoder::Gemma3Encoder(Gemma3TextConfig config, const LoadOptions& options)
    : CoreModel(config.base, options),
      config_(std::move(config)),
      activation_(parse_activation(config_.hidden_activation)),
      global_rope_(config_.global_rope, config_.head_dim, config_.base.max_position_embeddings),
      // Sliding layers use plain RoPE at the local base frequency.
      local_rope_(unscaled(config_.local_rope), config_.head_dim, config_.base.max_position_embeddings) {}

std::unique_ptr<CoreModel> Gemma3Encoder::create(const ModelSource& source, WeightMap& weights,
                                                 const LoadOptions& options) {
  std::unique_ptr<Gemma3Encoder> model(new Gemma3Encoder(Gemma3TextConfig::parse(source.config), options));
  model->load(weights);
  return model;
}

void Gemma3Encoder::load(WeightMap& w) {
  const auto& c = config_;
  const int64_t h = c.base.hidden_size;
  const double eps = c.rms_norm_eps;
  const GatedProjections::Shape shape{h,   c.base.num_attention_heads, c.num_key_value_heads, c.head_dim,
                                      c.base.intermediate_size, eps, c.attention_bias, c.attention_bias, true};
  token_embeddings_ = w.get("embed_tokens.weight", {c.base.vocab_size, h});
  final_norm_ = RmsNorm::load(w, "norm", h, eps, true);
  for (int64_t i = 0; i < c.base.num_hidden_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    layers_.push_back(Layer{c.layer_types[static_cast<size_t>(i)] == kSlidingAttention,
                            RmsNorm::load(w, p + "input_layernorm", h, eps, true),
                            RmsNorm::load(w, p + "post_attention_layernorm", h, eps, true),
                            RmsNorm::load(w, p + "pre_feedforward_layernorm", h, eps, true),
                            RmsNorm::load(w, p + "post_feedforward_layernorm", h, eps, true),
                            GatedProjections::load(w, p, shape)});
  }
}

at::Tensor Gemma3Encoder::forward(const ModelInputs& inputs, const ForwardOptions& options) const {
  check_inputs(inputs);
  const int64_t layers = layers_to_run(options, static_cast<int64_t>(layers_.size()));
  c10::InferenceMode guard;
  const PackedSequences packed = PackedSequences::from_mask(inputs.attention_mask);
  const int64_t heads = config_.base.num_attention_heads, kv_heads = config_.num_key_value_heads;
  const int64_t hd = config_.head_dim;
  const double scale = 1.0 / std::sqrt(config_.query_pre_attn_scalar);
  const double softcap = config_.attn_logit_softcapping.value_or(0.0);
  const bool causal = !config_.use_bidirectional_attention;
  const auto [cos_global, sin_global] = global_rope_.cos_sin(packed.longest(), dtype(), device());
  const auto [cos_local, sin_local] = local_rope_.cos_sin(packed.longest(), dtype(), device());

  // The √hidden scale is a tensor of the model dtype in HF (rounded in bf16).
  const at::Tensor embed_scale =
      at::scalar_tensor(std::sqrt(static_cast<double>(config_.base.hidden_size)), at::TensorOptions().dtype(dtype()));
  at::Tensor x = at::embedding(token_embeddings_, packed.gather(inputs.input_ids)) * embed_scale.to(device());
  for (int64_t i = 0; i < layers; ++i) {
    const Layer& layer = layers_[static_cast<size_t>(i)];
    PackedAttention spec{heads, kv_heads, hd, scale};
    // Sliding: attend iff |q − k| < sliding_window, i.e. a radius of window − 1.
    spec.pattern = AttentionPattern{layer.sliding ? config_.sliding_window - 1 : -1, causal};
    spec.block = options.attention_block;
    spec.softcap = softcap;
    const at::Tensor attention =
        gated_self_attention(layer.proj, layer.input_norm(x), packed.lengths, layer.sliding ? cos_local : cos_global,
                             layer.sliding ? sin_local : sin_global, spec, options.deltas);
    x = x + layer.post_attention_norm(attention);
    x = x + layer.post_mlp_norm(layer.proj.mlp(activation_, layer.pre_mlp_norm(x), options.deltas));
  }
  return packed.scatter(final_norm_(x));
}

}  // namespace semroute
