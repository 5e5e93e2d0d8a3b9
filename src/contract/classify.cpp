// POST /v1/classify: a task model's head over texts or pairs.
#include <map>

#include "contract/contract.h"

namespace semroute {
namespace {

// One input item (a string, or an object of one of the contract's forms:
// {text}, {text, text_pair}, {context?, question?, answer}); nullopt for a
// malformed one (answered invalid_input on its own).
std::optional<ClassifyItem> item_of(const nlohmann::json& j) {
  using Form = ClassifyItem::Form;
  if (j.is_string()) return ClassifyItem{Form::kText, j.get_ref<const std::string&>(), {}, {}, {}, {}};
  if (!j.is_object()) return std::nullopt;
  std::map<std::string, std::string_view> fields;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_string()) return std::nullopt;
    fields[key] = value.get_ref<const std::string&>();
  }
  const auto has = [&](const char* key) { return fields.count(key) != 0; };
  if (has("text") && !has("context") && !has("question") && !has("answer"))
    return ClassifyItem{has("text_pair") ? Form::kPair : Form::kText, fields["text"], fields["text_pair"], {}, {}, {}};
  if (has("answer") && !has("text") && !has("text_pair"))
    return ClassifyItem{Form::kGrounded, {}, {}, fields["context"], fields["question"], fields["answer"]};
  return std::nullopt;
}

ClassifyRequest classify_options(const nlohmann::json& options) {
  ClassifyRequest r;
  if (const auto overflow = string_field(options, "overflow", "options")) {
    r.overflow = parse_overflow_policy(*overflow);
    if (!r.overflow) throw invalid_request("options.overflow: reject, truncate or window");
  }
  r.max_tokens = static_cast<size_t>(integer_field(options, "max_tokens", 1, "options").value_or(0));
  if (const auto w = options.find("window"); w != options.end()) {
    allow_fields(*w, {"tokens", "overlap"}, "options.window");
    const auto tokens = integer_field(*w, "tokens", 2, "options.window");
    if (!tokens) throw invalid_request("options.window.tokens: required");
    r.window = HeadWindow{static_cast<size_t>(*tokens),
                          static_cast<size_t>(integer_field(*w, "overlap", 0, "options.window").value_or(0))};
  }
  r.threshold = number_field(options, "threshold", "options");
  if (r.threshold && (*r.threshold < 0 || *r.threshold > 1)) throw invalid_request("options.threshold: a number in [0, 1]");
  r.return_tokens = bool_field(options, "return_tokens", "options").value_or(false);
  return r;
}

nlohmann::json spans_json(const std::vector<LabelledSpan>& spans) {
  nlohmann::json out = nlohmann::json::array();
  for (const LabelledSpan& s : spans)
    out.push_back({{"label", s.label}, {"start", s.start}, {"end", s.end}, {"text", s.text}, {"probability", s.probability}});
  return out;
}

nlohmann::json result_json(size_t index, const ClassifyAnswer& a, const HeadInfo& head, bool return_tokens) {
  if (a.error != ItemError::kNone) return {{"index", index}, {"error", item_error_name(a.error)}};
  nlohmann::json r = {{"index", index}};
  switch (head.kind) {
    case HeadKind::kSequence:
      r["label"] = a.label;
      r["probabilities"] = a.probabilities;
      break;
    case HeadKind::kScores:
      r["scores"] = a.scores;
      if (head.operating_point) r["selected"] = a.selected;
      break;
    case HeadKind::kToken:
      r["spans"] = spans_json(a.spans);
      if (return_tokens) {
        nlohmann::json tokens = nlohmann::json::array();
        for (const auto& t : a.tokens)
          tokens.push_back({{"start", t.start}, {"end", t.end}, {"probabilities", t.probabilities}});
        r["tokens"] = tokens;
      }
      break;
  }
  if (!a.windows.empty()) {
    nlohmann::json windows = nlohmann::json::array();
    for (const WindowResult& w : a.windows) {
      nlohmann::json j = {{"start", w.start}, {"end", w.end}};
      if (head.kind != HeadKind::kToken) j[head.kind == HeadKind::kScores ? "scores" : "probabilities"] = w.values;
      windows.push_back(j);
    }
    r["windows"] = windows;
  }
  r["input"] = input_usage(a.input);
  return r;
}

}  // namespace

nlohmann::json classify_surface(const nlohmann::json& body, const SurfaceCall& call) {
  allow_fields(body, {"model", "input", "head", "options"}, "the request");
  const nlohmann::json options = body.value("options", nlohmann::json::object());
  allow_fields(options, {"deadline_ms", "profile", "return_meta", "overflow", "max_tokens", "window", "threshold",
                         "return_tokens"},
               "options");
  const auto input = body.find("input");
  if (input == body.end()) throw invalid_request("\"input\": required");
  if (!input->is_string() && !input->is_object() && !(input->is_array() && !input->empty()))
    throw invalid_request("\"input\": a string, an item, or a non-empty list of them");
  if (input->is_array() && input->size() > kMaxContractInputs)
    throw invalid_request("\"input\": at most " + std::to_string(kMaxContractInputs) + " inputs per request");
  const ServedModel& model = select_model(body, call.models);
  const CommonOptions common = common_options(options, model);
  if (!model.heads) throw ContractError(422, "unsupported_surface", "model \"" + model.name + "\" does not classify");
  const TaskHeads& heads = *model.heads;
  if (const auto head = string_field(body, "head", "the request"); head && *head != heads.head().name)
    throw invalid_request("\"head\": model \"" + model.name + "\" has no head \"" + *head + "\" (it has \"" +
                          heads.head().name + "\")");
  const ClassifyRequest request = classify_options(options);

  const nlohmann::json listed = input->is_array() ? *input : nlohmann::json::array({*input});
  std::vector<ClassifyItem> items;
  std::vector<size_t> positions;  // of the well-formed items in the input
  for (size_t i = 0; i < listed.size(); ++i) {
    if (const auto item = item_of(listed[i])) {
      items.push_back(*item);
      positions.push_back(i);
    }
  }
  const ModelSlot slot(model, call.limits);
  const std::vector<ClassifyAnswer> answers = heads.classify(items, request, control_for(call, common));

  std::vector<nlohmann::json> results(listed.size());
  for (size_t i = 0; i < listed.size(); ++i) results[i] = {{"index", i}, {"error", "invalid_input"}};
  size_t input_tokens = 0;
  for (size_t k = 0; k < answers.size(); ++k) {
    results[positions[k]] = result_json(positions[k], answers[k], heads.head(), request.return_tokens);
    input_tokens += answers[k].input.tokens;  // what was read, failed items included
  }
  nlohmann::json out = {{"model", model.name},
                        {"head", heads.head().name},
                        {"kind", head_kind_name(heads.head().kind)},
                        {"labels", heads.head().labels},
                        {"results", results},
                        {"usage", {{"input_tokens", input_tokens}, {"output_tokens", 0}}}};
  if (common.return_meta) {
    out["meta"] = response_meta(model, *call.times);
    out["meta"]["head"] = heads.head().name;
  }
  return out;
}

}  // namespace semroute
