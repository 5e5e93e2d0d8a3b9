#include "tasks/task_head.h"

#include <ATen/ops/tanh.h>

#include "models/bert.h"
#include "models/modernbert.h"
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

TaskHead TaskHead::load(const CoreModel& model, TaskKind kind, WeightMap& weights, std::optional<Pooling> pooling) {
  TaskHead head;
  head.kind_ = kind;
  const int64_t hidden = model.hidden_size();
  const at::Tensor classifier = weights.get("classifier.weight");
  if (!classifier.defined()) {
    weights.check();  // reports the missing classifier by name
  }
  if (classifier.dim() != 2 || classifier.size(1) != hidden)
    throw LoadError("classifier.weight has shape " + std::to_string(classifier.dim()) + "-d, expected [labels, " +
                    std::to_string(hidden) + "]");
  head.num_labels_ = classifier.size(0);
  head.classifier_ = Linear::load(weights, "classifier", hidden, head.num_labels_, true);

  if (const auto* mb = dynamic_cast<const ModernBertEncoder*>(&model)) {
    const ModernBertConfig& c = mb->modernbert_config();
    head.pooling_ = parse_pooling(c.classifier_pooling);
    head.dense_ = Linear::load(weights, "head.dense", hidden, hidden, c.classifier_bias);
    head.activation_ = parse_activation(c.classifier_activation);
    head.norm_ = LayerNorm::load(weights, "head.norm", hidden, c.norm_eps, c.norm_bias);
  } else if (dynamic_cast<const BertEncoder*>(&model) != nullptr) {
    if (kind == TaskKind::kSequence) {
      head.dense_ = Linear::load(weights, "bert.pooler.dense", hidden, hidden, true);
      head.tanh_ = true;
    }
  } else {
    throw Unsupported(std::string("classification heads are not supported for ") + model.backend_name());
  }
  if (pooling) head.pooling_ = *pooling;
  weights.check();
  return head;
}

at::Tensor TaskHead::transform(const at::Tensor& x) const {
  if (!dense_) return x;
  const at::Tensor d = (*dense_)(x);
  if (tanh_) return at::tanh(d);
  const at::Tensor a = activate(activation_, d);
  return norm_ ? (*norm_)(a) : a;
}

at::Tensor TaskHead::sequence_logits(const at::Tensor& hidden, const at::Tensor& attention_mask) const {
  return classifier_(transform(pool(pooling_, hidden, attention_mask)));
}

at::Tensor TaskHead::token_logits(const at::Tensor& hidden) const { return classifier_(transform(hidden)); }

}  // namespace semroute
