// The layers between an encoder's hidden states and the label logits, as the
// Hugging Face task classes define them per architecture:
//   ModernBERT: pool (cls | mean) -> head.dense -> activation -> head.norm -> classifier
//               (token task: the same head on every token)
//   BERT:       tanh(pooler.dense(h[:, 0])) -> classifier   (token task: classifier)
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

#include "core/weight_map.h"
#include "models/core_model.h"
#include "models/layers.h"
#include "tasks/pooling.h"

namespace semroute {

enum class TaskKind { kSequence, kToken };

// The task a checkpoint was fine-tuned for, from its architecture name
// (…ForSequenceClassification / …ForTokenClassification), if any.
std::optional<TaskKind> task_kind_of(const std::string& architecture);

class TaskHead {
 public:
  // Loads the head of `kind` for `model` from `weights` (names as in the
  // task checkpoint: "head.dense", "classifier", "bert.pooler.dense", …).
  // The label count is read from the classifier's shape.
  // `pooling` overrides the config's (classifier_pooling) for sequence heads.
  static TaskHead load(const CoreModel& model, TaskKind kind, WeightMap& weights,
                       std::optional<Pooling> pooling = std::nullopt);

  // [batch, labels] from hidden states [batch, seq, hidden].
  at::Tensor sequence_logits(const at::Tensor& hidden, const at::Tensor& attention_mask) const;
  // [batch, seq, labels].
  at::Tensor token_logits(const at::Tensor& hidden) const;

  TaskKind kind() const { return kind_; }
  int64_t num_labels() const { return num_labels_; }

 private:
  at::Tensor transform(const at::Tensor& x) const;

  TaskKind kind_ = TaskKind::kSequence;
  Pooling pooling_ = Pooling::kCls;
  std::optional<Linear> dense_;
  bool tanh_ = false;  // BERT pooler
  Activation activation_ = Activation::kGeluErf;
  std::optional<LayerNorm> norm_;
  Linear classifier_;
  int64_t num_labels_ = 0;
};

}  // namespace semroute
