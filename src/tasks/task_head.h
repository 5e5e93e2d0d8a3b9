// The layers between an encoder's hidden states and the label logits, built
// from the HeadLayout the backend declares for its Hugging Face task class
// (models/task_conventions.h):
//   pool (sequence tasks) -> dense -> activation | tanh -> norm -> classifier
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

#include "core/model_config.h"
#include "core/weight_map.h"
#include "models/core_model.h"
#include "models/layers.h"
#include "models/task_conventions.h"
#include "tasks/pooling.h"

namespace semroute {

// The task a checkpoint was fine-tuned for, from its architecture name
// (…ForSequenceClassification / …ForTokenClassification), if any.
std::optional<TaskKind> task_kind_of(const std::string& architecture);

class TaskHead {
 public:
  // Loads the head of `kind` for `model` from `weights` (names as in the
  // task checkpoint: "head.dense", "classifier", "bert.pooler.dense", …),
  // shaped as `config` (the config.json of the checkpoint it comes from)
  // says. The label count is read from the classifier's shape. Unsupported
  // when the architecture has no head of that kind. `pooling` overrides the
  // config's (e.g. ModernBERT's classifier_pooling) for sequence heads.
  static TaskHead load(const CoreModel& model, const ConfigReader& config, TaskKind kind, WeightMap& weights,
                       std::optional<Pooling> pooling = std::nullopt);

  // [batch, labels] from hidden states [batch, seq, hidden], divided by the
  // head's temperature.
  at::Tensor sequence_logits(const at::Tensor& hidden, const at::Tensor& attention_mask) const;
  // [batch, seq, labels].
  at::Tensor token_logits(const at::Tensor& hidden) const;

  TaskKind kind() const { return kind_; }
  int64_t num_labels() const { return num_labels_; }
  // Temperature scaling (`semroute train` fits it on validation data and
  // saves it as config.json's or an adapter's labels.json's
  // "semroute_temperature"): sequence logits are divided by it, so that a
  // confidence of 0.8 is right about 80 % of the time. 1 when unset.
  double temperature() const { return temperature_; }
  void set_temperature(double t) { temperature_ = t; }
  // How token labels become entity spans: config.json's or an adapter's
  // labels.json's "semroute_entity_aggregation" (core/model_config.h).
  EntityAggregation entity_aggregation() const { return entity_aggregation_; }
  void set_entity_aggregation(EntityAggregation a) { entity_aggregation_ = a; }

 private:
  at::Tensor transform(const at::Tensor& x) const;

  TaskKind kind_ = TaskKind::kSequence;
  Pooling pooling_ = Pooling::kCls;
  std::optional<Linear> dense_;
  bool tanh_ = false;  // BERT pooler
  std::optional<Activation> activation_;
  std::optional<LayerNorm> norm_;
  Linear classifier_;
  int64_t num_labels_ = 0;
  double temperature_ = 1;
  EntityAggregation entity_aggregation_ = EntityAggregation::kToken;
};

}  // namespace semroute
