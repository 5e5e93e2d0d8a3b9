// The baseline every trained model is reported against: multinomial naive
// Bayes (Laplace smoothing) on the same token ids the model reads. For
// sequences the features are the text's tokens; for token labels, each
// token's own id and its left and right neighbours' ids.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "training/training_data.h"

namespace semroute::training {

class NaiveBayes {
 public:
  NaiveBayes(Objective kind, size_t classes) : kind_(kind), classes_(classes) {}
  void fit(const std::vector<Encoded>& examples);
  // One class per example (sequence task), or one per token (token task).
  std::vector<int64_t> predict(const Encoded& example) const;

 private:
  // Feature ids of token t (token task) or of the whole example.
  std::vector<int64_t> features(const Encoded& example, size_t t) const;
  int64_t best_class(const std::vector<int64_t>& features) const;
  void count(const std::vector<int64_t>& features, int64_t label);

  Objective kind_;
  size_t classes_;
  std::vector<double> class_counts_;
  std::vector<double> class_feature_totals_;
  std::unordered_map<int64_t, std::vector<double>> feature_counts_;  // feature -> per-class count
};

}  // namespace semroute::training
