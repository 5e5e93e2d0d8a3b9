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
  int64_t class_id = 0;
  std::string label;
  float confidence = 0;              // probability of class_id
  std::vector<float> probabilities;  // softmax over every label, in label order
};

class SequenceClassifier {
 public:
  static std::shared_ptr<const SequenceClassifier> load(const std::filesystem::path& dir,
                                                        const TaskOptions& options = {});

  std::vector<Classification> classify(const std::vector<std::string_view>& texts) const;
  // Premise / hypothesis pairs, encoded with the tokenizer's pair template.
  std::vector<Classification> classify_pairs(const std::vector<TextPair>& pairs) const;
  // Raw logits [batch, labels] for already tokenized inputs.
  at::Tensor logits(const ModelInputs& inputs) const;

  const std::vector<std::string>& labels() const { return task_.labels; }
  const TaskModel& task() const { return task_; }

 private:
  explicit SequenceClassifier(TaskModel task) : task_(std::move(task)) {}
  std::vector<Classification> results(const at::Tensor& logits) const;
  // Classifies `count` items in batches within the token budget.
  std::vector<Classification> classify_encoded(size_t count, const EncodeRange& encode) const;

  TaskModel task_;
};

// Softmax rows of [batch, labels] logits into Classification records.
std::vector<Classification> to_classifications(const at::Tensor& logits, const std::vector<std::string>& labels);

}  // namespace semroute
