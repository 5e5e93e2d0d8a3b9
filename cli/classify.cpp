// `semroute classify` (sequence classification) and `semroute tokens`
// (token classification and entity spans) on real text.
#include <cstdio>

#include "cli.h"
#include "semroute/error.h"
#include "server/answer_json.h"
#include "tasks/sequence_classifier.h"
#include "tasks/token_classifier.h"

namespace semroute::cli {
namespace {

std::vector<std::string_view> texts_of(const Args& args, const char* usage) {
  if (args.positional.size() < 2) throw InvalidInput(usage);
  return std::vector<std::string_view>(args.positional.begin() + 1, args.positional.end());
}

std::vector<Classification> classify_texts(const SequenceClassifier& classifier, const Args& args,
                                           const std::vector<std::string_view>& texts) {
  if (args.pair.empty()) return classifier.classify(texts);
  std::vector<TextPair> pairs;
  for (auto t : texts) pairs.emplace_back(t, args.pair);
  return classifier.classify_pairs(pairs);
}

// Each result as JSON, for --json and for streamed input.
template <class Result, class ToJson>
std::vector<nlohmann::json> to_json(const std::vector<std::string_view>& texts, const std::vector<Result>& results,
                                    ToJson to_json_one) {
  std::vector<nlohmann::json> out;
  for (size_t i = 0; i < results.size(); ++i) out.push_back(to_json_one(texts[i], results[i]));
  return out;
}

void print_results(const std::vector<nlohmann::json>& results) {
  std::printf("%s\n", nlohmann::json({{"results", results}}).dump(2).c_str());
}

}  // namespace

// The classifier of MODEL_DIR, or with --head, the head of that directory
// bound to MODEL_DIR's encoder.
template <class Classifier>
std::shared_ptr<const Classifier> load_classifier(const Args& args) {
  const TaskOptions options = task_options(args);
  if (args.head.empty()) return Classifier::load(args.positional[0], options);
  if (!args.adapter.empty()) throw InvalidInput("--head binds a head to MODEL_DIR's encoder: it takes no --adapter");
  return Classifier::bind(Backbone::load(args.positional[0], options), args.head, options);
}

int run_classify(const Args& args) {
  const char* usage = "usage: semroute classify MODEL_DIR TEXT... | --input FILE | - [--pair TEXT] [--json]";
  if (args.positional.empty()) throw InvalidInput(usage);
  const auto classifier = load_classifier<SequenceClassifier>(args);
  const auto& labels = classifier->labels();
  if (args.windows) {
    if (!args.pair.empty()) throw InvalidInput("--windows classifies single documents, not --pair");
    const WindowOptions options{args.window_size, args.overlap, args.max_document_tokens};
    const auto answer = [&](const std::vector<std::string_view>& texts) {
      std::vector<nlohmann::json> out;
      for (auto t : texts) out.push_back(windows_json(t, classifier->classify_windows(t, options), labels,
                                                      classifier->scoring()));
      return out;
    };
    if (reads_input(args, 1)) return stream_texts(args, answer);
    print_results(answer(texts_of(args, usage)));
    return 0;
  }
  const auto answer = [&](const std::vector<std::string_view>& texts) {
    return to_json(texts, classify_texts(*classifier, args, texts),
                   [&](std::string_view t, const Classification& r) {
                     return classification_json(t, r, labels, classifier->scoring());
                   });
  };
  if (reads_input(args, 1)) return stream_texts(args, answer);
  const auto texts = texts_of(args, usage);
  if (args.json) {
    print_results(answer(texts));
    return 0;
  }
  const auto results = classify_texts(*classifier, args, texts);
  if (classifier->scoring() == Scoring::kSigmoid) std::printf("(multi-label: each label scored on its own)\n");
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    std::printf("%-12s %.4f  %s\n", r.label.c_str(), r.confidence, std::string(texts[i]).c_str());
    for (size_t k = 0; k < labels.size(); ++k) std::printf("    %-12s %.4f\n", labels[k].c_str(), r.probabilities[k]);
  }
  return 0;
}

int run_tokens(const Args& args) {
  const char* usage = "usage: semroute tokens MODEL_DIR TEXT... | --input FILE | - [--json]";
  if (args.positional.empty()) throw InvalidInput(usage);
  const auto classifier = load_classifier<TokenClassifier>(args);
  if (args.windows) {  // each text a long document: one result, entities over the whole of it
    const WindowOptions options{args.window_size, args.overlap, args.max_document_tokens};
    const auto answer = [&](const std::vector<std::string_view>& texts) {
      std::vector<nlohmann::json> out;
      for (auto t : texts) {
        const DocumentTokens d = classifier->classify_windows(t, options);
        nlohmann::json j = token_result_json(t, d.result), windows = nlohmann::json::array();
        for (const auto& w : d.windows) windows.push_back({w.begin, w.end});
        j["content_tokens"] = d.content_tokens;
        j["windows"] = windows;
        out.push_back(std::move(j));
      }
      return out;
    };
    if (reads_input(args, 1)) return stream_texts(args, answer);
    print_results(answer(texts_of(args, usage)));
    return 0;
  }
  const auto answer = [&](const std::vector<std::string_view>& texts) {
    return to_json(texts, classifier->classify(texts), token_result_json);
  };
  if (reads_input(args, 1)) return stream_texts(args, answer);
  const auto texts = texts_of(args, usage);
  if (args.json) {
    print_results(answer(texts));
    return 0;
  }
  const auto results = classifier->classify(texts);
  for (size_t i = 0; i < results.size(); ++i) {
    std::printf("%s\n", std::string(texts[i]).c_str());
    for (const auto& e : results[i].entities)
      std::printf("  %-10s [%zu, %zu) %.4f  %s\n", e.type.c_str(), e.begin, e.end, e.score,
                  nlohmann::json(e.text).dump().c_str());
    if (results[i].entities.empty()) std::printf("  (no entities)\n");
  }
  return 0;
}

}  // namespace semroute::cli
