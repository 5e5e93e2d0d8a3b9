// Held-out scores: accuracy and per-class / macro F1 for classes, and
// entity-level precision / recall / F1 per type for BIO token labels
// (exact span match, as seqeval's default mode counts them).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace semroute::training {

struct ClassScore {
  std::string name;
  double precision = 0, recall = 0, f1 = 0;
  int64_t support = 0;  // gold items of this class
};

struct Metrics {
  int64_t count = 0;     // examples (sequences) or tokens scored
  double loss = 0;       // mean cross-entropy (the model's; 0 for a baseline)
  double accuracy = 0;   // of examples, or of tokens
  double macro_f1 = 0;   // mean F1 over the classes / entity types with support
  double micro_f1 = 0;   // entity-level F1 over all spans (token tasks)
  std::vector<ClassScore> classes;
  nlohmann::json to_json() const;
  static Metrics from_json(const nlohmann::json& j);  // to_json's inverse (classes in name order)
};

// One gold and one predicted class per item.
Metrics class_metrics(const std::vector<int64_t>& gold, const std::vector<int64_t>& predicted,
                      const std::vector<std::string>& labels);

// Per sequence, gold and predicted BIO ids per token (gold kIgnore: not
// scored). Entities are maximal runs: B-X starts one, I-X continues a run of
// X and starts one after anything else, O ends it.
Metrics entity_metrics(const std::vector<std::vector<int64_t>>& gold, const std::vector<std::vector<int64_t>>& predicted,
                       const std::vector<std::string>& labels);

// Scores by text length (UTF-8 bytes), for classes that differ in length:
// per bucket ([0, edges[0]), [edges[0], edges[1]), …) the count, accuracy and
// each class's support and recall.
nlohmann::json scores_by_length(const std::vector<int64_t>& gold, const std::vector<int64_t>& predicted,
                                const std::vector<size_t>& text_bytes, const std::vector<std::string>& labels,
                                const std::vector<size_t>& edges);

}  // namespace semroute::training
