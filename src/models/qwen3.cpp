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

at::Tensor Qwen3Encoder::forward(const ModelInputs& inputs, const ForwardOptions& options) const {
  check_inputs(inputs);
  const int64_t layers = layers_to_run(options, static_cast<int64_t>(layers_.size()));
  c10::InferenceMode guard;
  const PackedSequences packed = PackedSequences::from_mask(inputs.attention_mask);
  const int64_t heads = config_.base.num_attention_heads, kv_heads = config_.num_key_value_heads;
  const int64_t hd = config_.head_dim;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  const auto [cos, sin] = rope_.cos_sin(packed.longest(), dtype(), device());

  at::Tensor x = at::embedding(token_embeddings_, packed.gather(inputs.input_ids));
  for (int64_t i = 0; i < layers; ++i) {
    const Layer& layer = layers_[static_cast<size_t>(i)];
    PackedAttention spec{heads, kv_heads, hd, scale};
    spec.pattern = AttentionPattern{layer.sliding ? *config_.sliding_window - 1 : -1, true};
    spec.block = options.attention_block;
    x = x + gated_self_attention(layer.proj, layer.input_norm(x), packed.lengths, cos, sin, spec, options.deltas);
    x = x + layer.proj.mlp(activation_, layer.post_attention_norm(x), options.deltas);
  }
  return packed.scatter(final_norm_(x));
}

}  // namespace semroute
