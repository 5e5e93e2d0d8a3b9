// Loading models the way the upstream library's slots expect them, and
// converting semroute's answers into its result structs.
#pragma once

#include <string>

#include "support.h"

namespace candle {

using Model = semroute::Model;

// Classifiers and token classifiers see at most 512 tokens (upstream's
// classification cap), or the model's own limit when that is shorter.
constexpr size_t kClassificationTokens = 512;

// A model directory loaded for `task` on the CPU (upstream's use_cpu=false
// falls back to the CPU too), seeing at most max_length tokens (or the
// model's limit when shorter; 0 = the model's limit).
std::unique_ptr<Model> load_model(const char* path, semroute_task task, size_t max_length = 0);
// The same with the 512-token classification cap.
std::unique_ptr<Model> load_classifier(const char* path, semroute_task task);

// Load parameters for `task`, max_length as given (0: the model's limit).
semroute_model_params params_for(semroute_task task, size_t max_length);
// Load parameters of a classifier in `dir` (the 512-token cap applied).
semroute_model_params classifier_params(const std::string& dir, semroute_task task);
// The base model directory a PEFT adapter directory names (relative to it).
std::string adapter_base(const std::string& adapter_dir);

// Upstream's result layouts of one classification.
ModernBertClassificationResult short_result(const semroute::Prediction& p);
ModernBertClassificationResultWithProbs result_with_probs(const semroute::Prediction& p);

// Entities as upstream's token results (ModernBertTokenEntity and
// BertTokenEntity share the layout): malloc'd array and strings.
template <class Entity>
Entity* entity_array(const std::vector<semroute::Entity>& entities) {
  Entity* out = zeroed_array<Entity>(entities.size());
  for (size_t i = 0; i < entities.size(); ++i) {
    const semroute::Entity& e = entities[i];
    out[i].entity_type = copy_string(e.type);
    out[i].start = static_cast<int>(e.begin);
    out[i].end = static_cast<int>(e.end);
    out[i].text = copy_string(e.text);
    out[i].confidence = e.score;
  }
  return out;
}

template <class Entity>
void free_entity_array(Entity* entities, int count) {
  if (entities == nullptr) return;
  for (int i = 0; i < count; ++i) {
    std::free(entities[i].entity_type);
    std::free(entities[i].text);
  }
  std::free(entities);
}

// Whether config.json at `config_path` is mmBERT's (ModernBERT with a
// 200k+ token vocabulary); with `require_32k` also 32768+ positions. False
// on any error.
bool is_mmbert_config(const char* config_path, bool require_32k) noexcept;

}  // namespace candle
