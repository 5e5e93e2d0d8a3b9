#include "models/qwen3.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/embedding.h>
#include <c10/core/InferenceMode.h>

#include <cmath>

#include "models/attention.h"
#include "models/packed_sequences.h"

namespace semroute {

Qwen3Encoder::Qwen3Encoder(Qwen3Config config, const LoadOptions& options)
    : CoreModel(config.base, options),
      config_(std::move(config)),
      activation_(parse_activation(config_.hidden_act)),
      rope_(config_.rope, config_.head_dim, config_.base.max_position_embeddings) {}

std::unique_ptr<CoreModel> Qwen3Encoder::create(const ModelSource& source, WeightMap& weights,
                                                const LoadOptions& options) {
  std::unique_ptr<Qwen3Encoder> model(new Qwen3Encoder(Qwen3Config::parse(source.config), options));
  model->load(weights);
  return model;
}

// Qwen3ForSequenceClassification scores the last real token with `score`
// (no bias); Qwen3ForTokenClassification scores every token (with bias).
std::optional<HeadLayout> Qwen3Encoder::head_layout(const ConfigReader&, TaskKind kind) {
  HeadLayout head;
  head.pooling = Pooling::kLastToken;
  head.classifier = "score";
  head.classifier_bias = kind == TaskKind::kToken;
  return head;
}

void Qwen3Encoder::load(WeightMap& w) {
  const auto& c = config_;
  const int64_t h = c.base.hidden_size;
  const GatedProjections::Shape shape{h,      c.base.num_attention_heads, c.num_key_value_heads, c.head_dim,
                                      c.base.intermediate_size, c.rms_norm_eps, c.attention_bias, false, false};
  token_embeddings_ = w.get("embed_tokens.weight", {c.base.vocab_size, h});
  final_norm_ = RmsNorm::load(w, "norm", h, c.rms_norm_eps, false);
  for (int64_t i = 0; i < c.base.num_hidden_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    layers_.push_back(Layer{c.layer_types[static_cast<size_t>(i)] == kSlidingAttention,
                            RmsNorm::load(w, p + "input_layernorm", h, c.rms_norm_eps, false),
                            RmsNorm::load(w, p + "post_attention_layernorm", h, c.rms_norm_eps, false),
                            GatedProjections::load(w, p, shape)});
  }
}

LayerState Qwen3Encoder::embed(const ModelInputs& inputs) const {
  check_inputs(inputs);
  c10::InferenceMode guard;
  LayerState state;
  state.packed = PackedSequences::from_mask(inputs.attention_mask);
  state.hidden = at::embedding(token_embeddings_, state.packed.gather(inputs.input_ids));
  return state;
}

void Qwen3Encoder::run_range(LayerState& state, const LayerRange& range) const {
  const int64_t hd = config_.head_dim;
  const auto [cos, sin] = rope_.cos_sin(state.packed.longest(), dtype(), device());
  for (int64_t i = range.begin; i < range.end; ++i) {
    const Layer& layer = layers_[static_cast<size_t>(i)];
    PackedAttention spec{config_.base.num_attention_heads, config_.num_key_value_heads, hd,
                         1.0 / std::sqrt(static_cast<double>(hd))};
    spec.pattern = AttentionPattern{layer.sliding ? *config_.sliding_window - 1 : -1, true};
    spec.block = range.attention_block;
    spec.bf16_products = bf16_attention();
    at::Tensor& x = state.hidden;
    x = x + gated_self_attention(layer.proj, layer.input_norm(x), range.lengths, cos, sin, spec, range.deltas);
    x = x + layer.proj.mlp(activation_, layer.post_attention_norm(x), range.deltas);
  }
}

at::Tensor Qwen3Encoder::finish(const LayerState& state, int64_t group) const {
  c10::InferenceMode guard;
  return state.packed.scatter(final_norm_(state.group(group)));
}

}  // namespace semroute
