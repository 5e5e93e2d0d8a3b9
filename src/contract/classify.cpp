// POST /v1/classify: a task model's head over texts or pairs.
#include <map>

#include "contract/contract.h"
#include "runtime/result_cache.h"

namespace semroute {
namespace {

// One input item (a string, or an object of one of the contract's forms:
// {text}, {text, text_pair}, {context?, question?, answer}); nullopt for a
// malformed one (answered invalid_input on its own).
std::optional<ClassifyItem> item_of(const Json& j) {
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

ClassifyRequest classify_options(const Json& options) {
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

Json spans_json(const std::vector<LabelledSpan>& spans) {
  Json out = Json::array();
  for (const LabelledSpan& s : spans)
    out.push_back({{"label", s.label}, {"start", s.start}, {"end", s.end}, {"text", s.text}, {"probability", s.probability}});
  return out;
}

Json result_json(size_t index, const ClassifyAnswer& a, const HeadInfo& head, bool return_tokens) {
  if (a.error != ItemError::kNone) return {{"index", index}, {"error", item_error_name(a.error)}};
  Json r = {{"index", index}};
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
        Json tokens = Json::array();
        for (const auto& t : a.tokens)
          tokens.push_back({{"start", t.start}, {"end", t.end}, {"probabilities", t.probabilities}});
        r["tokens"] = tokens;
      }
      break;
  }
  if (!a.windows.empty()) {
    Json windows = Json::array();
    for (const WindowResult& w : a.windows) {
      Json j = {{"start", w.start}, {"end", w.end}};
      if (head.kind != HeadKind::kToken) j[head.kind == HeadKind::kScores ? "scores" : "probabilities"] = w.values;
      windows.push_back(j);
    }
    r["windows"] = windows;
  }
  r["input"] = input_usage(a.input);
  return r;
}

// The cache key of an item's answer: the model, the head, what the request
// asks that shapes an answer (the head's defaults filled in), the item.
std::string cache_key(const ServedModel& model, const HeadInfo& head, const ClassifyRequest& r,
                      const ClassifyItem& item) {
  CacheKey key;
  key.add("classify").add(model.identity.model_sha256).add(model.dtype).add(head.name);
  key.add(static_cast<double>(r.overflow.value_or(head.overflow))).add(static_cast<double>(r.max_tokens));
  const HeadWindow window = r.window.value_or(head.window.value_or(HeadWindow{}));
  key.add(static_cast<double>(window.tokens)).add(static_cast<double>(window.overlap));
  key.add(r.threshold.value_or(-1)).add(r.return_tokens ? 1.0 : 0.0);
  key.add(static_cast<double>(item.form)).add(item.text).add(item.text_pair);
  key.add(item.context).add(item.question).add(item.answer);
  return key.digest();
}

}  // namespace

ClassifyCall parse_classify(const Json& body, const SurfaceCall& call) {
  allow_fields(body, {"model", "input", "head", "options"}, "the request");
  const Json options = body.value("options", Json::object());
  allow_fields(options, {"deadline_ms", "profile", "return_meta", "overflow", "max_tokens", "window", "threshold",
                         "return_tokens"},
               "options");
  const auto input = body.find("input");
  if (input == body.end()) throw invalid_request("\"input\": required");
  if (!input->is_string() && !input->is_object() && !(input->is_array() && !input->empty()))
    throw invalid_request("\"input\": a string, an item, or a non-empty list of them");
  if (input->is_array() && input->size() > kMaxContractInputs)
    throw invalid_request("\"input\": at most " + std::to_string(kMaxContractInputs) + " inputs per request");
  ClassifyCall c;
  c.model = &select_model(body, call.models);
  c.common = common_options(options, *c.model);
  if (!c.model->heads) throw ContractError(422, "unsupported_surface", "model \"" + c.model->name + "\" does not classify");
  const TaskHeads& heads = *c.model->heads;
  if (const auto head = string_field(body, "head", "the request")) {
    const std::optional<size_t> index = heads.head_index(*head);
    if (!index) {
      std::string names;
      for (const HeadInfo* h : heads.heads()) names += (names.empty() ? "\"" : ", \"") + h->name + "\"";
      throw invalid_request("\"head\": model \"" + c.model->name + "\" has no head \"" + *head + "\" (it has " +
                            names + ")");
    }
    c.head = *index;
  }
  c.request = classify_options(options);
  heads.check(c.head, c.request);
  c.inputs = input->is_array() ? input->size() : 1;
  for (size_t i = 0; i < c.inputs; ++i) {
    if (const auto item = item_of(input->is_array() ? (*input)[i] : *input)) {
      c.items.push_back(*item);
      c.positions.push_back(i);
    }
  }
  return c;
}

std::vector<std::vector<ClassifyAnswer>> run_classify(const std::vector<const ClassifyCall*>& calls,
                                                      const SurfaceCall& call, const RequestControl& control) {
  const ServedModel& model = *calls.front()->model;
  const TaskHeads& heads = *model.heads;
  std::vector<std::vector<ClassifyAnswer>> answers(calls.size());
  std::vector<std::vector<std::string>> keys(calls.size());
  std::vector<std::vector<size_t>> missed(calls.size());  // per call: the items to compute
  std::vector<std::vector<ClassifyItem>> todo(calls.size());
  std::vector<HeadCall> head_calls;
  // Held answers go to live requests only: a cancelled one stops here, one
  // past its deadline is answered deadline_exceeded below.
  bool caching = call.cache != nullptr && call.cache->enabled();
  try {
    if (caching) control.check();
  } catch (const DeadlinePassed&) {
    caching = false;
  }
  for (size_t c = 0; c < calls.size(); ++c) {
    const ClassifyCall& cc = *calls[c];
    answers[c].resize(cc.items.size());
    for (size_t i = 0; i < cc.items.size(); ++i) {
      if (caching) {
        keys[c].push_back(cache_key(model, *heads.heads()[cc.head], cc.request, cc.items[i]));
        if (auto hit = call.cache->find(keys[c].back())) {
          answers[c][i] = std::get<ClassifyAnswer>(std::move(*hit));
          continue;
        }
      }
      missed[c].push_back(i);
      todo[c].push_back(cc.items[i]);
    }
  }
  for (size_t c = 0; c < calls.size(); ++c) head_calls.push_back(HeadCall{calls[c]->head, &todo[c], calls[c]->request});
  const auto computed = heads.classify_each(head_calls, control);
  for (size_t c = 0; c < calls.size(); ++c) {
    for (size_t k = 0; k < missed[c].size(); ++k) {
      const size_t i = missed[c][k];
      answers[c][i] = computed[c][k];
      if (!keys[c].empty() && computed[c][k].error == ItemError::kNone) call.cache->insert(keys[c][i], computed[c][k]);
    }
  }
  return answers;
}

Json classify_response(const ClassifyCall& c, const std::vector<ClassifyAnswer>& answers,
                                 const SurfaceCall& call) {
  const HeadInfo& head = *c.model->heads->heads()[c.head];
  std::vector<Json> results(c.inputs);
  for (size_t i = 0; i < c.inputs; ++i) results[i] = {{"index", i}, {"error", "invalid_input"}};
  size_t input_tokens = 0;
  for (size_t k = 0; k < answers.size(); ++k) {
    results[c.positions[k]] = result_json(c.positions[k], answers[k], head, c.request.return_tokens);
    input_tokens += answers[k].input.tokens;  // what was read, failed items included
  }
  Json out = {{"model", c.model->name},
                        {"head", head.name},
                        {"kind", head_kind_name(head.kind)},
                        {"labels", head.labels},
                        {"results", results},
                        {"usage", {{"input_tokens", input_tokens}, {"output_tokens", 0}}}};
  if (c.common.return_meta) {
    out["meta"] = response_meta(*c.model, *call.times);
    out["meta"]["head"] = head.name;
  }
  return out;
}

Json classify_surface(const Json& body, const SurfaceCall& call) {
  const ClassifyCall c = parse_classify(body, call);
  const ModelSlot slot(*c.model, call.limits);
  return classify_response(c, run_classify({&c}, call, control_for(call, c.common)).front(), call);
}

}  // namespace semroute
