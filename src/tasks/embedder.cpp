#include "tasks/embedder.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/norm.h>
#include <c10/core/InferenceMode.h>

#include "models/model_factory.h"
#include "semroute/error.h"
#include "tasks/text_batch.h"

namespace semroute {

at::Tensor l2_normalize(const at::Tensor& x) { return x / x.norm(2, {-1}, true).clamp_min(1e-12); }

at::Tensor matryoshka(const at::Tensor& embeddings, int64_t dimension, bool normalize) {
  const int64_t full = embeddings.size(-1);
  if (dimension <= 0 || dimension == full) return embeddings;
  if (dimension > full)
    throw InvalidInput("embedding dimension " + std::to_string(dimension) + " exceeds the model's " +
                       std::to_string(full));
  const at::Tensor cut = embeddings.narrow(-1, 0, dimension);
  return normalize ? l2_normalize(cut) : cut;
}

std::shared_ptr<const Embedder> Embedder::load(const std::filesystem::path& dir, const EmbedderOptions& options) {
  std::shared_ptr<Embedder> e(new Embedder());
  e->encoder_ = load_core_model(dir, options.load);
  e->tokenizer_ = load_tokenizer(options.tokenizer.empty() ? dir : options.tokenizer);
  const size_t limit = static_cast<size_t>(e->encoder_->max_length());
  if (options.max_length > limit)
    throw InvalidInput("max_length " + std::to_string(options.max_length) + " exceeds the model's limit of " +
                       std::to_string(limit));
  e->encode_.max_length = options.max_length ? options.max_length : limit;
  e->encode_.truncation = options.truncation;
  e->defaults_ = options.defaults;
  return e;
}

at::Tensor Embedder::embed_inputs(const ModelInputs& inputs, const EmbeddingOptions& options) const {
  c10::InferenceMode guard;
  ForwardOptions forward;
  forward.layers = options.layer;
  const at::Tensor hidden = encoder_->forward(inputs, forward).to(at::kFloat);
  at::Tensor pooled = pool(options.pooling, hidden, inputs.attention_mask);
  if (options.normalize) pooled = l2_normalize(pooled);
  return matryoshka(pooled, options.dimension, options.normalize).cpu().contiguous();
}

at::Tensor Embedder::embed(const std::vector<std::string_view>& texts, const EmbeddingOptions& options) const {
  const TextBatch batch = make_text_batch(*tokenizer_, texts, encode_, encoder_->device());
  return embed_inputs(batch.inputs, options);
}

}  // namespace semroute
