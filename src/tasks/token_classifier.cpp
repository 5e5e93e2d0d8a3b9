#include "tasks/token_classifier.h"

#include <ATen/ops/max.h>
#include <ATen/ops/softmax.h>
#include <c10/core/InferenceMode.h>

#include "semroute/error.h"

namespace semroute {

std::shared_ptr<const TokenClassifier> TokenClassifier::load(const std::filesystem::path& dir,
                                                             const TaskOptions& options) {
  return std::shared_ptr<const TokenClassifier>(new TokenClassifier(TaskModel::load(dir, TaskKind::kToken, options)));
}

std::shared_ptr<const TokenClassifier> TokenClassifier::bind(const Backbone& backbone,
                                                             const std::filesystem::path& head_dir,
                                                             const PipelineOptions& options) {
  return std::shared_ptr<const TokenClassifier>(
      new TokenClassifier(TaskModel::bind(backbone, head_dir, TaskKind::kToken, options)));
}

at::Tensor TokenClassifier::logits(const ModelInputs& inputs) const {
  c10::InferenceMode guard;
  return task_.head.token_logits(task_.encoder->forward(inputs, task_.forward_options()));
}

std::vector<TokenClassification> TokenClassifier::classify(const std::vector<std::string_view>& texts) const {
  if (texts.empty()) throw InvalidInput("the batch holds no text");
  std::vector<TokenClassification> out;
  const auto encode = [&](size_t first, size_t last) {
    return task_.tokenizer->encode_batch({texts.begin() + first, texts.begin() + last}, task_.encode);
  };
  for_each_budgeted_batch(texts.size(), encode, *task_.tokenizer, task_.encoder->device(),
                          [&](const TextBatch& batch, size_t first) {
                            const std::vector<std::string_view> part(texts.begin() + first,
                                                                     texts.begin() + first + batch.encodings.size());
                            for (auto& r : to_token_classifications(logits(batch.inputs), batch, part, task_.labels,
                                                                    task_.head.entity_aggregation()))
                              out.push_back(std::move(r));
                          });
  return out;
}

DocumentTokens TokenClassifier::classify_windows(std::string_view document, const WindowOptions& options) const {
  const Tokenizer& tokenizer = *task_.tokenizer;
  const WindowedDocument d = plan_document(tokenizer, document, options, task_.encode.max_length);
  const size_t n = d.text.size();
  // Per text token: its label from the window where it has the most context.
  std::vector<TokenLabel> chosen(n, TokenLabel{0, 0});
  MostContext most_context(n);
  const auto label_batch = [&](const TextBatch& batch, size_t first) {
    const at::Tensor probs = at::softmax(logits(batch.inputs).to(at::kFloat), -1).cpu();
    CoreModel::check_finite(probs, "logits");
    const auto [best, best_id] = probs.max(-1);
    const at::Tensor p = best.contiguous(), id = best_id.contiguous();
    const int64_t seq = probs.size(1);
    for (size_t b = 0; b < batch.encodings.size(); ++b) {
      most_context.offer(batch.encodings[b], d.windows[first + b], [&](size_t token, size_t i) {
        const int64_t flat = static_cast<int64_t>(b) * seq + static_cast<int64_t>(i);
        chosen[token] = {id.data_ptr<int64_t>()[flat], p.data_ptr<float>()[flat]};
      });
    }
  };
  for_each_budgeted_batch(d.windows.size(), d.encoder(tokenizer), tokenizer, task_.encoder->device(), label_batch);
  DocumentTokens out;
  out.windows = d.windows;
  out.content_tokens = n;
  for (size_t t = 0; t < n; ++t)
    out.result.tokens.push_back({d.text.ids[t], d.text.tokens[t], d.text.offsets[t], chosen[t].label_id,
                                 task_.labels.at(static_cast<size_t>(chosen[t].label_id)), chosen[t].probability});
  out.result.entities = aggregate_entities(document, d.text, chosen, task_.labels, task_.head.entity_aggregation());
  const size_t whole = n + tokenizer.special_tokens();  // never cut: every token read
  out.result.input = {whole, whole, false};
  return out;
}

std::vector<TokenClassification> to_token_classifications(const at::Tensor& logits, const TextBatch& batch,
                                                          const std::vector<std::string_view>& texts,
                                                          const std::vector<std::string>& labels,
                                                          EntityAggregation aggregation) {
  CoreModel::check_finite(logits, "logits");
  const at::Tensor probs = at::softmax(logits.to(at::kFloat), -1).cpu();
  const auto [best, best_id] = probs.max(-1);
  const at::Tensor p = best.contiguous(), id = best_id.contiguous();
  const int64_t seq = probs.size(1);
  std::vector<TokenClassification> out;
  for (size_t b = 0; b < texts.size(); ++b) {
    const Encoding& e = batch.encodings[b];
    std::vector<TokenLabel> token_labels;
    TokenClassification result;
    for (size_t i = 0; i < e.size(); ++i) {
      const int64_t flat = static_cast<int64_t>(b) * seq + static_cast<int64_t>(i);
      token_labels.push_back({id.data_ptr<int64_t>()[flat], p.data_ptr<float>()[flat]});
      if (e.special_tokens_mask[i] || !e.attention_mask[i]) continue;
      result.tokens.push_back({e.ids[i], e.tokens[i], e.offsets[i], token_labels.back().label_id,
                               labels.at(static_cast<size_t>(token_labels.back().label_id)),
                               token_labels.back().probability});
    }
    result.entities = aggregate_entities(texts[b], e, token_labels, labels, aggregation);
    result.input = usage_of(e);
    out.push_back(std::move(result));
  }
  return out;
}

}  // namespace semroute
