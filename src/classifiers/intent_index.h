// Few-shot ("vector track") intents: each intent is a name and a handful of
// example sentences, embedded once; a query is matched by k-nearest
// neighbours over all examples, aggregated per intent, with a threshold.
//
// Aggregation of an intent's score from the query's top-k examples:
//   kMax      the best example of the intent;
//   kMeanTopK the mean over the intent's examples among the top k;
//   kVote     the intent's share of the top k (ties: higher max score).
// The result names the best intent (empty when its score is below the
// threshold), its score, the runner-up and the margin between them.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "classifiers/vector_index.h"
#include "tasks/embedder.h"

namespace semroute {

struct Intent {
  std::string name;
  std::vector<std::string> examples;
};

enum class Aggregation { kMax, kMeanTopK, kVote };

struct IntentOptions {
  int64_t k = 5;
  float threshold = 0.0f;
  Aggregation aggregation = Aggregation::kMax;
};

struct IntentMatch {
  std::string intent;  // "" when nothing reaches the threshold
  float score = 0;
  std::string runner_up;
  float margin = 0;    // score − runner-up's score
  std::vector<std::pair<std::string, float>> scores;  // every intent seen in the top k, best first
};

struct IntentSet {
  std::vector<Intent> intents;
  IntentOptions options;
  // YAML: intents: [{name: …, examples: [...]}], optional k, threshold,
  // aggregation (max | mean | vote). Throws LoadError with the file name.
  static IntentSet from_yaml(const std::filesystem::path& path);
};

class IntentIndex {
 public:
  // Embeds every example with `embedder` (batched). Throws InvalidInput for
  // an empty intent list, an intent without examples, or duplicate names.
  IntentIndex(std::shared_ptr<const Embedder> embedder, const IntentSet& set);

  IntentMatch match(std::string_view text) const;
  IntentMatch match_vector(const float* embedding, int64_t dimension) const;

  const std::vector<std::string>& intent_names() const { return names_; }
  int64_t example_count() const { return index_.size(); }

 private:
  std::shared_ptr<const Embedder> embedder_;
  IntentOptions options_;
  std::vector<std::string> names_;
  std::vector<int64_t> intent_of_row_;
  VectorIndex index_;
};

Aggregation parse_aggregation(const std::string& name);

}  // namespace semroute
