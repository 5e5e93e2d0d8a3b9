// ModernBERT and mmBERT (Hugging Face ModernBertModel): pre-norm layers with a
// fused QKV projection, RoPE (separate θ for global and local layers),
// alternating global / sliding-window attention and a GeGLU MLP, bias-free
// norms by default. mmBERT is the same architecture with another vocabulary
// and θ, and loads through the same code.
//
// Sequences are processed unpadded: the linear layers run on the packed real
// tokens of the whole batch, attention runs per sequence (or batched when
// all lengths are equal) with memory-bounded blocked kernels.
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

class ModernBertEncoder final : public CoreModel {
 public:
  static std::unique_ptr<CoreModel> create(const ModelSource& source, WeightMap& weights, const LoadOptions& options);

  const ModernBertConfig& modernbert_config() const { return config_; }
  static std::optional<HeadLayout> head_layout(const ConfigReader& config, TaskKind kind);

  int64_t num_layers() const override { return static_cast<int64_t>(layers_.size()); }
  LayerState embed(const ModelInputs& inputs) const override;
  void run_range(LayerState& state, const LayerRange& range) const override;
  at::Tensor finish(const LayerState& state, int64_t group) const override;

 private:
  struct Layer {
    bool global;
    bool has_attn_norm;
    LayerNorm attn_norm, mlp_norm;
    Linear wqkv, wo, wi, mlp_wo;
  };

  explicit ModernBertEncoder(ModernBertConfig config, const LoadOptions& options);
  void load(WeightMap& weights);
  struct Rope {
    at::Tensor cos_global, sin_global, cos_local, sin_local;
    const at::Tensor& cos(bool global) const { return global ? cos_global : cos_local; }
    const at::Tensor& sin(bool global) const { return global ? sin_global : sin_local; }
  };
  PackedAttention attention_spec(const Layer& layer, int64_t block) const;
  static GemmInput attention_input(const Layer& layer, const at::Tensor& x);
  // A layer's work as passes of a parallel region (a batch of
  // parallel_pass_batches), where its products run on our int8 kernel:
  // `out` once they have run.
  struct LayerPasses {
    at::Tensor out;
    std::vector<ParallelPass> passes;
  };
  // One layer over packed tokens x [tokens, hidden] (range.lengths): as
  // passes (layer_passes, run by run_range in one region with the layers
  // around it), or else step by step.
  at::Tensor run_layer_in_steps(const Layer& layer, const at::Tensor& x, const LayerRange& range,
                                const Rope& rope) const;
  // The whole layer: Wqkv, the attention, then tail_passes; none where one
  // of them has no passes (attend_packed_pass, Linear::passes).
  std::optional<LayerPasses> layer_passes(const Layer& layer, const at::Tensor& x, const LayerRange& range,
                                          const Rope& rope) const;
  // h = x + Wo(attention), then h + its MLP; none where a product has no passes.
  std::optional<LayerPasses> tail_passes(const Layer& layer, const at::Tensor& x, const at::Tensor& attention,
                                         const LinearDeltas* deltas) const;

  ModernBertConfig config_;
  Activation activation_;
  at::Tensor token_embeddings_;
  LayerNorm embedding_norm_, final_norm_;
  std::vector<Layer> layers_;
  RotaryEmbedding global_rope_, local_rope_;
};

}  // namespace semroute
