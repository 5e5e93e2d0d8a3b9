// Gemma3 text encoder (Hugging Face Gemma3TextModel), as EmbeddingGemma uses it:
// embeddings scaled by √hidden, RMSNorm as x·(1 + w) in fp32, norms before and
// after attention and MLP, per-head q/k RMSNorm, attention scale
// query_pre_attn_scalar^-½, grouped/multi-query attention, sliding and full
// layers (`layer_types`, sliding layers with rope_local_base_freq), GELU-tanh
// gated MLP. With use_bidirectional_attention it attends in both directions
// (sliding layers: |q − k| < sliding_window); otherwise causally.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "models/configs.h"
#include "models/core_model.h"
#include "models/layers.h"
#include "models/model_factory.h"
#include "models/task_conventions.h"
#include "models/rope.h"

namespace semroute {

class Gemma3Encoder final : public CoreModel {
 public:
  static std::unique_ptr<CoreModel> create(const ModelSource& source, WeightMap& weights, const LoadOptions& options);

  static std::optional<HeadLayout> head_layout(const ConfigReader& config, TaskKind kind);

  int64_t num_layers() const override { return static_cast<int64_t>(layers_.size()); }
  LayerState embed(const ModelInputs& inputs) const override;
  void run_range(LayerState& state, const LayerRange& range) const override;
  at::Tensor finish(const LayerState& state, int64_t group) const override;
  const Gemma3TextConfig& gemma3_config() const { return config_; }

 private:
  struct Layer {
    bool sliding;
    RmsNorm input_norm, post_attention_norm, pre_mlp_norm, post_mlp_norm;
    GatedProjections proj;
  };

  explicit Gemma3Encoder(Gemma3TextConfig config, const LoadOptions& options);
  void load(WeightMap& weights);

  Gemma3TextConfig config_;
  Activation activation_;
  at::Tensor token_embeddings_;
  RmsNorm final_norm_;
  std::vector<Layer> layers_;
  RotaryEmbedding global_rope_, local_rope_;
};

}  // namespace semroute
