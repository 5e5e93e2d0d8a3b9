// `semroute decide`: a decision model's answers to typed questions about a
// state (docs/decisions.md), in process: the request /v1/decisions takes
// ({state, questions}), the answers as JSON.
#include <algorithm>
#include <cstdio>

#include "cli.h"
#include "core/file_input.h"
#include "runtime/vela2.h"
#include "semroute/error.h"

namespace semroute::cli {
namespace {

constexpr const char* kDecideUsage =
    "usage: semroute decide MODEL_DIR REQUEST.json | -\n"
    "A Vela 2.0 package's answers (docs/decisions.md) to REQUEST's {\"state\": ..., \"questions\": {ID: {type,\n"
    "instructions, criteria | choices | levels | labels, over, threshold}}}: choice, noul, score and set questions.\n"
    "Prints {\"answers\", \"sets\", \"thresholds\"}; a question that does not validate answers invalid_question.";

constexpr size_t kMaxRequestBytes = size_t{64} << 20;

DecisionJson answer_json(const DecisionAnswer& a, DecisionJson& sets, DecisionJson& thresholds) {
  DecisionJson out = {{"type", question_kind_name(a.kind)}};
  if (a.error != ItemError::kNone) {
    out["error"] = item_error_name(a.error);
    return out;
  }
  DecisionJson probabilities = DecisionJson::object();
  for (const auto& [name, p] : a.probabilities) probabilities[name] = p;
  switch (a.kind) {
    case QuestionKind::kChoice:
      out.update({{"choice", a.choice}, {"confidence", a.confidence}, {"probabilities", probabilities}});
      if (a.abstain_probability) out["abstain_probability"] = *a.abstain_probability;
      break;
    case QuestionKind::kNoul: out["noul"] = a.noul; break;
    case QuestionKind::kScore:
      out.update({{"score", a.score}, {"confidence", a.confidence}, {"probabilities", probabilities}});
      break;
    case QuestionKind::kSet:
      sets[a.id] = {{"selected", a.selected}, {"probabilities", probabilities}};
      thresholds[a.id] = a.threshold;
      return nullptr;
  }
  return out;
}

}  // namespace

int run_decide(const std::vector<std::string>& argv) {
  if (std::find(argv.begin(), argv.end(), "--help") != argv.end()) {
    std::printf("%s\n", kDecideUsage);
    return 0;
  }
  const Options args = parse_options(argv, kDecideUsage, {});
  if (args.positional.size() != 2) throw InvalidInput(kDecideUsage);
  const DecisionJson request = parse_decision_request(read_input(args.positional[1], kMaxRequestBytes));
  const auto model = Vela2Model::load(args.positional[0]);
  const std::vector<StatePart> parts = decision_state(request.value("state", DecisionJson()));
  const DecisionJson questions = request.value("questions", DecisionJson());
  if (!questions.is_object() || questions.empty()) throw InvalidInput("\"questions\": an object of at least one question");
  DecisionJson answers = DecisionJson::object(), sets = DecisionJson::object(), thresholds = DecisionJson::object();
  std::vector<DecisionQuestion> valid;
  for (const auto& [id, question] : questions.items()) {
    try {
      valid.push_back(decision_question(id, question, parts));
    } catch (const InvalidInput& e) {
      answers[id] = {{"type", question.is_object() ? question.value("type", DecisionJson()) : DecisionJson()},
                     {"error", "invalid_question"},
                     {"message", e.what()}};
    }
  }
  for (const DecisionAnswer& a : model->decide(parts, valid)) {
    DecisionJson out = answer_json(a, sets, thresholds);
    if (a.kind == QuestionKind::kSet && a.error == ItemError::kNone) {
      for (const auto& [name, p] : a.probabilities) answers[a.id + "." + name] = {{"type", "noul"}, {"noul", p}};
    } else {
      answers[a.id] = std::move(out);
    }
  }
  std::printf("%s\n", DecisionJson({{"answers", answers}, {"sets", sets}, {"thresholds", thresholds}}).dump().c_str());
  return 0;
}

}  // namespace semroute::cli
