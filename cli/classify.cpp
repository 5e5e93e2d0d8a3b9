// `semroute classify` (sequence classification) and `semroute tokens`
// (token classification and entity spans) on real text.
#include <cstdio>

#include "cli.h"
#include "semroute/error.h"
#include "tasks/sequence_classifier.h"
#include "tasks/token_classifier.h"

namespace semroute::cli {
namespace {

std::vector<std::string_view> texts_of(const Args& args, const char* usage) {
  if (args.positional.size() < 2) throw InvalidInput(usage);
  return std::vector<std::string_view>(args.positional.begin() + 1, args.positional.end());
}

}  // namespace

int run_classify(const Args& args) {
  const auto texts = texts_of(args, "usage: semroute classify MODEL_DIR TEXT... [--pair TEXT] [--json]");
  const auto classifier = SequenceClassifier::load(args.positional[0], task_options(args));
  std::vector<Classification> results;
  if (args.pair.empty()) {
    results = classifier->classify(texts);
  } else {
    std::vector<TextPair> pairs;
    for (auto t : texts) pairs.emplace_back(t, args.pair);
    results = classifier->classify_pairs(pairs);
  }
  const auto& labels = classifier->labels();
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    nlohmann::json probs = nlohmann::json::object();
    for (size_t k = 0; k < labels.size(); ++k) probs[labels[k]] = r.probabilities[k];
    out.push_back({{"text", texts[i]}, {"label", r.label}, {"class_id", r.class_id}, {"confidence", r.confidence},
                   {"probabilities", probs}});
    if (!args.json) {
      std::printf("%-12s %.4f  %s\n", r.label.c_str(), r.confidence, std::string(texts[i]).c_str());
      for (size_t k = 0; k < labels.size(); ++k) std::printf("    %-12s %.4f\n", labels[k].c_str(), r.probabilities[k]);
    }
  }
  if (args.json) std::printf("%s\n", nlohmann::json({{"results", out}}).dump(2).c_str());
  return 0;
}

int run_tokens(const Args& args) {
  const auto texts = texts_of(args, "usage: semroute tokens MODEL_DIR TEXT... [--json]");
  const auto classifier = TokenClassifier::load(args.positional[0], task_options(args));
  const auto results = classifier->classify(texts);
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    nlohmann::json tokens = nlohmann::json::array(), entities = nlohmann::json::array();
    for (const auto& t : results[i].tokens)
      tokens.push_back({{"id", t.token_id}, {"token", t.token}, {"begin", t.offset.begin}, {"end", t.offset.end},
                        {"label", t.label}, {"probability", t.probability}});
    for (const auto& e : results[i].entities)
      entities.push_back({{"type", e.type}, {"begin", e.begin}, {"end", e.end}, {"text", e.text}, {"score", e.score}});
    out.push_back({{"text", texts[i]}, {"tokens", tokens}, {"entities", entities}});
    if (!args.json) {
      std::printf("%s\n", std::string(texts[i]).c_str());
      for (const auto& e : results[i].entities)
        std::printf("  %-10s [%zu, %zu) %.4f  %s\n", e.type.c_str(), e.begin, e.end, e.score,
                    nlohmann::json(e.text).dump().c_str());
      if (results[i].entities.empty()) std::printf("  (no entities)\n");
    }
  }
  if (args.json) std::printf("%s\n", nlohmann::json({{"results", out}}).dump(2).c_str());
  return 0;
}

}  // namespace semroute::cli
