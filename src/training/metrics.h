// Held-out scores: accuracy and per-class / macro F1 for classes, and
// entity-level precision / recall / F1 per type for BIO token labels
// (exact span match, as seqeval's default mode counts them).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "training/training_data.h"

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

// A binary alarm on a score in [0, 1] (the alarm class's probability):
// recall on the items that should raise it, false alarms on the others.
struct AlarmRates {
  double threshold = 0;  // an item raises the alarm when its score >= threshold
  double recall = 0, false_alarm_rate = 0;
  int64_t positives = 0, negatives = 0;
  nlohmann::json to_json() const;
};
AlarmRates alarm_rates(const std::vector<double>& scores, const std::vector<bool>& positive, double threshold);
// The threshold with the most recall whose false-alarm rate on these items
// is at most `max_false_alarm_rate`, and of those the highest (fewest false
// alarms); on a 3-decimal grid, so that it reads well in a config.
AlarmRates pick_threshold(const std::vector<double>& scores, const std::vector<bool>& positive,
                          double max_false_alarm_rate);

// Entities found in texts against the gold spans: span-level precision /
// recall / F1 (same type and bytes), and per text the entity types: how
// many texts have every gold type found, and the types found that the text
// does not hold ("extra types").
struct EntityReport {
  int64_t texts = 0;
  double precision = 0, recall = 0, f1 = 0;
  double all_types_found = 0;       // share of texts with gold spans whose every type was found
  double extra_types_per_text = 0;  // mean count of predicted types absent from the gold
  double texts_with_extra_types = 0;
  nlohmann::json to_json() const;
};
EntityReport entity_report(const std::vector<std::vector<LabeledSpan>>& gold,
                           const std::vector<std::vector<LabeledSpan>>& predicted);

}  // namespace semroute::training
