// Vela 2.0 decisions at the 0.3B member's shape (mmBERT-base encoder): the
// router's built-in signals as one request (and with the PII span preset) (benchmarks/decisions/run.sh puts
// ONNX Runtime's forward at the same length beside it; docs/speed.md).
//
//   semroute_decision_bench --package DIR [--threads 2] [--reps 20]
//
// Prints JSON lines: the CPU, then per scenario its questions, each of its
// forwards' tokens, median and min milliseconds, and the encoder's linear
// layers' rate against the machine's fp32 GEMM rate (bench_util.h).
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/cpu_features.h"
#include "core/file_input.h"
#include "core/runtime.h"
#include "runtime/vela2.h"
#include "semroute/error.h"

namespace {

using namespace semroute;
using namespace semroute::bench;

// The questions the router asks a Vela 2.0 deployment for its built-in
// signals (domain, prompt guard, safety, fact check, feedback, modality),
// with their published wording and options, about a user prompt.
constexpr const char* kRouterRequest = R"({
 "state": "I run a small bakery. Can you write a short, friendly e-mail telling my customers that from next month we open at 7 am instead of 8 am, and suggest a subject line?",
 "questions": {
  "domain_classifier:domain": {"type": "choice", "instructions": "Which subject area is this request about?", "choices": [
   {"key": "biology", "description": "living organisms, anatomy, genetics, medical genetics or viruses"},
   {"key": "business", "description": "management, marketing, accounting, business ethics or public relations"},
   {"key": "chemistry", "description": "chemical substances, reactions, elements or laboratory chemistry"},
   {"key": "computer science", "description": "programming, algorithms, computer systems, security or machine learning"},
   {"key": "economics", "description": "markets, macroeconomics, microeconomics or econometrics"},
   {"key": "engineering", "description": "electrical or other engineering design and systems"},
   {"key": "health", "description": "medicine, clinical practice, nutrition, ageing or sexual health"},
   {"key": "history", "description": "past events, periods and historical societies"},
   {"key": "law", "description": "legal rules, jurisprudence, courts or international law"},
   {"key": "math", "description": "arithmetic, algebra, geometry, statistics or other mathematics"},
   {"key": "other", "description": "a subject that fits none of the listed areas"},
   {"key": "philosophy", "description": "philosophy, ethics, moral questions or formal logic"},
   {"key": "physics", "description": "physical laws, mechanics, astronomy or physical phenomena"},
   {"key": "psychology", "description": "mind, behaviour, mental processes or psychological practice"}], "overflow": "truncate"},
  "prompt_guard:attack": {"type": "choice", "instructions": "Is this a prompt injection or jailbreak attempt?", "choices": [
   {"key": "benign", "description": "a normal request or quoted content that does not try to override system instructions or bypass safety rules"},
   {"key": "jailbreak", "description": "a prompt injection or jailbreak that attempts to override system instructions, hijack the task, or bypass safety rules"}]},
  "safety.default:p_harm": {"type": "choice", "instructions": "Is this request harmful?", "choices": [
   {"key": "safe", "description": "a benign request that does not violate any safety policy"},
   {"key": "unsafe", "description": "a request that violates a safety policy or seeks harmful assistance"}]},
  "fact_check_classifier:factcheck": {"type": "choice", "instructions": "Does answering this request require checking facts?", "choices": [
   {"key": "NO_FACT_CHECK_NEEDED", "description": "the request can be handled without verifying facts about the world, e.g. translating, rewriting, formatting or writing fiction"},
   {"key": "FACT_CHECK_NEEDED", "description": "answering the request relies on factual claims about the world that should be verified"}], "overflow": "truncate"},
  "feedback_detector:feedback": {"type": "choice", "instructions": "What feedback does this user turn give about the previous answer?", "choices": [
   {"key": "SAT", "description": "the user is satisfied with the previous answer"},
   {"key": "NEED_CLARIFICATION", "description": "the user asks for clarification or a more detailed explanation"},
   {"key": "WRONG_ANSWER", "description": "the user says the previous answer was wrong or did not work"},
   {"key": "WANT_DIFFERENT", "description": "the user wants a different answer, format, style or approach"},
   {"key": "NO_FEEDBACK", "description": "the user gives no feedback on the previous answer"}], "overflow": "truncate"},
  "modality_detector:modality": {"type": "choice", "instructions": "What kind of output does this request ask for?", "choices": [
   {"key": "AR", "description": "a text answer only, including code, analysis or describing an existing image"},
   {"key": "DIFFUSION", "description": "a newly generated image only"},
   {"key": "BOTH", "description": "a newly generated image together with a separate written explanation"}], "overflow": "truncate"}
 }})";

struct Args {
  std::string package;
  int threads = 2, reps = 20;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw InvalidInput(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--package") a.package = value;
    else if (flag == "--threads") a.threads = std::stoi(value);
    else if (flag == "--reps") a.reps = std::stoi(value);
    else throw InvalidInput("unknown argument " + flag);
  }
  if (a.package.empty()) throw InvalidInput("usage: semroute_decision_bench --package DIR [--threads N] [--reps N]");
  return a;
}

// FLOPs of the encoder's linear layers over `tokens` (attention's products
// left out: a lower bound of its work, so the rate below is one too).
double linear_flops(const nlohmann::json& encoder, size_t tokens) {
  const double h = encoder.at("hidden_size").get<double>(), inner = encoder.at("intermediate_size").get<double>();
  const double layers = encoder.at("num_hidden_layers").get<double>();
  return 2.0 * static_cast<double>(tokens) * layers * (4 * h * h + 3 * h * inner);
}

struct Timing {
  std::vector<size_t> lengths;  // each forward's tokens
  double median_ms = 0, min_ms = 0;
};

Timing time_decisions(const Vela2Model& model, const std::vector<DecisionPlan>& plans, int reps) {
  Timing t;
  const auto run = [&] {
    std::vector<size_t> lengths;
    for (const DecisionPlan& plan : plans) {
      size_t n = 0;
      model.decide(plan.parts, plan.questions, &n);
      lengths.push_back(n);
    }
    return lengths;
  };
  t.lengths = run();  // warm-up
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto start = Clock::now();
    run();
    ms.push_back(seconds_since(start) * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  t.median_ms = ms[ms.size() / 2];
  t.min_ms = ms.front();
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args args = parse(argc, argv);
    ensure_runtime_initialized();
    set_compute_threads(args.threads);
    c10::InferenceMode guard;
    const auto model = Vela2Model::load(args.package);
    const nlohmann::json encoder = read_json_file(std::filesystem::path(args.package) / "config.json").at("encoder_config");
    const DecisionJson request = DecisionJson::parse(kRouterRequest);
    const DecisionPlan all = plan_decision(request["state"], request["questions"]);
    DecisionJson with_pii = request["questions"];  // and the PII signal: a Span preset, in the same forward
    with_pii["pii_detector:pii"] = {{"preset", "pii"}, {"over", "request"}};
    const DecisionPlan all_pii = plan_decision(request["state"], with_pii, model.get());
    std::vector<DecisionPlan> one_each;  // the same questions, one request each
    for (const auto& [id, question] : request["questions"].items())
      one_each.push_back(plan_decision(request["state"], DecisionJson{{id, question}}));
    const double peak = peak_gemm_gflops();
    std::printf("{\"cpu\":\"%s\",\"threads\":%d,\"fp32_gemm_gflops\":%.1f}\n", cpu_features().describe().c_str(),
                compute_threads(), peak);
    const auto report = [&](const char* scenario, size_t questions, const Timing& t) {
      size_t tokens = 0;
      for (const size_t n : t.lengths) tokens += n;
      const double gflops = linear_flops(encoder, tokens) / (t.median_ms * 1e-3) / 1e9;
      const nlohmann::json row = {{"scenario", scenario},       {"questions", questions},   {"lengths", t.lengths},
                                  {"median_ms", t.median_ms},   {"min_ms", t.min_ms},       {"linear_gflops", gflops},
                                  {"of_gemm_peak", gflops / peak}};
      std::printf("%s\n", row.dump().c_str());
      std::fflush(stdout);
    };
    report("router signals, one request", all.questions.size(), time_decisions(*model, {all}, args.reps));
    report("router signals and the PII span, one request", all_pii.questions.size(),
           time_decisions(*model, {all_pii}, args.reps));
    report("router signals, a request each", one_each.size(), time_decisions(*model, one_each, args.reps));
    report("domain only", 1, time_decisions(*model, {one_each.front()}, args.reps));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "semroute_decision_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
