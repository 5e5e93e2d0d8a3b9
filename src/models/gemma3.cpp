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

// Gemma3TextForSequenceClassification scores the last real token with
// `score` (no bias); Hugging Face has no Gemma3 token-classification class.
std::optional<HeadLayout> Gemma3Encoder::head_layout(const ConfigReader&, TaskKind kind) {
  if (kind != TaskKind::kSequence) return std::nullopt;
  HeadLayout head;
  head.pooling = Pooling::kLastToken;
  head.classifier = "score";
  head.classifier_bias = false;
  return head;
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

LayerState Gemma3Encoder::embed(const ModelInputs& inputs) const {
  check_inputs(inputs);
  c10::InferenceMode guard;
  LayerState state;
  state.packed = PackedSequences::from_mask(inputs.attention_mask);
  // The √hidden scale is a tensor of the model dtype in HF (rounded in bf16).
  const at::Tensor embed_scale =
      at::scalar_tensor(std::sqrt(static_cast<double>(config_.base.hidden_size)), at::TensorOptions().dtype(dtype()));
  state.hidden = at::embedding(token_embeddings_, state.packed.gather(inputs.input_ids)) * embed_scale.to(device());
  return state;
}

void Gemma3Encoder::run_range(LayerState& state, const LayerRange& range) const {
  const int64_t hd = config_.head_dim;
  const auto [cos_global, sin_global] = global_rope_.cos_sin(state.packed.longest(), dtype(), device());
  const auto [cos_local, sin_local] = local_rope_.cos_sin(state.packed.longest(), dtype(), device());
  for (int64_t i = range.begin; i < range.end; ++i) {
    const Layer& layer = layers_[static_cast<size_t>(i)];
    PackedAttention spec{config_.base.num_attention_heads, config_.num_key_value_heads, hd,
                         1.0 / std::sqrt(config_.query_pre_attn_scalar)};
    // Sliding: attend iff |q − k| < sliding_window, i.e. a radius of window − 1.
    spec.pattern = AttentionPattern{layer.sliding ? config_.sliding_window - 1 : -1,
                                    !config_.use_bidirectional_attention};
    spec.block = range.attention_block;
    spec.bf16_products = bf16_attention();
    spec.softcap = config_.attn_logit_softcapping.value_or(0.0);
    at::Tensor& x = state.hidden;
    const at::Tensor attention =
        gated_self_attention(layer.proj, layer.input_norm(x), range.lengths, layer.sliding ? cos_local : cos_global,
                             layer.sliding ? sin_local : sin_global, spec, range.deltas);
    x = x + layer.post_attention_norm(attention);
    x = x + layer.post_mlp_norm(layer.proj.mlp(activation_, layer.pre_mlp_norm(x), range.deltas));
  }
}

at::Tensor Gemma3Encoder::finish(const LayerState& state, int64_t group) const {
  c10::InferenceMode guard;
  return state.packed.scatter(final_norm_(state.group(group)));
}

}  // namespace semroute
