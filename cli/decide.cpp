// `semroute decide`: a decision model's answers to typed questions about a
// state (docs/decisions.md), in process: the request /v1/decisions takes
// ({state, questions}), the answers as JSON.
#include <algorithm>
#include <cstdio>
#include <optional>

#include "cli.h"
#include "core/file_input.h"
#include "runtime/decision2.h"
#include "runtime/vela2.h"
#include "semroute/error.h"

namespace semroute::cli {
namespace {

constexpr const char* kDecideUsage =
    "usage: semroute decide MODEL_DIR (REQUEST.json | - | --input REQUESTS.jsonl) [--max-tokens N]\n"
    "       semroute decide MODEL_DIR --questions QUESTIONS.json (--state TEXT | --input STATES) [--max-tokens N]\n"
    "A Vela 2.0 or Decision 2.0 package's answers (docs/decisions.md) to REQUEST's {\"state\": ..., \"questions\": {ID: {type,\n"
    "instructions, criteria | choices | levels | labels, over, threshold} | {preset, over}}}: choice, noul, score, set\n"
    "and span questions. Prints {\"answers\", \"usage\", \"spans\", \"sets\", \"thresholds\"}; a question that does not\n"
    "validate answers invalid_question.\n"
    "--input: one request per line, the model loaded once; a JSON line per request, with its \"line\" (or an\n"
    "\"error\": the others are still answered; exit 1). With --questions, the same questions about each state:\n"
    "--state's text, or each line of --input (a JSON string, object or array, else the line's text).\n"
    "--max-tokens: the scan budget of a part read in windows (default four inputs).";

constexpr size_t kMaxRequestBytes = size_t{64} << 20;

DecisionJson decide_request(const DecisionModel& model, const DecisionJson& request, const DecideOptions& options) {
  const DecisionPlan plan =
      plan_decision(request.value("state", DecisionJson()), request.value("questions", DecisionJson()), &model);
  size_t input_tokens = 0;
  DecisionJson answered = decision_answers(plan, decide_plan(model, plan, &input_tokens, options));
  DecisionJson out = {{"answers", std::move(answered["answers"])}, {"usage", {{"input_tokens", input_tokens}, {"output_tokens", 0}}}};
  answered.erase("answers");
  out.update(answered);  // spans, sets, thresholds
  return out;
}

// A line of --input with --questions: its state (JSON when it parses as a
// string, object or array, else its text).
DecisionJson state_of_line(std::string_view line) {
  DecisionJson state = DecisionJson::parse(line, nullptr, false);
  if (state.is_discarded() || !(state.is_string() || state.is_object() || state.is_array()))
    return DecisionJson(std::string(line));
  return state;
}

// Every line of `source` a request (or, with `questions`, a state): one JSON
// line each, in order.
int decide_lines(const DecisionModel& model, const std::string& source, const DecisionJson* questions,
                 const DecideOptions& options) {
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
      out = questions != nullptr ? decide_request(model, {{"state", state_of_line(line)}, {"questions", *questions}}, options)
                                 : decide_request(model, parse_decision_request(line), options);
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
  const Options args = parse_options(argv, kDecideUsage, {"input", "questions", "state", "max-tokens"});
  const bool request_file = !args.has("input") && !args.has("questions");
  if (args.positional.size() != (request_file ? 2 : 1) || args.has("state") != (args.has("questions") && !args.has("input")))
    throw InvalidInput(kDecideUsage);
  DecideOptions options;
  options.scan_tokens = static_cast<size_t>(args.integer("max-tokens", 0));
  std::optional<DecisionJson> questions;
  if (args.has("questions")) questions = parse_decision_request(read_input(args.get("questions"), kMaxRequestBytes));
  const auto model = load_decision_model(args.positional[0]);
  if (!model) throw InvalidInput(args.positional[0] + ": not a Vela 2.0 or Decision 2.0 package");
  if (args.has("input")) return decide_lines(*model, args.get("input"), questions ? &*questions : nullptr, options);
  const DecisionJson request = questions ? DecisionJson{{"state", args.get("state")}, {"questions", *questions}}
                                         : parse_decision_request(read_input(args.positional[1], kMaxRequestBytes));
  std::printf("%s\n", decide_request(*model, request, options).dump().c_str());
  return 0;
}

}  // namespace semroute::cli
