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
  const int64_t h = c.base.hidden_size, inter = c.base.intermediate_size, hd = c.head_dim;
  const int64_t q_dim = c.base.num_attention_heads * hd, kv_dim = c.num_key_value_heads * hd;
  const double eps = c.rms_norm_eps;
  token_embeddings_ = w.get("embed_tokens.weight", {c.base.vocab_size, h});
  final_norm_ = RmsNorm::load(w, "norm", h, eps, false);
  for (int64_t i = 0; i < c.base.num_hidden_layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    layers_.push_back(Layer{
        c.layer_types[static_cast<size_t>(i)] == kSlidingAttention,
        RmsNorm::load(w, p + "input_layernorm", h, eps, false),
        RmsNorm::load(w, p + "post_attention_layernorm", h, eps, false),
        RmsNorm::load(w, p + "self_attn.q_norm", hd, eps, false),
        RmsNorm::load(w, p + "self_attn.k_norm", hd, eps, false),
        Linear::load(w, p + "self_attn.q_proj", h, q_dim, c.attention_bias),
        Linear::load(w, p + "self_attn.k_proj", h, kv_dim, c.attention_bias),
        Linear::load(w, p + "self_attn.v_proj", h, kv_dim, c.attention_bias),
        Linear::load(w, p + "self_attn.o_proj", q_dim, h, false),
        Linear::load(w, p + "mlp.gate_proj", h, inter, false),
        Linear::load(w, p + "mlp.up_proj", h, inter, false),
        Linear::load(w, p + "mlp.down_proj", inter, h, false),
    });
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
    const at::Tensor normed = layer.input_norm(x);
    PackedAttention spec{heads, kv_heads, hd, scale};
    spec.pattern = AttentionPattern{layer.sliding ? *config_.sliding_window - 1 : -1, true};
    spec.block = options.attention_block;
    spec.q_norm = &layer.q_norm;
    spec.k_norm = &layer.k_norm;
    const at::Tensor attention =
        attend_packed(layer.q(normed), layer.k(normed), layer.v(normed), packed.lengths, cos, sin, spec);
    x = x + layer.o(attention);
    const at::Tensor m = layer.post_attention_norm(x);
    x = x + layer.down(activate(activation_, layer.gate(m)) * layer.up(m));
  }
  return packed.scatter(final_norm_(x));
}

}  // namespace semroute
