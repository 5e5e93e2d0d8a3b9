// `semroute unified` (the DualPathUnifiedClassifier on a YAML config) and
// `semroute merge-adapter` (PEFT merge_and_unload as a file operation).
#include <cstdio>

#include "classifiers/unified_classifier.h"
#include "cli.h"
#include "adapters/merge_adapter.h"
#include "semroute/error.h"
#include "server/answer_json.h"

namespace semroute::cli {
namespace {

void print_answer(const TaskAnswer& a) {
  std::printf("  %-10s %-11s %7.2f ms  ", a.task.c_str(), path_name(a.path), a.latency_ms);
  if (!a.error.empty()) {
    std::printf("error: %s\n", a.error.c_str());
    return;
  }
  if (a.kind == TaskKind::kSequence) {
    std::printf("%s %.4f", a.classification.label.c_str(), a.classification.confidence);
    if (a.flagged) std::printf("  FLAGGED (risk %.4f)", a.risk);
  } else {
    std::printf("%zu entities", a.entities.size());
    for (const auto& e : a.entities) std::printf("  %s %s", e.type.c_str(), nlohmann::json(e.text).dump().c_str());
  }
  std::printf("\n      (%s)\n", a.reason.c_str());
}

}  // namespace

int run_unified(const Args& args) {
  const char* usage = "usage: semroute unified CONFIG.yaml TEXT... | --input FILE | - [--tasks a,b] [--accuracy] [--json]";
  if (args.positional.empty()) throw InvalidInput(usage);
  const auto classifier = UnifiedClassifier::load(UnifiedConfig::from_yaml(args.positional[0]));
  const UnifiedRequest request{split_list(args.tasks), args.accuracy};
  if (reads_input(args, 1)) {
    return stream_texts(args, [&](const std::vector<std::string_view>& texts) {
      std::vector<nlohmann::json> out;
      const auto results = classifier->classify(texts, request);
      for (size_t i = 0; i < results.size(); ++i) {
        nlohmann::json answers = nlohmann::json::array();
        for (const auto& a : results[i].answers) answers.push_back(task_answer_json(a, classifier->labels(a.task)));
        out.push_back({{"text", texts[i]}, {"tasks", answers}});
      }
      return out;
    });
  }
  if (args.positional.size() < 2) throw InvalidInput(usage);
  const std::vector<std::string_view> texts(args.positional.begin() + 1, args.positional.end());
  const auto results = classifier->classify(texts, request);
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    nlohmann::json answers = nlohmann::json::array();
    if (!args.json) std::printf("%s\n", std::string(texts[i]).c_str());
    for (const auto& a : results[i].answers) {
      answers.push_back(task_answer_json(a, classifier->labels(a.task)));
      if (!args.json) print_answer(a);
    }
    out.push_back({{"text", texts[i]}, {"tasks", answers}});
  }
  if (args.json) std::printf("%s\n", nlohmann::json({{"results", out}}).dump(2).c_str());
  return 0;
}

int run_merge_adapter(const Args& args) {
  if (args.positional.size() != 3) throw InvalidInput("usage: semroute merge-adapter BASE_DIR ADAPTER_DIR OUT_DIR");
  merge_adapter(args.positional[0], args.positional[1], args.positional[2]);
  std::printf("wrote %s\n", args.positional[2].c_str());
  return 0;
}

}  // namespace semroute::cli
