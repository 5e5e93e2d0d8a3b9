#include "runtime/embeddings.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "semroute/error.h"

namespace semroute {
namespace {

constexpr size_t kEncodingsPerPiece = 32;  // as task_heads.cpp: the lane is yielded between pieces

const char* pooling_name(Pooling p) {
  switch (p) {
    case Pooling::kMean: return "mean";
    case Pooling::kCls: return "cls";
    case Pooling::kLastToken: return "lasttoken";
  }
  return "mean";
}

bool declared(const std::vector<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

std::shared_ptr<const EmbeddingModel> EmbeddingModel::load(const std::filesystem::path& dir,
                                                           const EmbeddingModelOptions& options) {
  std::shared_ptr<EmbeddingModel> m(new EmbeddingModel());
  m->embedder_ = Embedder::load(dir, options.embedder);
  const Embedder& e = *m->embedder_;
  const int64_t layers = e.encoder().num_layers();
  const int64_t width = e.dimension();
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
      m->batchers_.emplace(layer, std::make_unique<Batcher<at::Tensor, const Encoding*>>(
                                      [self, layer](const std::vector<const Encoding*>& encodings) {
                                        return self->forward(layer, encodings);
                                      },
                                      options.batching));
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
  std::vector<Encoding> copies;
  for (const Encoding* e : encodings) copies.push_back(*e);
  const TextBatch batch = batch_from_encodings(std::move(copies), *embedder_->tokenizer(), embedder_->encoder().device());
  const at::Tensor rows = embedder_->embed_inputs(batch.inputs, options);
  std::vector<at::Tensor> out;
  for (int64_t i = 0; i < rows.size(0); ++i) out.push_back(rows[i].clone());
  return out;
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
  const auto* batcher = batchers_.count(layer) != 0 ? batchers_.at(layer).get() : nullptr;
  size_t done = 0;
  for (size_t begin = 0; begin < todo.size(); begin += kEncodingsPerPiece) {
    const std::vector<const Encoding*> piece(
        todo.begin() + static_cast<std::ptrdiff_t>(begin),
        todo.begin() + static_cast<std::ptrdiff_t>(std::min(todo.size(), begin + kEncodingsPerPiece)));
    std::vector<at::Tensor> rows;
    try {
      control.check();
      if (batcher != nullptr) {
        Batcher<at::Tensor, const Encoding*>::Timing timing;
        rows = (*batcher)(piece, control.deadline(), &timing);
        control.add_time(&WorkTimes::queue, timing.queued);
        control.add_time(&WorkTimes::forward, timing.computed);
      } else {
        rows = control.on_lane([&] { return forward(layer, piece); });
      }
    } catch (const DeadlinePassed&) {
      break;
    }
    for (size_t k = 0; k < rows.size(); ++k) {
      EmbedAnswer& a = answers[owners[begin + k]];
      at::Tensor v = rows[k].narrow(0, 0, dimension);
      if (!at::isfinite(v).all().item<bool>()) {
        a.error = ItemError::kInvalidModelOutput;
        continue;
      }
      if (info_.normalized) v = v / std::max(v.norm().item<double>(), 1e-12);
      const at::Tensor c = v.contiguous();
      a.embedding.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    }
    done = begin + rows.size();
  }
  for (size_t k = done; k < todo.size(); ++k) answers[owners[k]].error = ItemError::kDeadlineExceeded;
  return answers;
}

}  // namespace semroute
