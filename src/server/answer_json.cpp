#include "server/answer_json.h"

namespace semroute {

nlohmann::json input_json(const InputUsage& u) {
  return {{"input_tokens", u.input_tokens}, {"processed_tokens", u.processed_tokens}, {"truncated", u.truncated}};
}

// A multi-label model's scores are sigmoids, marked so ("multi_label": true).
nlohmann::json classification_json(std::string_view text, const Classification& r,
                                   const std::vector<std::string>& labels, Scoring scoring) {
  nlohmann::json probs = nlohmann::json::object();
  for (size_t k = 0; k < labels.size(); ++k) probs[labels[k]] = r.probabilities[k];
  nlohmann::json out = {{"text", text},           {"label", r.label},       {"class_id", r.class_id},
                        {"confidence", r.confidence}, {"probabilities", probs}, {"input", input_json(r.input)}};
  if (scoring == Scoring::kSigmoid) out["multi_label"] = true;
  return out;
}

nlohmann::json entity_json(const EntitySpan& e) {
  return {{"type", e.type}, {"begin", e.begin}, {"end", e.end}, {"text", e.text}, {"score", e.score}};
}

nlohmann::json token_result_json(std::string_view text, const TokenClassification& r) {
  nlohmann::json tokens = nlohmann::json::array(), entities = nlohmann::json::array();
  for (const auto& t : r.tokens)
    tokens.push_back({{"id", t.token_id}, {"token", t.token}, {"begin", t.offset.begin}, {"end", t.offset.end},
                      {"label", t.label}, {"probability", t.probability}});
  for (const auto& e : r.entities) entities.push_back(entity_json(e));
  return {{"text", text}, {"tokens", tokens}, {"entities", entities}, {"input", input_json(r.input)}};
}

nlohmann::json windows_json(std::string_view text, const DocumentClassification& d,
                            const std::vector<std::string>& labels, Scoring scoring) {
  nlohmann::json windows = nlohmann::json::array();
  for (const auto& w : d.windows) {
    nlohmann::json j = classification_json(text.substr(w.byte_begin, w.byte_end - w.byte_begin), w.classification,
                                           labels, scoring);
    j.erase("input");
    j["token_begin"] = w.tokens.begin;
    j["token_end"] = w.tokens.end;
    j["begin"] = w.byte_begin;
    j["end"] = w.byte_end;
    windows.push_back(std::move(j));
  }
  return {{"text", text}, {"content_tokens", d.content_tokens}, {"windows", windows}};
}

nlohmann::json task_answer_json(const TaskAnswer& a, const std::vector<std::string>& labels) {
  nlohmann::json j = {{"task", a.task}, {"path", path_name(a.path)}, {"reason", a.reason},
                      {"latency_ms", a.latency_ms}};
  if (!a.error.empty()) {
    j["error"] = a.error;
    j["error_code"] = error_code_name(a.error_code);
  }
  if (a.kind == TaskKind::kSequence && a.error.empty()) {
    nlohmann::json probs = nlohmann::json::object();
    for (size_t k = 0; k < labels.size(); ++k) probs[labels[k]] = a.classification.probabilities.at(k);
    j["label"] = a.classification.label;
    j["confidence"] = a.classification.confidence;
    j["probabilities"] = probs;
    j["risk"] = a.risk;
    j["flagged"] = a.flagged;
  }
  if (a.kind == TaskKind::kToken && a.error.empty()) {
    j["entities"] = nlohmann::json::array();
    for (const auto& e : a.entities) j["entities"].push_back(entity_json(e));
    j["has_entities"] = !a.entities.empty();
  }
  return j;
}

nlohmann::json compressed_json(const CompressedText& c, size_t original_bytes) {
  nlohmann::json ranges = nlohmann::json::array();
  for (const Span& r : c.kept) ranges.push_back({r.begin, r.end});
  return {{"text", c.text},         {"compressed", c.compressed}, {"tokens", c.tokens},
          {"bytes", original_bytes}, {"language", c.language},     {"units", c.units},
          {"units_kept", c.units_kept}, {"ranges", ranges}};
}

nlohmann::json stream_event_json(const StreamEvent& e) {
  nlohmann::json spans = nlohmann::json::array();
  for (const auto& s : e.check.spans) {
    nlohmann::json span{{"begin", s.begin}, {"end", s.end}, {"text", s.text}, {"score", s.score},
                        {"severity", severity_name(s.severity)}};
    if (!s.nli.label.empty())
      span["nli"] = {{"label", s.nli.label},
                     {"entailment", s.nli.entailment},
                     {"neutral", s.nli.neutral},
                     {"contradiction", s.nli.contradiction}};
    spans.push_back(std::move(span));
  }
  return {{"event", stream_event_name(e.kind)},     {"begin", e.check.begin},
          {"end", e.check.end},                     {"text", e.check.text},
          {"max_score", e.check.max_score},         {"latency_ms", e.check.latency.count() / 1000.0},
          {"spans", std::move(spans)}};
}

}  // namespace semroute
