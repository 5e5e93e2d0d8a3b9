#include "classifiers/intent_index.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "classifiers/yaml_input.h"
#include "semroute/error.h"

namespace semroute {

Aggregation parse_aggregation(const std::string& name) {
  if (name == "max") return Aggregation::kMax;
  if (name == "mean") return Aggregation::kMeanTopK;
  if (name == "vote") return Aggregation::kVote;
  throw InvalidInput("unknown aggregation '" + name + "' (max, mean or vote)");
}

IntentSet IntentSet::from_yaml(const std::filesystem::path& path) {
  IntentSet set;
  try {
    const YAML::Node root = load_yaml_file(path);
    if (!root["intents"] || !root["intents"].IsSequence()) throw LoadError("no 'intents' list");
    for (const auto& node : root["intents"]) {
      Intent intent;
      intent.name = node["name"].as<std::string>();
      for (const auto& example : node["examples"]) intent.examples.push_back(example.as<std::string>());
      set.intents.push_back(std::move(intent));
    }
    if (root["k"]) set.options.k = root["k"].as<int64_t>();
    if (root["threshold"]) set.options.threshold = root["threshold"].as<float>();
    if (set.options.k < 1 || set.options.k > 10000) throw LoadError("'k' must be in [1, 10000]");
    if (!std::isfinite(set.options.threshold)) throw LoadError("'threshold' must be a finite number");
    if (root["aggregation"]) set.options.aggregation = parse_aggregation(root["aggregation"].as<std::string>());
  } catch (const YAML::Exception& e) {
    throw LoadError(path.string() + ": " + e.what(), ErrorCode::kInvalidModel);
  } catch (const Error& e) {
    throw LoadError(path.string() + ": " + e.what(), e.code());
  }
  return set;
}

IntentIndex::IntentIndex(std::shared_ptr<const Embedder> embedder, const IntentSet& set)
    : embedder_(std::move(embedder)), options_(set.options), index_(embedder_->defaults().dimension > 0
                                                                          ? embedder_->defaults().dimension
                                                                          : embedder_->hidden_size()) {
  if (set.intents.empty()) throw InvalidInput("an intent index needs at least one intent");
  if (options_.k <= 0) throw InvalidInput("intent k must be positive");
  std::set<std::string> seen;
  std::vector<std::string_view> texts;
  for (size_t i = 0; i < set.intents.size(); ++i) {
    const Intent& intent = set.intents[i];
    if (!seen.insert(intent.name).second) throw InvalidInput("intent '" + intent.name + "' is defined twice");
    if (intent.examples.empty()) throw InvalidInput("intent '" + intent.name + "' has no examples");
    names_.push_back(intent.name);
    for (const auto& example : intent.examples) {
      texts.push_back(example);
      intent_of_row_.push_back(static_cast<int64_t>(i));
    }
  }
  constexpr size_t kBatch = 32;
  for (size_t start = 0; start < texts.size(); start += kBatch) {
    const std::vector<std::string_view> chunk(texts.begin() + static_cast<long>(start),
                                              texts.begin() + static_cast<long>(std::min(texts.size(), start + kBatch)));
    const at::Tensor e = embedder_->embed(chunk);
    if (index_.size() == 0 && e.size(1) != index_.dimension()) index_ = VectorIndex(e.size(1));
    for (int64_t r = 0; r < e.size(0); ++r) index_.add(e.data_ptr<float>() + r * e.size(1), e.size(1));
  }
}

IntentMatch IntentIndex::match(std::string_view text) const {
  const at::Tensor e = embedder_->embed({text});
  return match_vector(e.data_ptr<float>(), e.size(1));
}

IntentMatch IntentIndex::match_vector(const float* embedding, int64_t dimension) const {
  const auto neighbors = index_.search(embedding, dimension, options_.k);
  struct Tally {
    float max = -2, sum = 0;
    int votes = 0;
  };
  std::map<int64_t, Tally> tallies;
  for (const auto& n : neighbors) {
    Tally& t = tallies[intent_of_row_[static_cast<size_t>(n.row)]];
    t.max = std::max(t.max, n.score);
    t.sum += n.score;
    ++t.votes;
  }
  std::vector<std::pair<int64_t, float>> ranked;
  for (const auto& [intent, t] : tallies) {
    float score = t.max;
    if (options_.aggregation == Aggregation::kMeanTopK) score = t.sum / static_cast<float>(t.votes);
    if (options_.aggregation == Aggregation::kVote) score = static_cast<float>(t.votes) / static_cast<float>(neighbors.size());
    ranked.emplace_back(intent, score);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return tallies.at(a.first).max > tallies.at(b.first).max;  // vote ties: the closer example wins
  });
  IntentMatch match;
  for (const auto& [intent, score] : ranked) match.scores.emplace_back(names_[static_cast<size_t>(intent)], score);
  if (ranked.empty()) return match;
  match.score = ranked[0].second;
  if (ranked.size() > 1) {
    match.runner_up = names_[static_cast<size_t>(ranked[1].first)];
    match.margin = ranked[0].second - ranked[1].second;
  } else {
    match.margin = ranked[0].second;
  }
  if (match.score >= options_.threshold) match.intent = names_[static_cast<size_t>(ranked[0].first)];
  return match;
}

}  // namespace semroute
