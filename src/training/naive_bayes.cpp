#include "training/naive_bayes.h"

#include <cmath>
#include <limits>

namespace semroute::training {
namespace {
constexpr int64_t kPositionStride = int64_t{1} << 40;  // keeps left / self / right features apart
constexpr int64_t kEdge = kPositionStride - 1;          // "no neighbour"
}  // namespace

std::vector<int64_t> NaiveBayes::features(const Encoded& example, size_t t) const {
  if (kind_ == Objective::kSequence) return example.ids;
  const auto at = [&](size_t i, int64_t offset) {
    const int64_t j = static_cast<int64_t>(i) + offset;
    const bool inside = j >= 0 && j < static_cast<int64_t>(example.ids.size());
    return (offset + 1) * kPositionStride + (inside ? example.ids[static_cast<size_t>(j)] : kEdge);
  };
  return {at(t, -1), at(t, 0), at(t, 1)};
}

void NaiveBayes::count(const std::vector<int64_t>& features, int64_t label) {
  const auto c = static_cast<size_t>(label);
  class_counts_[c] += 1;
  for (const int64_t f : features) {
    auto& counts = feature_counts_[f];
    if (counts.empty()) counts.assign(classes_, 0.0);
    counts[c] += 1;
    class_feature_totals_[c] += 1;
  }
}

void NaiveBayes::fit(const std::vector<Encoded>& examples) {
  class_counts_.assign(classes_, 0.0);
  class_feature_totals_.assign(classes_, 0.0);
  feature_counts_.clear();
  for (const Encoded& e : examples) {
    if (kind_ == Objective::kSequence) {
      count(features(e, 0), e.label);
      continue;
    }
    for (size_t t = 0; t < e.ids.size(); ++t)
      if (e.targets[t] != kIgnore) count(features(e, t), e.targets[t]);
  }
}

int64_t NaiveBayes::best_class(const std::vector<int64_t>& features) const {
  const double total = [&] {
    double sum = 0;
    for (const double c : class_counts_) sum += c;
    return sum;
  }();
  const auto vocabulary = static_cast<double>(feature_counts_.size() + 1);
  int64_t best = 0;
  double best_score = -std::numeric_limits<double>::infinity();
  for (size_t c = 0; c < classes_; ++c) {
    if (class_counts_[c] == 0) continue;
    double score = std::log(class_counts_[c] / total);
    const double denominator = std::log(class_feature_totals_[c] + vocabulary);
    for (const int64_t f : features) {
      const auto it = feature_counts_.find(f);
      score += std::log((it == feature_counts_.end() ? 0.0 : it->second[c]) + 1.0) - denominator;
    }
    if (score > best_score) best_score = score, best = static_cast<int64_t>(c);
  }
  return best;
}

std::vector<int64_t> NaiveBayes::predict(const Encoded& example) const {
  if (kind_ == Objective::kSequence) return {best_class(features(example, 0))};
  std::vector<int64_t> tags(example.ids.size(), 0);
  for (size_t t = 0; t < example.ids.size(); ++t) tags[t] = best_class(features(example, t));
  return tags;
}

}  // namespace semroute::training
