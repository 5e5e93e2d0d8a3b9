// Hallucination detection (a LettuceDetect-style ModernBERT token classifier
// over upstream's "<context> Question: <question> [SEP] <answer>" input) and
// NLI (a ModernBERT sequence classifier on premise / hypothesis pairs) that
// explains each unsupported span.
#include <algorithm>
#include <cctype>
#include <cstdio>

#include "models.h"

using namespace candle;

namespace {

Slot<Model> g_detector, g_nli;

constexpr const char* kSeparator = " [SEP] ";
constexpr size_t kSeparatorBytes = 7;

struct Span {
  size_t begin, end;  // bytes into the answer
  float confidence;   // max over its tokens
};

struct Detection {
  std::vector<Span> spans;
  float confidence = 1.0f;
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The id of `name` among `labels` (any case), else `fallback`.
int label_id(const std::vector<std::string>& labels, const char* name, int fallback) {
  for (size_t i = 0; i < labels.size(); ++i)
    if (lower(labels[i]) == name) return static_cast<int>(i);
  return fallback;
}

// Runs of answer tokens predicted "hallucinated" with probability >=
// threshold; context and question tokens are not judged.
Detection detect(const char* context, const char* question, const char* answer, float threshold) {
  const Model& model = g_detector.require("the hallucination model");
  const std::string_view q = text_arg(question, "question"), a = text_arg(answer, "answer");
  std::string input(text_arg(context, "context"));
  if (!q.empty()) input.append(" Question: ").append(q);
  const size_t answer_start = input.size() + kSeparatorBytes;
  input.append(kSeparator).append(a);
  if (!(threshold > 0.0f && threshold <= 1.0f)) threshold = 0.5f;
  const int hallucinated = label_id(model.labels(), "hallucinated", 1);

  Detection d;
  size_t answer_tokens = 0, flagged = 0;
  float max_flagged = 0.0f;
  bool open = false;
  for (const semroute::LabeledToken& t : model.classify_tokens(input).tokens) {
    if (t.begin < answer_start) continue;
    ++answer_tokens;
    const bool hit = t.label_id == hallucinated && t.probability >= threshold;
    if (!hit) {
      open = false;
      continue;
    }
    ++flagged;
    max_flagged = std::max(max_flagged, t.probability);
    const size_t begin = t.begin - answer_start, end = std::min<size_t>(t.end - answer_start, a.size());
    if (open) {
      d.spans.back().end = end;
      d.spans.back().confidence = std::max(d.spans.back().confidence, t.probability);
    } else if (end > begin) {
      d.spans.push_back({begin, end, t.probability});
      open = true;
    }
  }
  if (!d.spans.empty()) d.confidence = max_flagged;
  else if (answer_tokens > 0) d.confidence = 1.0f - static_cast<float>(flagged) / static_cast<float>(answer_tokens);
  return d;
}

struct Nli {
  NLILabel label;
  float confidence, entailment, neutral, contradiction;
};

// NLI probabilities by label name (entailment / neutral / contradiction),
// else in that index order.
Nli infer(const Model& model, std::string_view premise, std::string_view hypothesis) {
  const semroute::Prediction p = model.classify_pairs({premise}, {hypothesis}).at(0);
  const std::vector<std::string> labels = model.labels();
  const int ids[3] = {label_id(labels, "entailment", 0), label_id(labels, "neutral", 1),
                      label_id(labels, "contradiction", 2)};
  float probs[3];
  for (int i = 0; i < 3; ++i)
    probs[i] = ids[i] < static_cast<int>(p.probabilities.size()) ? p.probabilities[ids[i]] : 0.0f;
  const int best = static_cast<int>(std::max_element(probs, probs + 3) - probs);
  return {static_cast<NLILabel>(best), probs[best], probs[0], probs[1], probs[2]};
}

std::string percent(const char* format, float confidence) {
  char buffer[192];
  std::snprintf(buffer, sizeof buffer, format, static_cast<double>(confidence) * 100.0);
  return buffer;
}

// Severity and explanation of an unsupported span given the NLI verdict.
std::pair<int, std::string> explain(NLILabel label, float confidence) {
  switch (label) {
    case NLI_CONTRADICTION:
      return {4, percent("CONTRADICTION: This claim directly conflicts with the provided context (confidence: %.1f%%)",
                         confidence)};
    case NLI_NEUTRAL:
      return {2, percent("FABRICATION: This claim is not supported by the provided context (confidence: %.1f%%)",
                         confidence)};
    case NLI_ENTAILMENT:
      return {1, percent("UNCERTAIN: Hallucination detector flagged this but NLI suggests it may be supported "
                         "(confidence: %.1f%%)",
                         confidence)};
    default:
      return {2, "Unable to determine relationship with context"};
  }
}

template <class Result>
Result error_result(const char* function, const std::exception& e) {
  log_line(function, e.what());
  Result r{};
  r.error = true;
  r.error_message = guarded(function, static_cast<char*>(nullptr), [&] { return copy_string(e.what()); });
  return r;
}

// Like guarded(), but failures are reported in the result's error fields.
template <class Result, class Body>
Result with_error_message(const char* function, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    return error_result<Result>(function, e);
  } catch (...) {
    return error_result<Result>(function, Failure("unknown error"));
  }
}

}  // namespace

extern "C" {

bool init_hallucination_model(const char* model_path, bool) {
  return init_slot("init_hallucination_model", g_detector, WhenSet::kTrue,
                   [&] { return load_classifier(model_path, SEMROUTE_TASK_TOKEN_CLASSIFICATION); });
}

bool init_nli_model(const char* model_path, bool) {
  return init_slot("init_nli_model", g_nli, WhenSet::kTrue,
                   [&] { return load_classifier(model_path, SEMROUTE_TASK_SEQUENCE_CLASSIFICATION); });
}

bool is_nli_model_initialized(void) { return g_nli.is_set(); }

HallucinationDetectionResult detect_hallucinations(const char* context, const char* question, const char* answer,
                                                   float threshold) {
  return with_error_message<HallucinationDetectionResult>("detect_hallucinations", [&] {
    const Detection d = detect(context, question, answer, threshold);
    HallucinationDetectionResult r{};
    r.has_hallucination = !d.spans.empty();
    r.confidence = d.confidence;
    r.spans = zeroed_array<HallucinationSpan>(d.spans.size());
    r.num_spans = static_cast<int>(d.spans.size());
    const std::string_view a(answer);
    for (size_t i = 0; i < d.spans.size(); ++i) {
      const Span& s = d.spans[i];
      r.spans[i] = {copy_string(a.substr(s.begin, s.end - s.begin)), static_cast<int>(s.begin),
                    static_cast<int>(s.end), s.confidence, copy_string("HALLUCINATED")};
    }
    return r;
  });
}

NLIResult classify_nli(const char* premise, const char* hypothesis) {
  return with_error_message<NLIResult>("classify_nli", [&] {
    const Nli n = infer(g_nli.require("the NLI model"), text_arg(premise, "premise"), text_arg(hypothesis, "hypothesis"));
    return NLIResult{n.label, n.confidence, n.entailment, n.neutral, n.contradiction, false, nullptr};
  });
}

EnhancedHallucinationDetectionResult detect_hallucinations_with_nli(const char* context, const char* question,
                                                                    const char* answer, float threshold) {
  return with_error_message<EnhancedHallucinationDetectionResult>("detect_hallucinations_with_nli", [&] {
    const Detection d = detect(context, question, answer, threshold);
    EnhancedHallucinationDetectionResult r{};
    r.confidence = 1.0f;
    if (d.spans.empty()) return r;
    const std::string premise = std::string(context) + " " + question;
    const std::string_view a(answer);
    r.spans = zeroed_array<EnhancedHallucinationSpan>(d.spans.size());
    r.num_spans = static_cast<int>(d.spans.size());
    r.has_hallucination = true;
    r.confidence = 0.0f;
    for (size_t i = 0; i < d.spans.size(); ++i) {
      const Span& s = d.spans[i];
      const std::string_view text = a.substr(s.begin, s.end - s.begin);
      NLILabel label = NLI_NEUTRAL;
      float nli_confidence = 0.0f;
      std::pair<int, std::string> verdict;
      if (const Model* nli = g_nli.get()) {
        try {
          const Nli n = infer(*nli, premise, text);
          label = n.label;
          nli_confidence = n.confidence;
          verdict = explain(label, nli_confidence);
        } catch (const std::exception& e) {
          log_line("detect_hallucinations_with_nli", e.what());
          verdict = {2, "NLI classification failed, based on hallucination detector only"};
        }
      } else {
        verdict = {s.confidence > 0.8f ? 3 : 2, percent("Unsupported claim detected (confidence: %.1f%%)", s.confidence)};
      }
      r.spans[i] = {copy_string(text), static_cast<int>(s.begin), static_cast<int>(s.end), s.confidence, label,
                    nli_confidence, verdict.first, copy_string(verdict.second)};
      r.confidence = std::max({r.confidence, s.confidence, nli_confidence});
    }
    return r;
  });
}

void free_hallucination_detection_result(HallucinationDetectionResult result) {
  for (int i = 0; result.spans != nullptr && i < result.num_spans; ++i) {
    std::free(result.spans[i].text);
    std::free(result.spans[i].label);
  }
  std::free(result.spans);
  std::free(result.error_message);
}

void free_nli_result(NLIResult result) { std::free(result.error_message); }

void free_enhanced_hallucination_detection_result(EnhancedHallucinationDetectionResult result) {
  for (int i = 0; result.spans != nullptr && i < result.num_spans; ++i) {
    std::free(result.spans[i].text);
    std::free(result.spans[i].explanation);
  }
  std::free(result.spans);
  std::free(result.error_message);
}

}  // extern "C"
