// An embedding model served under the model runtime's contract
// (docs/runtime.md): each text embedded or failed on its own, at a declared
// layer exit and Matryoshka dimension. One full-width float32 vector per
// text and exit is computed; every dimension is a view of it (its first d
// values, L2-normalized again when the model normalizes). Immutable after
// load; embed() may be called from many threads at once.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/forwards.h"
#include "runtime/item_results.h"
#include "runtime/request_control.h"
#include "tasks/batcher.h"
#include "tasks/embedder.h"

namespace semroute {

// What the model offers (the contract's EmbeddingCard).
struct EmbeddingInfo {
  std::vector<int64_t> dimensions;  // the full width first
  std::vector<int64_t> layers;      // exits; the last layer last
  bool normalized = true;
  std::string pooling;              // "mean", "cls", "last_token"
  std::vector<std::string> input_types;  // "query", "document" where the model has prompts for them
};

struct EmbedRequest {
  int64_t dimension = 0;  // 0: the full width
  int64_t layer = 0;      // 0: the last layer
  std::string input_type;  // "", "query", "document"
  OverflowPolicy overflow = OverflowPolicy::kReject;  // reject or truncate
  size_t max_tokens = 0;  // 0: the model's limit
};

struct EmbedAnswer {
  ItemError error = ItemError::kNone;
  std::vector<float> embedding;
  InputFacts input;
};

struct EmbeddingModelOptions {
  EmbedderOptions embedder;
  BatchingOptions batching{16, 0};
  // Exits and widths the model was trained for beyond its last layer and
  // full width (a Matryoshka model's); only these are served, with those the
  // package itself declares (a representation contract's widths and
  // final-normed exits; onnx/model_layer_<L>.onnx marks an exit).
  std::vector<int64_t> layers, dimensions;
  // Input type ("query", "document") -> the prompt put before the text; the
  // package's config_sentence_transformers.json adds its own.
  std::map<std::string, std::string> prompts;
};

class EmbeddingModel {
 public:
  static std::shared_ptr<const EmbeddingModel> load(const std::filesystem::path& dir,
                                                    const EmbeddingModelOptions& options);
  ~EmbeddingModel();

  const EmbeddingInfo& info() const { return info_; }
  size_t max_input_tokens() const { return embedder_->max_input_tokens(); }
  const std::shared_ptr<const Embedder>& embedder() const { return embedder_; }

  // InvalidInput for a dimension, layer or input type the model does not
  // declare, or max_tokens over its limit; items fail on their own.
  std::vector<EmbedAnswer> embed(const std::vector<std::string_view>& texts, const EmbedRequest& request,
                                 const RequestControl& control) const;

 private:
  EmbeddingModel() = default;
  std::vector<at::Tensor> forward(int64_t layer, const std::vector<const Encoding*>& encodings) const;

  std::shared_ptr<const Embedder> embedder_;
  EmbeddingInfo info_;
  std::map<std::string, std::string> prompts_;
  std::map<int64_t, std::unique_ptr<EncodingBatcher>> batchers_;  // per exit
};

}  // namespace semroute
