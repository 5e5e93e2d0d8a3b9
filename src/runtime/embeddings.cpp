#include "runtime/embeddings.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include <cstdio>

#include "core/file_input.h"
#include "semroute/error.h"

namespace semroute {
namespace {

const char* pooling_name(Pooling p) {
  switch (p) {
    case Pooling::kMean: return "mean";
    case Pooling::kCls: return "cls";
    case Pooling::kLastToken: return "lasttoken";  // sentence-transformers' name, as the runtime reports it
  }
  return "mean";
}

bool declared(const std::vector<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// What a sentence-transformers package declares beyond its modules: the
// Matryoshka views and final-normed layer exits of a representation contract
// (config.json), the exits it ships graphs for (onnx/model_layer_<L>.onnx),
// and its prompts per input type (config_sentence_transformers.json).
void read_package_declarations(const std::filesystem::path& dir, int64_t width, int64_t layers,
                               EmbeddingModelOptions& options) {
  const nlohmann::json config = read_json_file(dir / "config.json");
  const auto contract = config.find("representation_contract");
  if (contract != config.end() && contract->is_object() && contract->value("version", 0) == 1) {
    for (const int64_t d : {768, 512, 256, 128, 64})
      if (d < width) options.dimensions.push_back(d);
    // Intermediate exits as the package reads them: final-normed ones only
    // (the encoder's early exit applies its final norm).
    if (contract->value("intermediate_normalization", "") == "final_norm" &&
        std::filesystem::is_directory(dir / "onnx")) {
      for (const auto& entry : std::filesystem::directory_iterator(dir / "onnx")) {
        const std::string name = entry.path().filename().string();
        int layer = 0;
        char tail = 0;
        if (std::sscanf(name.c_str(), "model_layer_%d.onnx%c", &layer, &tail) == 1 && layer >= 1 && layer <= layers)
          options.layers.push_back(layer);
      }
    }
  }
  const std::filesystem::path prompts_file = dir / "config_sentence_transformers.json";
  if (std::filesystem::exists(prompts_file)) {
    const nlohmann::json prompts = read_json_file(prompts_file).value("prompts", nlohmann::json::object());
    for (const char* type : {"query", "document"})
      if (prompts.is_object() && prompts.contains(type) && prompts[type].is_string())
        options.prompts.emplace(type, prompts[type].get<std::string>());
  }
}

}  // namespace

std::shared_ptr<const EmbeddingModel> EmbeddingModel::load(const std::filesystem::path& dir,
                                                           const EmbeddingModelOptions& given) {
  std::shared_ptr<EmbeddingModel> m(new EmbeddingModel());
  m->embedder_ = Embedder::load(dir, given.embedder);
  const Embedder& e = *m->embedder_;
  const int64_t layers = e.encoder().num_layers();
  const int64_t width = e.dimension();
  EmbeddingModelOptions options = given;
  read_package_declarations(dir, width, layers, options);
  EmbeddingInfo& info = m->info_;
  info.dimensions = {width};
  for (const int64_t d : options.dimensions) {
    if (d < 1 || d > width)
      throw InvalidInput("dimensions: " + std::to_string(d) + " is not in [1, " + std::to_string(width) + "]");
    if (!declared(info.dimensions, d)) info.dimensions.push_back(d);
  }
  for (const int64_t l : options.layers) {
    if (l < 1 || l > layers)
      throw InvalidInput("layers: " + std::to_string(l) + " is not in [1, " + std::to_string(layers) + "]");
    if (l != layers && !declared(info.layers, l)) info.layers.push_back(l);
  }
  std::sort(info.layers.begin(), info.layers.end());
  info.layers.push_back(layers);
  info.normalized = e.defaults().normalize;
  info.pooling = pooling_name(e.defaults().pooling);
  for (const auto& [type, prompt] : options.prompts) {
    if (type != "query" && type != "document") throw InvalidInput("prompts: \"query\" or \"document\", not \"" + type + "\"");
    info.input_types.push_back(type);
  }
  m->prompts_ = options.prompts;
  if (options.batching.enabled()) {
    for (const int64_t layer : info.layers) {
      const EmbeddingModel* self = m.get();
      m->batchers_.emplace(layer, std::make_unique<EncodingBatcher>(
                                      [self, layer](const std::vector<const Encoding*>& encodings) {
                                        return self->forward(layer, encodings);
                                      },
                                      options.batching, encoding_tokens));
    }
  }
  return m;
}

EmbeddingModel::~EmbeddingModel() = default;

// Full-width, unnormalized float32 vectors at `layer`, one per encoding.
std::vector<at::Tensor> EmbeddingModel::forward(int64_t layer, const std::vector<const Encoding*>& encodings) const {
  EmbeddingOptions options = embedder_->defaults();
  options.dimension = 0;
  options.normalize = false;
  options.layer = layer == info_.layers.back() ? 0 : layer;  // 0: every layer and the model's dense modules
  return forward_rows(encodings, *embedder_->tokenizer(), embedder_->encoder().device(),
                      [&](const TextBatch& batch) { return embedder_->embed_inputs(batch.inputs, options); }, false);
}

std::vector<EmbedAnswer> EmbeddingModel::embed(const std::vector<std::string_view>& texts, const EmbedRequest& request,
                                               const RequestControl& control) const {
  const int64_t dimension = request.dimension > 0 ? request.dimension : info_.dimensions.front();
  const int64_t layer = request.layer > 0 ? request.layer : info_.layers.back();
  if (!declared(info_.dimensions, dimension))
    throw InvalidInput("dimensions: " + std::to_string(dimension) + " is not one this model declares");
  if (!declared(info_.layers, layer)) throw InvalidInput("layer: " + std::to_string(layer) + " is not one of its exits");
  std::string prompt;
  if (!request.input_type.empty()) {
    const auto it = prompts_.find(request.input_type);
    if (it == prompts_.end()) throw InvalidInput("input_type: this model takes none (it has no prompts)");
    prompt = it->second;
  }
  if (request.overflow == OverflowPolicy::kWindow) throw InvalidInput("options.overflow: reject or truncate");
  const size_t budget = request.max_tokens > 0 ? request.max_tokens : max_input_tokens();
  if (budget > max_input_tokens())
    throw InvalidInput("options.max_tokens: " + std::to_string(budget) + " is over the model's limit of " +
                       std::to_string(max_input_tokens()) + " tokens");

  const auto tokenize_start = RequestControl::Clock::now();
  std::vector<EmbedAnswer> answers(texts.size());
  std::vector<Encoding> encodings(texts.size());
  std::vector<size_t> owners;
  std::vector<const Encoding*> todo;
  EncodeOptions bounded;
  bounded.max_length = budget;
  for (size_t i = 0; i < texts.size(); ++i) {
    try {
      encodings[i] = embedder_->encode(texts[i], prompt, bounded);
    } catch (const Error& e) {
      answers[i].error = e.code() == ErrorCode::kTooLong ? ItemError::kMaxLengthExceeded : ItemError::kInvalidInput;
      continue;
    }
    const Encoding& e = encodings[i];
    InputFacts& in = answers[i].input;
    in.tokens = std::max(e.input_tokens, e.size() + (e.truncated ? 1 : 0));
    in.tokens_lower_bound = e.truncated && e.input_tokens == 0;
    if (e.truncated && request.overflow == OverflowPolicy::kReject) {
      answers[i].error = ItemError::kMaxLengthExceeded;
      continue;
    }
    in.truncated = e.truncated;
    in.processed_tokens = e.size();
    owners.push_back(i);
    todo.push_back(&e);
  }
  control.add_time(&WorkTimes::tokenize, tokenize_start);
  const EncodingBatcher* batcher = batchers_.count(layer) != 0 ? batchers_.at(layer).get() : nullptr;
  const std::vector<at::Tensor> rows =
      forward_pieces(todo, control, batcher, [&](const auto& piece) { return forward(layer, piece); });
  for (size_t k = 0; k < rows.size(); ++k) {
    EmbedAnswer& a = answers[owners[k]];
    at::Tensor v = rows[k].narrow(0, 0, std::min<int64_t>(dimension, rows[k].size(0)));
    if (!at::isfinite(v).all().item<bool>()) {
      a.error = ItemError::kInvalidModelOutput;
      continue;
    }
    if (info_.normalized) v = v / std::max(v.norm().item<double>(), 1e-12);
    const at::Tensor c = v.contiguous();
    a.embedding.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  const size_t done = rows.size();
  for (size_t k = done; k < todo.size(); ++k) answers[owners[k]].error = ItemError::kDeadlineExceeded;
  return answers;
}

}  // namespace semroute
