#include "models/bert.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/embedding.h>
#include <c10/core/InferenceMode.h>

#include <cmath>

#include "models/packed_sequences.h"

namespace semroute {

BertEncoder::BertEncoder(BertConfig config, const LoadOptions& options)
    : CoreModel(config.base, options), config_(std::move(config)), activation_(parse_activation(config_.hidden_act)) {}

std::unique_ptr<CoreModel> BertEncoder::create(const ModelSource& source, WeightMap& weights,
                                               const LoadOptions& options) {
  std::unique_ptr<BertEncoder> model(new BertEncoder(BertConfig::parse(source.config), options));
  model->load(weights);
  return model;
}

// BertForSequenceClassification: tanh(pooler.dense(h[:, 0])) → classifier;
// BertForTokenClassification: the classifier on every token.
std::optional<HeadLayout> BertEncoder::head_layout(const ConfigReader&, TaskKind kind) {
  HeadLayout head;
  head.pooling = Pooling::kCls;
  if (kind == TaskKind::kSequence) {
    head.dense = "bert.pooler.dense";
    head.tanh = true;
  }
  return head;
}

void BertEncoder::load(WeightMap& w) {
  const auto& c = config_.base;
  const int64_t h = c.hidden_size;
  const double eps = config_.layer_norm_eps;
  word_embeddings_ = w.get("embeddings.word_embeddings.weight", {c.vocab_size, h});
  position_embeddings_ = w.get("embeddings.position_embeddings.weight", {c.max_position_embeddings, h});
  token_type_embeddings_ = w.get("embeddings.token_type_embeddings.weight", {config_.type_vocab_size, h});
  embedding_norm_ = LayerNorm::load(w, "embeddings.LayerNorm", h, eps, true);
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    layers_.push_back(Layer{
        FusedLinear::load(w, {p + "attention.self.query", p + "attention.self.key", p + "attention.self.value"}, h,
                          {h, h, h}, true),
        Linear::load(w, p + "attention.output.dense", h, h, true),
        LayerNorm::load(w, p + "attention.output.LayerNorm", h, eps, true),
        Linear::load(w, p + "intermediate.dense", h, c.intermediate_size, true),
        Linear::load(w, p + "output.dense", c.intermediate_size, h, true),
        LayerNorm::load(w, p + "output.LayerNorm", h, eps, true),
    });
  }
}

at::Tensor BertEncoder::run_layer(const Layer& layer, const at::Tensor& x, const std::vector<int64_t>& lengths,
                                  int64_t block, const LinearDeltas* d) const {
  const int64_t heads = config_.base.num_attention_heads, hd = config_.base.hidden_size / heads;
  PackedAttention spec{heads, heads, hd, 1.0 / std::sqrt(static_cast<double>(hd))};
  spec.block = block;
  spec.bf16_products = bf16_attention();
  const auto qkv = layer.qkv(x, d);
  const at::Tensor context = attend_packed(qkv[0], qkv[1], qkv[2], lengths, {}, {}, spec);
  const at::Tensor h = layer.attention_norm(layer.attention_out.add_to(x, context, d));
  return layer.output_norm(layer.output.add_to(h, activate(activation_, layer.intermediate(h, d)), d));
}

LayerState BertEncoder::embed(const ModelInputs& inputs) const {
  check_inputs(inputs);
  if (inputs.token_type_ids.defined()) check_ids_in_range(inputs.token_type_ids, config_.type_vocab_size, "token type");
  c10::InferenceMode guard;
  LayerState state;
  state.packed = PackedSequences::from_mask(inputs.attention_mask);
  const PackedSequences& packed = state.packed;
  // Positions restart at 0 in every text of the batch.
  at::Tensor x = at::embedding(word_embeddings_, packed.gather(inputs.input_ids)) +
                 at::embedding(position_embeddings_, packed.positions_in_sequence());
  x = inputs.token_type_ids.defined() ? x + at::embedding(token_type_embeddings_, packed.gather(inputs.token_type_ids))
                                      : x + token_type_embeddings_[0];
  state.hidden = embedding_norm_(x);
  return state;
}

void BertEncoder::run_range(LayerState& state, const LayerRange& range) const {
  for (int64_t i = range.begin; i < range.end; ++i)
    state.hidden =
        run_layer(layers_[static_cast<size_t>(i)], state.hidden, range.lengths, range.attention_block, range.deltas);
}

// BERT has no final norm: every layer ends in one.
at::Tensor BertEncoder::finish(const LayerState& state, int64_t group) const {
  c10::InferenceMode guard;
  return state.packed.scatter(state.group(group));
}

}  // namespace semroute
