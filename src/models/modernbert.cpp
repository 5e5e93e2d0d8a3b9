#include "models/modernbert.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/embedding.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "models/attention.h"
#include "models/packed_sequences.h"
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

// ModernBertForSequenceClassification / …ForTokenClassification: the same
// head (dense → activation → norm) before the classifier, pooled for sequences.
std::optional<HeadLayout> ModernBertEncoder::head_layout(const ConfigReader& config, TaskKind) {
  const ModernBertConfig c = ModernBertConfig::parse(config);
  HeadLayout head;
  head.pooling = parse_pooling(c.classifier_pooling);
  head.dense = "head.dense";
  head.dense_bias = c.classifier_bias;
  head.activation = parse_activation(c.classifier_activation);
  head.norm = "head.norm";
  head.norm_eps = c.norm_eps;
  head.norm_bias = c.norm_bias;
  head.transform_optional = true;
  return head;
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

PackedAttention ModernBertEncoder::attention_spec(const Layer& layer, int64_t block) const {
  const int64_t heads = config_.base.num_attention_heads, hd = config_.head_dim();
  PackedAttention spec{heads, heads, hd, 1.0 / std::sqrt(static_cast<double>(hd))};
  spec.pattern = AttentionPattern{layer.global ? -1 : config_.local_attention / 2, false};
  spec.block = block;
  spec.bf16_products = bf16_attention();
  return spec;
}

// The norms and the GeGLU reach their products as passes (GemmInput): made
// and quantized together on the int8 path.
GemmInput ModernBertEncoder::attention_input(const Layer& layer, const at::Tensor& x) {
  return layer.has_attn_norm ? layer.attn_norm.rows(x) : GemmInput(x);
}

at::Tensor ModernBertEncoder::run_layer_in_steps(const Layer& layer, const at::Tensor& x, const LayerRange& range,
                                                 const Rope& rope) const {
  const auto qkv = layer.wqkv(attention_input(layer, x), range.deltas).chunk(3, -1);
  const at::Tensor attention = attend_packed(qkv[0], qkv[1], qkv[2], range.lengths, rope.cos(layer.global),
                                             rope.sin(layer.global), attention_spec(layer, range.attention_block));
  if (auto passes = tail_passes(layer, x, attention, range.deltas)) {
    parallel_passes(std::move(passes->passes));
    return passes->out;
  }
  const at::Tensor h = layer.wo.add_to(x, attention, range.deltas);
  const auto input_gate = layer.wi(layer.mlp_norm.rows(h), range.deltas).chunk(2, -1);
  return layer.mlp_wo.add_to(h, gated_activation_rows(activation_, input_gate[0], input_gate[1]), range.deltas);
}

// A layer in one region instead of five (each region's start and end ~3 µs
// on 2 vCPUs): every pass reads what the passes before it wrote.
std::optional<ModernBertEncoder::LayerPasses> ModernBertEncoder::layer_passes(const Layer& layer, const at::Tensor& x,
                                                                              const LayerRange& range,
                                                                              const Rope& rope) const {
  auto qkv = layer.wqkv.passes(attention_input(layer, x), at::Tensor(), range.deltas);
  if (!qkv) return std::nullopt;
  const auto parts = qkv->y.chunk(3, -1);
  PackedAttention spec = attention_spec(layer, range.attention_block);
  spec.arriving_panel = layer.wqkv.panel_columns();
  auto attention = attend_packed_pass(parts[0], parts[1], parts[2], range.lengths, rope.cos(layer.global),
                                      rope.sin(layer.global), spec);
  if (!attention) return std::nullopt;
  // q, k and v rotated and packed by panel as the product writes them, where it can.
  *qkv->finish = attention->arrive;
  auto tail = tail_passes(layer, x, attention->out, range.deltas);
  if (!tail) return std::nullopt;
  LayerPasses whole{tail->out, {std::move(qkv->quantize), std::move(qkv->multiply)}};
  for (auto* passes : {&attention->passes, &tail->passes})
    std::move(passes->begin(), passes->end(), std::back_inserter(whole.passes));
  return whole;
}

// The passes of the three products (each quantizing its input, then
// multiplying), their inputs planned as passes that read what the pass
// before wrote (h, then Wi's output); a norm or an activation that would be
// computed now instead (other dtypes) ends the plan first.
std::optional<ModernBertEncoder::LayerPasses> ModernBertEncoder::tail_passes(const Layer& layer, const at::Tensor& x,
                                                                             const at::Tensor& attention,
                                                                             const LinearDeltas* deltas) const {
  const auto output = layer.wo.passes(GemmInput(attention), x, deltas);
  if (!output || !layer.mlp_norm.rows_made_for(output->y)) return std::nullopt;
  const auto input_gate = layer.wi.passes(layer.mlp_norm.rows(output->y), at::Tensor(), deltas);
  if (!input_gate) return std::nullopt;
  const auto parts = input_gate->y.chunk(2, -1);
  if (!gated_activation_fuses(parts[0], parts[1])) return std::nullopt;
  const auto mlp = layer.mlp_wo.passes(gated_activation_rows(activation_, parts[0], parts[1]), output->y, deltas);
  if (!mlp) return std::nullopt;
  return LayerPasses{mlp->y,
                     {output->quantize, output->multiply, input_gate->quantize, input_gate->multiply, mlp->quantize,
                      mlp->multiply}};
}

LayerState ModernBertEncoder::embed(const ModelInputs& inputs) const {
  check_inputs(inputs);
  c10::InferenceMode guard;
  LayerState state;
  state.packed = PackedSequences::from_mask(inputs.attention_mask);
  state.hidden = embedding_norm_(at::embedding(token_embeddings_, state.packed.gather(inputs.input_ids)));
  return state;
}

namespace {
constexpr int64_t kPlanAheadTokens = 1024;  // below: layers planned ahead, in one region
}  // namespace

void ModernBertEncoder::run_range(LayerState& state, const LayerRange& range) const {
  Rope rope;
  std::tie(rope.cos_global, rope.sin_global) = global_rope_.cos_sin(state.packed.longest(), dtype(), device());
  std::tie(rope.cos_local, rope.sin_local) = local_rope_.cos_sin(state.packed.longest(), dtype(), device());
  const auto plan = [&](int64_t i, const at::Tensor& x) {
    return layer_passes(layers_[static_cast<size_t>(i)], x, range, rope);
  };
  int64_t unplannable = -1;  // a layer whose plan, made in the region before, had no passes
  // A plan allocates its layer's activations (~35 KB a token): planned while
  // the layer before runs, two layers' are held at once. Long inputs, where
  // that is memory and the planning's few µs are nothing, plan each layer
  // once the one before has ended (8,192 tokens: peak RSS 1.14 -> 0.81 GB).
  const bool plan_ahead = state.hidden.size(0) <= kPlanAheadTokens;
  for (int64_t i = range.begin; i < range.end; ++i) {
    std::optional<LayerPasses> layer = i == unplannable ? std::nullopt : plan(i, state.hidden);
    if (!layer) {
      state.hidden = run_layer_in_steps(layers_[static_cast<size_t>(i)], state.hidden, range, rope);
      continue;
    }
    // This layer and the ones after it as one region (short inputs): a plan
    // reads only shapes, so each next layer is planned while the team runs this one.
    at::Tensor out = layer->out;
    parallel_pass_batches(std::move(layer->passes), [&]() -> std::optional<PassBatch> {
      if (i + 1 == range.end || !plan_ahead) return std::nullopt;
      std::optional<LayerPasses> next = plan(i + 1, out);
      if (!next) {
        unplannable = i + 1;
        return std::nullopt;
      }
      ++i;
      out = next->out;
      return std::move(next->passes);
    });
    state.hidden = out;
  }
}

at::Tensor ModernBertEncoder::finish(const LayerState& state, int64_t group) const {
  c10::InferenceMode guard;
  return state.packed.scatter(final_norm_(state.group(group)));
}

}  // namespace semroute
