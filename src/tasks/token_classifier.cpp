#include "tasks/token_classifier.h"

#include <ATen/ops/max.h>
#include <ATen/ops/softmax.h>
#include <c10/core/InferenceMode.h>

namespace semroute {

std::shared_ptr<const TokenClassifier> TokenClassifier::load(const std::filesystem::path& dir,
                                                             const TaskOptions& options) {
  return std::shared_ptr<const TokenClassifier>(new TokenClassifier(TaskModel::load(dir, TaskKind::kToken, options)));
}

at::Tensor TokenClassifier::logits(const ModelInputs& inputs) const {
  c10::InferenceMode guard;
  return task_.head.token_logits(task_.encoder->forward(inputs));
}

std::vector<TokenClassification> TokenClassifier::classify(const std::vector<std::string_view>& texts) const {
  const TextBatch batch = make_text_batch(*task_.tokenizer, texts, task_.encode, task_.encoder->device());
  const at::Tensor probs = at::softmax(logits(batch.inputs).to(at::kFloat), -1).cpu();
  const auto [best, best_id] = probs.max(-1);
  const at::Tensor p = best.contiguous(), id = best_id.contiguous();
  const int64_t seq = probs.size(1);
  std::vector<TokenClassification> out;
  for (size_t b = 0; b < texts.size(); ++b) {
    const Encoding& e = batch.encodings[b];
    std::vector<TokenLabel> labels;
    TokenClassification result;
    for (size_t i = 0; i < e.size(); ++i) {
      const int64_t flat = static_cast<int64_t>(b) * seq + static_cast<int64_t>(i);
      labels.push_back({id.data_ptr<int64_t>()[flat], p.data_ptr<float>()[flat]});
      if (e.special_tokens_mask[i] || !e.attention_mask[i]) continue;
      result.tokens.push_back({e.ids[i], e.tokens[i], e.offsets[i], labels.back().label_id,
                               task_.labels.at(static_cast<size_t>(labels.back().label_id)), labels.back().probability});
    }
    result.entities = aggregate_entities(texts[b], e, labels, task_.labels);
    out.push_back(std::move(result));
  }
  return out;
}

}  // namespace semroute
