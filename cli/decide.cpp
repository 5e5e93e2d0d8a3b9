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

DecisionJson decide_request(const Vela2Model& model, const DecisionJson& request) {
  const DecisionPlan plan = plan_decision(request.value("state", DecisionJson()), request.value("questions", DecisionJson()));
  size_t input_tokens = 0;
  DecisionJson out = decision_answers(plan, model.decide(plan.parts, plan.questions, &input_tokens));
  out["usage"] = {{"input_tokens", input_tokens}, {"output_tokens", 0}};
  return out;
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
