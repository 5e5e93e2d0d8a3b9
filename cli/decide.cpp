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
    "usage: semroute decide MODEL_DIR (REQUEST.json | - | --input REQUESTS.jsonl)\n"
    "A Vela 2.0 package's answers (docs/decisions.md) to REQUEST's {\"state\": ..., \"questions\": {ID: {type,\n"
    "instructions, criteria | choices | levels | labels, over, threshold}}}: choice, noul, score and set questions.\n"
    "Prints {\"answers\", \"sets\", \"thresholds\"}; a question that does not validate answers invalid_question.\n"
    "--input: one request per line, the model loaded once; a JSON line per request, with its \"line\" (or an\n"
    "\"error\": the others are still answered; exit 1).";

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

DecisionJson decide_request(const Vela2Model& model, const DecisionJson& request) {
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
  for (const DecisionAnswer& a : model.decide(parts, valid)) {
    DecisionJson out = answer_json(a, sets, thresholds);
    if (a.kind == QuestionKind::kSet && a.error == ItemError::kNone) {
      for (const auto& [name, p] : a.probabilities) answers[a.id + "." + name] = {{"type", "noul"}, {"noul", p}};
    } else {
      answers[a.id] = std::move(out);
    }
  }
  return {{"answers", answers}, {"sets", sets}, {"thresholds", thresholds}};
}

// Every line of `source` a request: one JSON line each, in order.
int decide_lines(const Vela2Model& model, const std::string& source) {
  const std::string all = read_input(source, kMaxRequestBytes);
  size_t failures = 0, number = 0;
  for (size_t begin = 0; begin < all.size();) {
    const size_t end = std::min(all.find('\n', begin), all.size());
    const std::string_view line = std::string_view(all).substr(begin, end - begin);
    begin = end + 1;
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    DecisionJson out;
    try {
      out = decide_request(model, parse_decision_request(line));
    } catch (const Error& e) {
      out = {{"error", e.what()}};
      ++failures;
    }
    out["line"] = number;
    std::printf("%s\n", out.dump().c_str());
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int run_decide(const std::vector<std::string>& argv) {
  if (std::find(argv.begin(), argv.end(), "--help") != argv.end()) {
    std::printf("%s\n", kDecideUsage);
    return 0;
  }
  const Options args = parse_options(argv, kDecideUsage, {"input"});
  if (args.positional.size() != (args.has("input") ? 1 : 2)) throw InvalidInput(kDecideUsage);
  const auto model = Vela2Model::load(args.positional[0]);
  if (args.has("input")) return decide_lines(*model, args.get("input"));
  const DecisionJson request = parse_decision_request(read_input(args.positional[1], kMaxRequestBytes));
  std::printf("%s\n", decide_request(*model, request).dump().c_str());
  return 0;
}

}  // namespace semroute::cli
