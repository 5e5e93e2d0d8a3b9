#include "tasks/embedder.h"

#include <ATen/ops/cat.h>

#include <ATen/TensorOperators.h>
#include <ATen/ops/norm.h>
#include <c10/core/InferenceMode.h>

#include "adapters/lora_adapter.h"
#include "adapters/lora_deltas.h"
#include "models/model_factory.h"
#include "models/task_conventions.h"
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
  const ModelSource source = open_model_source(dir);
  const auto adapter = options.adapter.empty()
                           ? nullptr
                           : load_adapter_for(options.adapter, source.checkpoint, options.load, options.merge_adapter);
  e->encoder_ = load_core_model(source, options.load, nullptr, options.merge_adapter ? merge_patch(adapter) : nullptr);
  if (adapter && !options.merge_adapter)
    e->deltas_ = std::make_shared<LoraDeltas>(std::vector<std::shared_ptr<const LoraAdapter>>{adapter});
  const std::filesystem::path tokenizer_path = options.tokenizer.empty() ? dir : options.tokenizer;
  if (options.require_tokenizer || std::filesystem::exists(tokenizer_path / "tokenizer.json") ||
      !std::filesystem::is_directory(tokenizer_path))
    e->tokenizer_ = load_tokenizer(tokenizer_path);
  e->modules_ = SentenceTransformerModules::load(
      dir, at::TensorOptions().dtype(options.load.dtype).device(options.load.device));
  const EmbeddingConvention& convention = e->encoder_->backend().embedding;
  EmbeddingOptions& d = e->defaults_;
  d.pooling = convention.pooling;
  d.normalize = true;
  if (e->modules_) {
    if (e->modules_->pooling()) d.pooling = *e->modules_->pooling();
    d.normalize = e->modules_->normalize();
  }
  if (options.pooling) d.pooling = *options.pooling;
  if (options.normalize) d.normalize = *options.normalize;
  d.dimension = options.dimension;
  d.layer = options.layer;
  d.prompt = options.prompt;
  if (d.dimension > e->full_dimension())
    throw InvalidInput("embedding dimension " + std::to_string(d.dimension) + " exceeds the model's " +
                       std::to_string(e->full_dimension()));
  if (!convention.appended_token.empty() && e->tokenizer_)
    e->append_token_ = e->tokenizer_->token_to_id(convention.appended_token);
  e->encode_ = encode_options_for(*e->encoder_, options);
  if (e->append_token_) e->encode_.max_length -= 1;  // room for the appended token
  return e;
}

int64_t Embedder::full_dimension() const {
  return modules_ && defaults_.layer == 0 ? modules_->output_dimension(encoder_->hidden_size()) : encoder_->hidden_size();
}

int64_t Embedder::dimension() const { return defaults_.dimension > 0 ? defaults_.dimension : full_dimension(); }

std::map<std::string, at::Tensor> Embedder::embed_steps(const ModelInputs& inputs,
                                                         const EmbeddingOptions& options) const {
  c10::InferenceMode guard;
  ForwardOptions forward;
  forward.layers = options.layer;
  forward.deltas = deltas_.get();
  const at::Tensor hidden = encoder_->forward(inputs, forward);
  std::map<std::string, at::Tensor> steps;
  at::Tensor x = pool(options.pooling, hidden, inputs.attention_mask);
  const char* pooled_name = options.pooling == Pooling::kMean  ? "mean_pooled"
                            : options.pooling == Pooling::kCls ? "cls_pooled"
                                                                : "last_token_pooled";
  steps[pooled_name] = x;
  // Dense modules belong to the full model; an early exit skips them.
  if (modules_ && options.layer == 0) {
    for (size_t i = 0; i < modules_->dense_count(); ++i) {
      x = modules_->dense(i, x);
      steps["dense" + std::to_string(i + 1)] = x;
    }
  }
  x = x.to(at::kFloat);
  CoreModel::check_finite(x, "embeddings");
  if (options.normalize) x = l2_normalize(x);
  steps["embedding"] = matryoshka(x, options.dimension, options.normalize).cpu().contiguous();
  return steps;
}

at::Tensor Embedder::embed_inputs(const ModelInputs& inputs, const EmbeddingOptions& options) const {
  return embed_steps(inputs, options).at("embedding");
}

Encoding Embedder::encode(std::string_view text, const std::string& prompt, const EncodeOptions& options) const {
  if (!tokenizer_) throw InvalidInput("this embedder was loaded without a tokenizer: give it token ids");
  EncodeOptions o = options.max_length > 0 ? options : encode_;
  if (options.max_length > 0 && append_token_) o.max_length -= 1;  // room for the appended token
  Encoding e = prompt.empty() ? tokenizer_->encode(text, o) : tokenizer_->encode(prompt + std::string(text), o);
  if (append_token_ && (e.ids.empty() || e.ids.back() != *append_token_))
    e.push(*append_token_, tokenizer_->id_to_token(*append_token_), Span{}, -1, 0, true);
  return e;
}

std::vector<Encoding> Embedder::encode(const std::vector<std::string_view>& texts, const std::string& prompt) const {
  std::vector<Encoding> encodings;
  encodings.reserve(texts.size());
  for (const auto text : texts) encodings.push_back(encode(text, prompt, EncodeOptions{}));  // the model's own
  return encodings;
}

std::vector<float> Embedder::embed_rows(const std::vector<std::string_view>& texts,
                                        const EmbeddingOptions& options) const {
  if (texts.empty()) return {};
  const at::Tensor rows = embed(texts, options).contiguous();
  const float* data = rows.data_ptr<float>();
  return std::vector<float>(data, data + rows.numel());
}

at::Tensor Embedder::embed(const std::vector<std::string_view>& texts, const EmbeddingOptions& options,
                           std::vector<InputUsage>* usage) const {
  if (texts.empty()) throw InvalidInput("the batch holds no text");
  std::vector<at::Tensor> parts;
  const auto encode_range = [&](size_t first, size_t last) {
    return encode({texts.begin() + first, texts.begin() + last}, options.prompt);
  };
  for_each_budgeted_batch(texts.size(), encode_range, *tokenizer_, encoder_->device(),
                          [&](const TextBatch& batch, size_t) {
                            parts.push_back(embed_inputs(batch.inputs, options));
                            if (usage != nullptr)
                              for (const Encoding& e : batch.encodings) usage->push_back(usage_of(e));
                          });
  return parts.size() == 1 ? parts.front() : at::cat(parts, 0);
}

}  // namespace semroute
