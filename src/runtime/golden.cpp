#include "runtime/golden.h"

#include <algorithm>
#include <cmath>

#include "core/file_input.h"
#include "semroute/error.h"

namespace semroute {
namespace {

constexpr const char* kGoldenFile = "golden_answers.json";
// The contract's golden inputs.
const std::vector<std::string_view> kGoldenTexts = {
    "Write a Python function that merges two sorted lists.",
    "Meine Telefonnummer ist 030 1234567 und ich wohne in Berlin."};
constexpr std::string_view kGroundedContext = "The Eiffel Tower is in Paris and was completed in 1889.";
constexpr std::string_view kGroundedQuestion = "When was the Eiffel Tower completed?";
constexpr std::string_view kGroundedAnswer = "It was completed in 1889 in Rome.";
constexpr std::string_view kRerankQuery = "How do I reset my password?";
const std::vector<std::string_view> kRerankDocuments = {"Open Settings, then Security, and choose Reset password.",
                                                        "Our offices are closed on public holidays."};

// The golden decision: a state of three parts and one question of each type.
constexpr std::string_view kGoldenDecision = R"({
  "state": {"request": "I am Ana Ruiz (ana.ruiz@example.com). Can I take paracetamol with ibuprofen?",
            "source": "Paracetamol and ibuprofen may be taken together at their usual doses.",
            "answer": "Yes, at the usual doses; ask a pharmacist if unsure."},
  "questions": {
    "domain": {"type": "choice", "instructions": "What is the subject of the request?",
               "criteria": {"health": "Medicine and health", "law": null, "other": "Anything else"}},
    "jailbreak": {"type": "noul", "instructions": "Is this request an attempt to bypass safety rules?"},
    "urgency": {"type": "score", "instructions": "How urgent is the request?", "levels": ["low", "medium", "high"]},
    "topics": {"type": "set", "instructions": "Which topics does it touch?", "over": "request",
               "criteria": {"medication": null, "billing": "money and payments"}}}})";

// Decision 2.0's golden request, as its packages' readiness check asks it.
constexpr std::string_view kGoldenDecision2 = R"({
  "state": "Write a Python function that merges two sorted lists and explain its running time.",
  "questions": {
    "domain": {"type": "choice", "instructions": "Which domain does this request belong to?",
               "criteria": {"code": "Programming", "math": "Mathematics", "other": "Anything else"}},
    "reasoning": {"type": "noul", "instructions": "Does answering this request need multi-step reasoning?"},
    "difficulty": {"type": "score", "instructions": "How difficult is this request?",
                   "levels": ["Trivial", "Moderate", "Hard"]}}})";

void add_list(GoldenValues& out, const std::string& prefix, const std::vector<float>& values) {
  for (size_t k = 0; k < values.size(); ++k) out[prefix + std::to_string(k)] = values[k];
}

}  // namespace

std::optional<GoldenValues> read_golden_answers(const std::filesystem::path& dir, const std::string& device_class) {
  const std::filesystem::path file = dir / kGoldenFile;
  if (!std::filesystem::exists(file)) return std::nullopt;
  const nlohmann::json doc = read_json_file(file);
  const nlohmann::json answers = doc.is_object() ? doc.value("answers", nlohmann::json()) : nlohmann::json();
  if (!answers.is_object()) throw LoadError(file.string() + ": expected {\"answers\": {device class: {key: value}}}");
  const auto it = answers.find(device_class);
  if (it == answers.end()) return std::nullopt;
  if (!it->is_object()) throw LoadError(file.string() + ": answers." + device_class + " must map keys to numbers");
  GoldenValues values;
  for (const auto& [key, value] : it->items()) {
    if (!value.is_number()) throw LoadError(file.string() + ": answers." + device_class + "." + key + " is not a number");
    values[key] = value.get<double>();
  }
  return values;
}

// Every head's answers (a bound head's keys start with its name; the
// primary's with none), all asked in one forward.
GoldenValues golden_values(const TaskHeads& heads) {
  std::vector<ClassifyItem> grounded(1), texts;
  grounded[0].form = ClassifyItem::Form::kGrounded;
  grounded[0].context = kGroundedContext;
  grounded[0].question = kGroundedQuestion;
  grounded[0].answer = kGroundedAnswer;
  for (const auto text : kGoldenTexts) texts.push_back(ClassifyItem{ClassifyItem::Form::kText, text, {}, {}, {}, {}});
  std::vector<HeadCall> calls;
  for (size_t h = 0; h < heads.heads().size(); ++h) {
    HeadCall call{h, heads.heads()[h]->grounding ? &grounded : &texts, {}};
    // The golden texts fit any model; a small test model reads their start.
    if (!heads.heads()[h]->grounding) call.request.overflow = OverflowPolicy::kTruncate;
    calls.push_back(call);
  }
  const auto answers = heads.classify_each(calls, RequestControl());
  GoldenValues out;
  for (size_t h = 0; h < answers.size(); ++h) {
    const std::string head = h == 0 ? "" : heads.heads()[h]->name + ".";
    for (size_t i = 0; i < answers[h].size(); ++i) {
      const ClassifyAnswer& a = answers[h][i];
      const std::string index = head + std::to_string(i) + ".";
      if (a.error != ItemError::kNone) out[index + "error"] = NAN;
      add_list(out, index + "probabilities.", a.probabilities);
      add_list(out, index + "scores.", a.scores);
      for (size_t n = 0; n < a.spans.size(); ++n) {
        const LabelledSpan& s = a.spans[n];
        out[index + "span." + std::to_string(n) + "." + s.label + "." + std::to_string(s.start) + "." +
            std::to_string(s.end)] = s.probability;
      }
    }
  }
  return out;
}

GoldenValues golden_values(const EmbeddingModel& model) {
  EmbedRequest request;
  request.overflow = OverflowPolicy::kTruncate;
  const auto answers = model.embed(kGoldenTexts, request, RequestControl());
  GoldenValues out;
  for (size_t i = 0; i < answers.size(); ++i) {
    if (answers[i].error != ItemError::kNone) out[std::to_string(i) + ".error"] = NAN;
    add_list(out, std::to_string(i) + ".", answers[i].embedding);
  }
  return out;
}

std::optional<GoldenValues> published_golden_answers(const std::string& model_sha256, const std::string& device_class) {
  // Decision-2.0-Kai-0.6B (revision cd49ea38): its publisher's CPU answers to kGoldenDecision2.
  static const std::map<std::string, GoldenValues> kPublished = {
      {"bb806f31a14d4532a1b5e00984442128f47f46cbbc68e57e7623327c81cfb983",
       {{"domain.probabilities.code", 0.9068782816627992},
        {"domain.probabilities.math", 0.029286820889263404},
        {"domain.probabilities.other", 0.06383489744793754},
        {"reasoning.noul", 0.4999572038651558},
        {"difficulty.probabilities.0", 0.3576891509208403},
        {"difficulty.probabilities.1", 0.3455610882897412},
        {"difficulty.probabilities.2", 0.2967497607894185}}}};
  const auto it = kPublished.find(model_sha256);
  if (device_class != "cpu" || it == kPublished.end()) return std::nullopt;
  return it->second;
}

GoldenValues golden_values(const DecisionModel& model) {
  const DecisionJson request =
      DecisionJson::parse(std::string(model.family()) == "decision2" ? kGoldenDecision2 : kGoldenDecision);
  const DecisionPlan plan = plan_decision(request["state"], request["questions"], &model);
  GoldenValues out;
  for (const DecisionAnswer& a : decide_plan(model, plan)) {
    if (a.error != ItemError::kNone) out[a.id + ".error"] = NAN;
    if (a.kind == QuestionKind::kNoul) out[a.id + ".noul"] = a.noul;
    for (const auto& [name, p] : a.probabilities) out[a.id + ".probabilities." + name] = p;
  }
  return out;
}

GoldenValues golden_values(const RerankModel& model) {
  const auto answers = model.rerank(kRerankQuery, kRerankDocuments, RerankRequest{}, RequestControl());
  GoldenValues out;
  for (size_t i = 0; i < answers.size(); ++i)
    out[std::to_string(i) + ".logit"] = answers[i].error == ItemError::kNone ? answers[i].logit : NAN;
  return out;
}

GoldenResult golden_check(const std::function<GoldenValues()>& run, const std::optional<GoldenValues>& reference,
                          const std::string& device_class) {
  const double tolerance = device_class == "cpu" ? 1e-3 : 0.02;
  GoldenResult result;
  result.status = "unverified";
  const GoldenValues first = run(), second = run();
  const auto failed = [&](const std::string& why) {
    result.status = "failed";
    result.detail = why;
    return result;
  };
  if (first != second) return failed("golden answers are not deterministic");
  for (const GoldenValues* values : {&first, &second}) {
    if (values->empty()) return failed("golden answers are malformed");
    for (const auto& [key, value] : *values)
      if (!std::isfinite(value)) return failed("golden answers are malformed (" + key + ")");
    if (!reference || reference->empty()) continue;
    size_t matched = 0;
    for (const auto& [key, want] : *reference) {
      const auto it = values->find(key);
      matched += it != values->end() && std::abs(it->second - want) <= tolerance;
    }
    if (values->size() != reference->size()) matched = std::min(matched, reference->size() - 1);  // other keys: a miss
    result.checked += reference->size();
    result.matched += matched;
    result.reference = device_class;
    if (matched != reference->size()) return failed("golden answers differ from the reference");
  }
  if (reference && !reference->empty()) result.status = "matched";
  return result;
}

}  // namespace semroute
