// Token classification (PII): a label and probability per token, aggregated
// into entity spans with byte offsets into the original text (entity_spans.h
// documents the rules). Immutable after load; thread-safe.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tasks/entity_spans.h"
#include "tasks/task_model.h"
#include "tasks/text_batch.h"

namespace semroute {

struct TokenPrediction {
  int32_t token_id = 0;
  std::string token;
  Span offset;
  int64_t label_id = 0;
  std::string label;
  float probability = 0;
};

struct TokenClassification {
  std::vector<TokenPrediction> tokens;  // special tokens excluded
  std::vector<EntitySpan> entities;
  InputUsage input;
};

class TokenClassifier {
 public:
  static std::shared_ptr<const TokenClassifier> load(const std::filesystem::path& dir, const TaskOptions& options = {});

  std::vector<TokenClassification> classify(const std::vector<std::string_view>& texts) const;
  // Raw logits [batch, seq, labels] for already tokenized inputs.
  at::Tensor logits(const ModelInputs& inputs) const;

  const std::vector<std::string>& labels() const { return task_.labels; }
  const TaskModel& task() const { return task_; }

 private:
  explicit TokenClassifier(TaskModel task) : task_(std::move(task)) {}
  TaskModel task_;
};

// Per-token labels and entity spans from token logits [batch, seq, labels]
// of `batch`, the tokenized `texts`.
std::vector<TokenClassification> to_token_classifications(const at::Tensor& logits, const TextBatch& batch,
                                                          const std::vector<std::string_view>& texts,
                                                          const std::vector<std::string>& labels);

}  // namespace semroute
