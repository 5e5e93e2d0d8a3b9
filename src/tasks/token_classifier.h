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

// A document longer than the model reads at once, token-classified window by
// window: every text token once, from the window where it sits furthest from
// an edge (the most context on both sides), and entities decoded once over
// the whole document, so an entity across a window boundary is one span.
struct DocumentTokens {
  TokenClassification result;      // tokens and entities of the whole document
  std::vector<TokenRange> windows;  // the windows' text tokens
  size_t content_tokens = 0;
};

class TokenClassifier {
 public:
  static std::shared_ptr<const TokenClassifier> load(const std::filesystem::path& dir, const TaskOptions& options = {});
  // The token head of `head_dir` on `backbone`'s encoder (TaskModel::bind).
  static std::shared_ptr<const TokenClassifier> bind(const Backbone& backbone, const std::filesystem::path& head_dir,
                                                     const PipelineOptions& options = {});

  std::vector<TokenClassification> classify(const std::vector<std::string_view>& texts) const;
  // A long document window by window (never truncated; see WindowOptions).
  DocumentTokens classify_windows(std::string_view document, const WindowOptions& options) const;
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
                                                          const std::vector<std::string>& labels,
                                                          EntityAggregation aggregation);

}  // namespace semroute
