// BERT / MiniLM encoder (Hugging Face BertModel): word + position + token-type
// embeddings, post-LayerNorm layers with GELU MLPs. Serves the legacy BERT
// classifiers and MiniLM sentence embeddings. Runs unpadded, like every
// backend; positions restart at 0 for each text.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "models/configs.h"
#include "models/core_model.h"
#include "models/layers.h"
#include "models/model_factory.h"
#include "models/task_conventions.h"

namespace semroute {

class BertEncoder final : public CoreModel {
 public:
  static std::unique_ptr<CoreModel> create(const ModelSource& source, WeightMap& weights, const LoadOptions& options);

  static std::optional<HeadLayout> head_layout(const ConfigReader& config, TaskKind kind);

  int64_t num_layers() const override { return static_cast<int64_t>(layers_.size()); }
  LayerState embed(const ModelInputs& inputs) const override;
  void run_range(LayerState& state, const LayerRange& range) const override;
  at::Tensor finish(const LayerState& state, int64_t group) const override;
  const BertConfig& bert_config() const { return config_; }

 private:
  struct Layer {
    FusedLinear qkv;  // attention.self.{query,key,value}
    Linear attention_out;
    LayerNorm attention_norm;
    Linear intermediate, output;
    LayerNorm output_norm;
  };

  BertEncoder(BertConfig config, const LoadOptions& options);
  void load(WeightMap& weights);
  at::Tensor run_layer(const Layer& layer, const at::Tensor& x, const std::vector<int64_t>& lengths,
                       int64_t block, const LinearDeltas* deltas) const;

  BertConfig config_;
  Activation activation_;
  at::Tensor word_embeddings_, position_embeddings_, token_type_embeddings_;
  LayerNorm embedding_norm_;
  std::vector<Layer> layers_;
};

}  // namespace semroute
