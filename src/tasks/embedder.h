// Sentence embeddings from any encoder: pooling over real tokens, optional
// early exit after layer k (the final norm still applied), optional L2
// normalization, and Matryoshka truncation to the first `dimension` values
// (re-normalized when normalization is on). The router's "2D Matryoshka"
// embeddings are (layer, dimension) pairs of this. Immutable; thread-safe.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "models/core_model.h"
#include "tasks/pooling.h"
#include "tokenizers/tokenizer.h"

namespace semroute {

struct EmbeddingOptions {
  Pooling pooling = Pooling::kMean;
  bool normalize = true;
  int64_t dimension = 0;  // 0 = the full hidden size
  int64_t layer = 0;      // 0 = all layers
};

struct EmbedderOptions {
  LoadOptions load;
  size_t max_length = 0;  // 0 = the model's limit
  Keep truncation = Keep::kStart;
  std::filesystem::path tokenizer;  // when not beside the model
  EmbeddingOptions defaults;
};

class Embedder {
 public:
  static std::shared_ptr<const Embedder> load(const std::filesystem::path& dir, const EmbedderOptions& options = {});

  // [texts, dimension] float32 on CPU.
  at::Tensor embed(const std::vector<std::string_view>& texts) const { return embed(texts, defaults_); }
  at::Tensor embed(const std::vector<std::string_view>& texts, const EmbeddingOptions& options) const;
  // Pools already tokenized inputs.
  at::Tensor embed_inputs(const ModelInputs& inputs, const EmbeddingOptions& options) const;

  int64_t hidden_size() const { return encoder_->hidden_size(); }
  const CoreModel& encoder() const { return *encoder_; }

 private:
  Embedder() = default;

  std::shared_ptr<const Tokenizer> tokenizer_;
  std::shared_ptr<const CoreModel> encoder_;
  EncodeOptions encode_;
  EmbeddingOptions defaults_;
};

// L2-normalizes rows; zero rows stay zero.
at::Tensor l2_normalize(const at::Tensor& x);
// First `dimension` columns, re-normalized when `normalize`.
at::Tensor matryoshka(const at::Tensor& embeddings, int64_t dimension, bool normalize);

}  // namespace semroute
