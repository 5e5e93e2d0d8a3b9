#include "tasks/sequence_classifier.h"

#include <ATen/ops/sigmoid.h>
#include <ATen/ops/softmax.h>
#include <c10/core/InferenceMode.h>

#include "semroute/error.h"

namespace semroute {

Scoring scoring_for(const std::string& problem_type, int64_t num_labels) {
  if (problem_type == "multi_label_classification") return Scoring::kSigmoid;
  if (problem_type == "regression")
    throw LoadError("config.json problem_type 'regression': a regression head gives scores, not labels; "
                    "semroute classifies with single_label_classification or multi_label_classification heads");
  if (!problem_type.empty() && problem_type != "single_label_classification")
    throw LoadError("config.json problem_type '" + problem_type +
                    "' is not one of single_label_classification, multi_label_classification");
  return problem_type.empty() && num_labels == 1 ? Scoring::kSigmoid : Scoring::kSoftmax;
}

std::shared_ptr<const SequenceClassifier> SequenceClassifier::load(const std::filesystem::path& dir,
                                                                   const TaskOptions& options) {
  return of(TaskModel::load(dir, TaskKind::kSequence, options), dir);
}

std::shared_ptr<const SequenceClassifier> SequenceClassifier::bind(const Backbone& backbone,
                                                                   const std::filesystem::path& head_dir,
                                                                   const PipelineOptions& options) {
  return of(TaskModel::bind(backbone, head_dir, TaskKind::kSequence, options), head_dir);
}

std::shared_ptr<const SequenceClassifier> SequenceClassifier::of(TaskModel task, const std::filesystem::path& dir) {
  Scoring scoring;
  try {
    scoring = scoring_for(task.problem_type, static_cast<int64_t>(task.labels.size()));
  } catch (const LoadError& e) {
    throw LoadError(dir.string() + ": " + e.what());
  }
  return std::shared_ptr<const SequenceClassifier>(new SequenceClassifier(std::move(task), scoring));
}

at::Tensor SequenceClassifier::logits(const ModelInputs& inputs) const {
  c10::InferenceMode guard;
  return task_.head.sequence_logits(task_.encoder->forward(inputs, task_.forward_options()), inputs.attention_mask);
}

std::vector<Classification> to_classifications(const at::Tensor& logits, const std::vector<std::string>& labels,
                                               Scoring scoring) {
  CoreModel::check_finite(logits, "logits");
  const at::Tensor floats = logits.to(at::kFloat);
  const at::Tensor probs =
      (scoring == Scoring::kSigmoid ? at::sigmoid(floats) : at::softmax(floats, -1)).cpu().contiguous();
  std::vector<Classification> out;
  const int64_t n = probs.size(1);
  for (int64_t b = 0; b < probs.size(0); ++b) {
    const float* p = probs.data_ptr<float>() + b * n;
    Classification c;
    c.probabilities.assign(p, p + n);
    for (int64_t i = 1; i < n; ++i)
      if (p[i] > p[c.class_id]) c.class_id = i;
    c.confidence = p[c.class_id];
    c.label = labels.at(static_cast<size_t>(c.class_id));
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Classification> SequenceClassifier::classify_encoded(size_t count, const EncodeRange& encode) const {
  if (count == 0) throw InvalidInput("the batch holds no text");
  std::vector<Classification> out;
  for_each_budgeted_batch(count, encode, *task_.tokenizer, task_.encoder->device(), [&](const TextBatch& batch, size_t) {
    auto results = to_classifications(logits(batch.inputs), task_.labels, scoring_);
    for (size_t i = 0; i < results.size(); ++i) {
      results[i].input = usage_of(batch.encodings[i]);
      out.push_back(std::move(results[i]));
    }
  });
  return out;
}

DocumentClassification SequenceClassifier::classify_windows(std::string_view document,
                                                            const WindowOptions& options) const {
  const Tokenizer& tokenizer = *task_.tokenizer;
  const WindowedDocument d = plan_document(tokenizer, document, options, task_.encode.max_length);
  std::vector<Classification> results = classify_encoded(d.windows.size(), d.encoder(tokenizer));
  DocumentClassification out;
  out.content_tokens = d.text.size();
  for (size_t i = 0; i < d.windows.size(); ++i) {
    const TokenRange r = d.windows[i];
    WindowClassification w{r, 0, 0, std::move(results[i])};
    if (r.end > r.begin) {
      w.byte_begin = d.text.offsets[r.begin].begin;
      w.byte_end = d.text.offsets[r.end - 1].end;
    }
    out.windows.push_back(std::move(w));
  }
  return out;
}

std::vector<Classification> SequenceClassifier::classify(const std::vector<std::string_view>& texts) const {
  return classify_encoded(texts.size(), [&](size_t first, size_t last) {
    return task_.tokenizer->encode_batch({texts.begin() + first, texts.begin() + last}, task_.encode);
  });
}

std::vector<Classification> SequenceClassifier::classify_pairs(const std::vector<TextPair>& pairs) const {
  return classify_encoded(pairs.size(), [&](size_t first, size_t last) {
    std::vector<Encoding> encodings;
    for (size_t i = first; i < last; ++i)
      encodings.push_back(task_.tokenizer->encode_pair(pairs[i].first, pairs[i].second, task_.encode));
    return encodings;
  });
}

}  // namespace semroute
