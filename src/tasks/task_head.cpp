#include "tasks/task_head.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/tanh.h>

#include "core/model_config.h"
#include "models/model_factory.h"
#include "semroute/error.h"

namespace semroute {

std::optional<TaskKind> task_kind_of(const std::string& architecture) {
  const auto ends_with = [&](const std::string& suffix) {
    return architecture.size() >= suffix.size() &&
           architecture.compare(architecture.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with("ForSequenceClassification")) return TaskKind::kSequence;
  if (ends_with("ForTokenClassification")) return TaskKind::kToken;
  return std::nullopt;
}

TaskHead TaskHead::load(const CoreModel& model, const ConfigReader& config, TaskKind kind, WeightMap& weights,
                        std::optional<Pooling> pooling) {
  const auto& describe = model.backend().head;
  const std::optional<HeadLayout> layout = describe ? describe(config, kind) : std::nullopt;
  if (!layout)
    throw Unsupported(std::string(kind == TaskKind::kSequence ? "sequence" : "token") +
                      " classification heads are not defined for " + model.backend_name() + " models");
  TaskHead head;
  head.kind_ = kind;
  const int64_t hidden = model.hidden_size();
  const at::Tensor classifier = weights.get(layout->classifier + ".weight");
  if (!classifier.defined()) weights.check();  // reports the missing classifier by name
  if (classifier.dim() != 2 || classifier.size(1) != hidden)
    throw LoadError(layout->classifier + ".weight has shape " + std::to_string(classifier.dim()) +
                    "-d, expected [labels, " + std::to_string(hidden) + "]");
  head.num_labels_ = classifier.size(0);
  head.temperature_ = read_temperature(config);
  head.entity_aggregation_ = read_entity_aggregation(config);
  head.classifier_ = Linear::load(weights, layout->classifier, hidden, head.num_labels_, layout->classifier_bias);
  head.pooling_ = pooling.value_or(layout->pooling);
  const bool has_transform = !layout->transform_optional || weights.has(layout->dense + ".weight") ||
                             weights.has(layout->norm + ".weight");
  if (!has_transform) {
    weights.check();
    return head;
  }
  if (!layout->dense.empty()) head.dense_ = Linear::load(weights, layout->dense, hidden, hidden, layout->dense_bias);
  head.tanh_ = layout->tanh;
  head.activation_ = layout->activation;
  if (!layout->norm.empty())
    head.norm_ = LayerNorm::load(weights, layout->norm, hidden, layout->norm_eps, layout->norm_bias);
  weights.check();
  return head;
}

at::Tensor TaskHead::transform(const at::Tensor& x) const {
  if (!dense_) return x;
  at::Tensor y = (*dense_)(x);
  if (tanh_) y = at::tanh(y);
  if (activation_) y = activate(*activation_, y);
  return norm_ ? (*norm_)(y) : y;
}

at::Tensor TaskHead::sequence_logits(const at::Tensor& hidden, const at::Tensor& attention_mask) const {
  const at::Tensor logits = classifier_(transform(pool(pooling_, hidden, attention_mask)));
  return temperature_ == 1 ? logits : logits / temperature_;
}

at::Tensor TaskHead::token_logits(const at::Tensor& hidden) const { return classifier_(transform(hidden)); }

}  // namespace semroute
