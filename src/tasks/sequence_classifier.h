// Sequence classification (intent / domain, jailbreak, NLI, …): label,
// confidence and the full probability vector for each text or text pair.
// Immutable after load; classify() may be called from many threads at once.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tasks/task_model.h"
#include "tasks/text_batch.h"

namespace semroute {

struct Classification {
  int64_t class_id = 0;              // the highest score (the lowest index on a tie)
  std::string label;
  float confidence = 0;              // score of class_id
  std::vector<float> probabilities;  // score of every label, in label order (see Scoring)
  InputUsage input;                  // filled where the text was tokenized (not by to_classifications)
};

// How logits become scores, as Hugging Face's text-classification pipeline
// decides from config.json: a softmax over the labels (they sum to 1), or
// for a multi-label head (problem_type "multi_label_classification") and a
// single-output head, an independent sigmoid per label (each in [0, 1]).
enum class Scoring { kSoftmax, kSigmoid };

// Throws LoadError for a regression head (scores without labels) or a
// problem_type Hugging Face does not know.
Scoring scoring_for(const std::string& problem_type, int64_t num_labels);

struct WindowClassification {
  TokenRange tokens;             // the window's text tokens in the document's
  size_t byte_begin = 0;         // the UTF-8 bytes of the document they cover
  size_t byte_end = 0;
  Classification classification;
};

struct DocumentClassification {
  std::vector<WindowClassification> windows;
  size_t content_tokens = 0;  // the document's text tokens (special tokens excluded)
};

class SequenceClassifier {
 public:
  static std::shared_ptr<const SequenceClassifier> load(const std::filesystem::path& dir,
                                                        const TaskOptions& options = {});
  // The sequence head of `head_dir` on `backbone`'s encoder (TaskModel::bind).
  static std::shared_ptr<const SequenceClassifier> bind(const Backbone& backbone, const std::filesystem::path& head_dir,
                                                        const PipelineOptions& options = {});

  std::vector<Classification> classify(const std::vector<std::string_view>& texts) const;
  // Premise / hypothesis pairs, encoded with the tokenizer's pair template.
  std::vector<Classification> classify_pairs(const std::vector<TextPair>& pairs) const;
  // Raw logits [batch, labels] for already tokenized inputs.
  at::Tensor logits(const ModelInputs& inputs) const;
  // Every window of a long document (never truncated), in order.
  DocumentClassification classify_windows(std::string_view document, const WindowOptions& options) const;

  const std::vector<std::string>& labels() const { return task_.labels; }
  Scoring scoring() const { return scoring_; }
  const TaskModel& task() const { return task_; }

 private:
  SequenceClassifier(TaskModel task, Scoring scoring) : task_(std::move(task)), scoring_(scoring) {}
  // `task` scored as its problem_type says (errors name `dir`).
  static std::shared_ptr<const SequenceClassifier> of(TaskModel task, const std::filesystem::path& dir);
  std::vector<Classification> results(const at::Tensor& logits) const;
  // Classifies `count` items in batches within the token budget.
  std::vector<Classification> classify_encoded(size_t count, const EncodeRange& encode) const;

  TaskModel task_;
  Scoring scoring_;
};

// Rows of [batch, labels] logits scored into Classification records.
std::vector<Classification> to_classifications(const at::Tensor& logits, const std::vector<std::string>& labels,
                                               Scoring scoring = Scoring::kSoftmax);

}  // namespace semroute
