// Sentence embeddings from any encoder: pooling over real tokens, optional
// early exit after layer k (the final norm still applied), optional L2
// normalization, and Matryoshka truncation to the first `dimension` values
// (re-normalized when normalization is on). The router's "2D Matryoshka"
// embeddings are (layer, dimension) pairs of this. Immutable; thread-safe.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/core_model.h"
#include "tasks/pooling.h"
#include "tasks/sentence_transformers.h"
#include "tasks/task_model.h"
#include "tokenizers/tokenizer.h"

namespace semroute {

struct EmbeddingOptions {
  Pooling pooling = Pooling::kMean;
  bool normalize = true;
  int64_t dimension = 0;  // Matryoshka: 0 = the full dimension
  int64_t layer = 0;      // early exit: 0 = all layers
  // Text put before every input, e.g. "Instruct: <task>\nQuery: " for
  // Qwen3-Embedding queries or "task: search result | query: " for EmbeddingGemma.
  std::string prompt;
};

struct EmbedderOptions : TaskOptions {
  EmbedderOptions() = default;
  explicit EmbedderOptions(TaskOptions task) : TaskOptions(std::move(task)) {}
  // Overrides of what the model folder implies (sentence-transformers
  // modules, else mean pooling; last-token pooling for Qwen3), normalized.
  std::optional<Pooling> pooling;
  std::optional<bool> normalize;
  int64_t dimension = 0;
  int64_t layer = 0;
  std::string prompt;
  // Without a tokenizer only embed_inputs / embed_steps work (token ids in).
  bool require_tokenizer = true;
};

class Embedder {
 public:
  static std::shared_ptr<const Embedder> load(const std::filesystem::path& dir, const EmbedderOptions& options = {});

  // [texts, dimension] float32 on CPU.
  at::Tensor embed(const std::vector<std::string_view>& texts) const { return embed(texts, defaults_); }
  // `usage`, when given, receives what each text was (tokens in, tokens read, truncated).
  at::Tensor embed(const std::vector<std::string_view>& texts, const EmbeddingOptions& options,
                   std::vector<InputUsage>* usage = nullptr) const;
  // The same, row-major [texts × dimension()] floats (no libtorch types).
  std::vector<float> embed_rows(const std::vector<std::string_view>& texts) const { return embed_rows(texts, defaults_); }
  std::vector<float> embed_rows(const std::vector<std::string_view>& texts, const EmbeddingOptions& options) const;
  // Pools already tokenized inputs.
  at::Tensor embed_inputs(const ModelInputs& inputs, const EmbeddingOptions& options) const;
  // Every intermediate of embed_inputs under the fixtures' names: the pooled
  // vector ("mean_pooled", "cls_pooled" or "last_token_pooled"), "dense1",
  // "dense2", …, and "embedding".
  std::map<std::string, at::Tensor> embed_steps(const ModelInputs& inputs, const EmbeddingOptions& options) const;

  const EmbeddingOptions& defaults() const { return defaults_; }
  // Width of embed()'s rows with the default options.
  int64_t dimension() const;
  // Null when loaded without one (require_tokenizer = false).
  const std::shared_ptr<const Tokenizer>& tokenizer() const { return tokenizer_; }
  const EncodeOptions& encode_options() const { return encode_; }
  // One text as embed() encodes it (prompt first; the appended token, if the
  // model has one, last), under `options` instead of the model's own; with
  // max_length 0 the model's. Pool it with embed_inputs.
  Encoding encode(std::string_view text, const std::string& prompt, const EncodeOptions& options) const;
  // The longest input, special tokens included.
  size_t max_input_tokens() const { return encode_.max_length + (append_token_ ? 1 : 0); }

  int64_t hidden_size() const { return encoder_->hidden_size(); }
  const CoreModel& encoder() const { return *encoder_; }

 private:
  Embedder() = default;

  std::vector<Encoding> encode(const std::vector<std::string_view>& texts, const std::string& prompt) const;
  int64_t full_dimension() const;  // before Matryoshka truncation

  std::shared_ptr<const Tokenizer> tokenizer_;
  std::shared_ptr<const CoreModel> encoder_;
  std::optional<SentenceTransformerModules> modules_;
  EncodeOptions encode_;
  EmbeddingOptions defaults_;
  std::optional<int32_t> append_token_;  // Qwen3-Embedding ends every input with <|endoftext|>
  std::shared_ptr<const LinearDeltas> deltas_;  // an unmerged adapter, or null
};

// L2-normalizes rows; zero rows stay zero.
at::Tensor l2_normalize(const at::Tensor& x);
// First `dimension` columns, re-normalized when `normalize`.
at::Tensor matryoshka(const at::Tensor& embeddings, int64_t dimension, bool normalize);

}  // namespace semroute
