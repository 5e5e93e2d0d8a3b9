// Qwen3 (Hugging Face Qwen3Model) used as an encoder, as Qwen3-Embedding does:
// RMSNorm pre-norm layers, grouped-query attention with an explicit head_dim,
// per-head RMSNorm of q and k before RoPE, causal attention (optionally
// sliding), SwiGLU MLP, final norm. Sequences run unpadded with positions
// 0..L-1, so left and right padding give the same result for real tokens.
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

class Qwen3Encoder final : public CoreModel {
 public:
  static std::unique_ptr<CoreModel> create(const ModelSource& source, WeightMap& weights, const LoadOptions& options);

  static std::optional<HeadLayout> head_layout(const ConfigReader& config, TaskKind kind);

  int64_t num_layers() const override { return static_cast<int64_t>(layers_.size()); }
  LayerState embed(const ModelInputs& inputs) const override;
  void run_range(LayerState& state, const LayerRange& range) const override;
  at::Tensor finish(const LayerState& state, int64_t group) const override;
  const Qwen3Config& qwen3_config() const { return config_; }

 private:
  struct Layer {
    bool sliding;
    RmsNorm input_norm, post_attention_norm;
    GatedProjections proj;
  };

  explicit Qwen3Encoder(Qwen3Config config, const LoadOptions& options);
  void load(WeightMap& weights);

  Qwen3Config config_;
  Activation activation_;
  at::Tensor token_embeddings_;
  RmsNorm final_norm_;
  std::vector<Layer> layers_;
  RotaryEmbedding rope_;
};

}  // namespace semroute
