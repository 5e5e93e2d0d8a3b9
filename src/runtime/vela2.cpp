#include "runtime/vela2.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "core/checkpoint.h"
#include "core/config_reader.h"
#include "core/file_input.h"
#include "models/model_factory.h"
#include "runtime/forwards.h"
#include "semroute/error.h"
#include "tokenizers/hf_tokenizer.h"

namespace semroute {
namespace {

const std::vector<std::string>& kMarkers = kVela2Markers;
enum Marker { kQ, kO, kAbs, kSepSchema, kSegUser, kSegAnswer, kE, kSegContext };

const DecisionOption kNoulNo{"no", "No. The statement or question is not satisfied.", nullptr};
const DecisionOption kNoulYes{"yes", "Yes. The statement or question is satisfied.", nullptr};


Marker segment_of(PartRole role) {
  return role == PartRole::kUser ? kSegUser : role == PartRole::kAnswer ? kSegAnswer : kSegContext;
}

std::string option_text(const DecisionOption& o) { return o.description.empty() ? o.name : o.name + ": " + o.description; }

std::vector<double> softmax(const std::vector<double>& x) {
  const double top = *std::max_element(x.begin(), x.end());
  std::vector<double> e(x.size());
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) sum += e[i] = std::exp(x[i] - top);
  for (double& v : e) v /= sum;
  return e;
}

std::optional<PartRole> role_of_key(std::string key) {
  std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
  static const std::map<std::string, PartRole> kRoles = {
      {"request", PartRole::kUser},       {"user", PartRole::kUser},           {"prompt", PartRole::kUser},
      {"source", PartRole::kContext},     {"context", PartRole::kContext},     {"document", PartRole::kContext},
      {"tools", PartRole::kContext},      {"previous_answer", PartRole::kContext}, {"answer", PartRole::kAnswer},
      {"response", PartRole::kAnswer}};
  const auto it = kRoles.find(key);
  return it == kRoles.end() ? std::nullopt : std::optional<PartRole>(it->second);
}

[[noreturn]] void invalid_question(const std::string& id, const std::string& why) {
  throw InvalidInput("question \"" + id + "\": " + why);
}

// Named options from an object {name: description|null} or a list of
// {key, description?} (the router's `choices`).
std::vector<DecisionOption> named_options(const std::string& id, const DecisionJson& j, size_t minimum) {
  std::vector<DecisionOption> out;
  if (j.is_object()) {
    for (const auto& [name, description] : j.items())
      out.push_back({name, description.is_null() ? "" : content_text(description), description});
  } else if (j.is_array()) {
    for (const auto& item : j) {
      if (!item.is_object() || !item.contains("key") || !item["key"].is_string() ||
          std::any_of(item.items().begin(), item.items().end(),
                      [](const auto& field) { return field.key() != "key" && field.key() != "description"; }))
        invalid_question(id, "each choice is {key, description?}");
      const DecisionJson description = item.value("description", DecisionJson());
      const std::string key = item["key"].get<std::string>();
      if (std::any_of(out.begin(), out.end(), [&](const DecisionOption& o) { return o.name == key; }))
        invalid_question(id, "the keys must be unique");
      out.push_back({key, description.is_null() ? "" : content_text(description), description});
    }
  } else {
    invalid_question(id, "criteria: an object of named options");
  }
  for (const DecisionOption& o : out)
    if (o.value.is_string() && o.description.find_first_not_of(" \t\r\n") == std::string::npos)
      invalid_question(id, "a description is non-blank text, an object, an array or null");
  if (out.size() < minimum || out.size() > kMaxOptions)
    invalid_question(id, std::to_string(minimum) + " to " + std::to_string(kMaxOptions) + " options");
  for (const DecisionOption& o : out)
    if (o.name.empty() || o.name.find_first_not_of(" \t\r\n") == std::string::npos)
      invalid_question(id, "an option needs a name");
  return out;
}

std::vector<DecisionAnswer> failed(const std::vector<DecisionQuestion>& questions, ItemError error) {
  std::vector<DecisionAnswer> answers(questions.size());
  for (size_t i = 0; i < questions.size(); ++i) {
    answers[i].id = questions[i].id;
    answers[i].kind = questions[i].kind;
    answers[i].error = error;
  }
  return answers;
}

// The questions a calibration defines: {pii, halu: span; relevance: score},
// those it has, as questions (a Score's level descriptions beside its levels).
DecisionJson presets_of(const DecisionJson& calibration) {
  DecisionJson out = DecisionJson::object();
  for (const std::string name : {"pii", "halu", "relevance"}) {
    const auto schema = calibration.find(name + "_schema");
    if (schema == calibration.end() || !schema->is_object() || schema->empty()) continue;
    const DecisionJson text = schema->value("text", DecisionJson());
    const bool score = name == "relevance";
    const DecisionJson options = schema->value(score ? "levels" : "labels", DecisionJson());
    if (!text.is_string() || !options.is_object() || options.empty())
      throw InvalidInput(name + "_schema: {text, " + (score ? "levels" : "labels") + ": {name: description}}");
    DecisionJson question = {{"type", score ? "score" : "span"}, {"instructions", text}};
    if (score) {
      DecisionJson levels = DecisionJson::array(), descriptions = DecisionJson::array();
      for (const auto& [level, description] : options.items()) {
        levels.push_back(level);
        descriptions.push_back(content_text(description));
      }
      question.update({{"levels", levels}, {"level_descriptions", descriptions}});
    } else {
      question["criteria"] = options;
    }
    out[name] = question;
  }
  return out;
}

}  // namespace

const char* question_kind_name(QuestionKind kind) {
  switch (kind) {
    case QuestionKind::kChoice: return "choice";
    case QuestionKind::kNoul: return "noul";
    case QuestionKind::kScore: return "score";
    case QuestionKind::kSet: return "set";
    case QuestionKind::kSpan: return "span";
  }
  return "choice";
}

const char* part_role_name(PartRole role) {
  return role == PartRole::kUser ? "user" : role == PartRole::kAnswer ? "answer" : "context";
}

DecisionJson parse_decision_request(std::string_view text) { return parse_request_body(text); }

std::vector<StatePart> decision_state(const DecisionJson& given) {
  DecisionJson state = given;
  if (state.is_string()) {
    const std::string& text = state.get_ref<const std::string&>();
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] == '{') {  // a string holding a JSON object is that object
      const DecisionJson decoded = DecisionJson::parse(text, nullptr, false);
      if (decoded.is_object()) state = decoded;
    }
  }
  if (state.is_string()) {
    if (state.get_ref<const std::string&>().find_first_not_of(" \t\r\n") == std::string::npos)
      throw InvalidInput("state must not be empty or whitespace");
    const std::string& text = state.get_ref<const std::string&>();
    return {{PartRole::kUser, text, {"request"}, {{0, code_points(text).size()}}}};
  }
  if (state.is_array()) {
    const std::string text = content_text(state);
    return {{PartRole::kUser, text, {"request"}, {{0, code_points(text).size()}}}};
  }
  if (!state.is_object() || state.empty()) throw InvalidInput("state must be a non-empty string, JSON object or JSON array");
  struct Entry {
    std::string key, text;
    bool known;
  };
  std::map<PartRole, std::vector<Entry>> by_role;
  for (const auto& [key, value] : state.items()) {
    const std::optional<PartRole> role = role_of_key(key);
    by_role[role.value_or(PartRole::kContext)].push_back({key, content_text(value), role.has_value()});
  }
  std::vector<StatePart> parts;
  for (const PartRole role : {PartRole::kUser, PartRole::kContext, PartRole::kAnswer}) {
    const auto it = by_role.find(role);
    if (it == by_role.end()) continue;
    StatePart part{role, "", {}, {}};
    size_t length = 0;  // of part.text, in code points
    const bool bare = it->second.size() == 1 && it->second[0].known;
    for (const Entry& e : it->second) {
      const std::string head = bare ? "" : (part.text.empty() ? "" : "\n\n") + e.key + ":\n";
      length += code_points(head).size();
      part.text += head + e.text;
      part.keys.push_back(e.key);
      part.ranges.emplace_back(length, length + code_points(e.text).size());
      length = part.ranges.back().second;
    }
    if (part.text.find_first_not_of(" \t\r\n") == std::string::npos)
      throw InvalidInput(std::string("the ") + part_role_name(role) + " part of the state is empty");
    parts.push_back(std::move(part));
  }
  return parts;
}

namespace {

// The parts `over` names (a state key, a part, or a key's usual part), and
// the range of its one state key when it names one key alone.
std::vector<PartRole> parts_over(const std::string& id, const DecisionJson& over, const std::vector<StatePart>& state,
                                 std::optional<CodePointRange>* key_range) {
  std::vector<PartRole> roles;
  const DecisionJson items = over.is_array() ? over : DecisionJson::array({over});
  for (const auto& item : items) {
    if (!item.is_string()) invalid_question(id, "over: a part name, a state key or a list of them");
    const std::string name = item.get<std::string>();
    std::optional<PartRole> role;
    for (const StatePart& p : state)
      for (size_t k = 0; k < p.keys.size(); ++k)
        if (p.keys[k] == name) {
          role = p.role;
          if (!over.is_array()) *key_range = p.ranges[k];
        }
    if (!role) role = name == "user" ? PartRole::kUser
                      : name == "context" ? PartRole::kContext
                      : name == "answer" ? PartRole::kAnswer
                                         : role_of_key(name);
    const bool present = role && std::any_of(state.begin(), state.end(), [&](const StatePart& p) { return p.role == *role; });
    if (!present) invalid_question(id, "\"" + name + "\" is not a field of the state");
    if (std::find(roles.begin(), roles.end(), *role) == roles.end()) roles.push_back(*role);
  }
  if (roles.empty()) invalid_question(id, "over must not be empty");
  return roles;
}

// A span's part when `over` names none: the answer, else the request, else the first part.
PartRole default_span_part(const std::vector<StatePart>& state) {
  for (const PartRole role : {PartRole::kAnswer, PartRole::kUser})
    if (std::any_of(state.begin(), state.end(), [&](const StatePart& p) { return p.role == role; })) return role;
  return state.front().role;
}

// A preset question ({preset, type, over, threshold, overflow,
// require_full_input}) as the question the model defines.
DecisionQuestion preset_question(const std::string& id, const DecisionJson& j, const std::vector<StatePart>& state,
                                 const DecisionJson& presets) {
  const DecisionJson& name = j["preset"];
  std::string names;
  for (const auto& [key, value] : presets.items()) names += (names.empty() ? "" : ", ") + key;
  if (!name.is_string() || !presets.is_object() || !presets.contains(name.get<std::string>()))
    invalid_question(id, "preset must be one of [" + names + "]");
  DecisionJson expanded = presets[name.get<std::string>()];
  const DecisionJson descriptions = expanded.value("level_descriptions", DecisionJson());
  expanded.erase("level_descriptions");
  for (const auto& [key, value] : j.items()) {
    static const std::vector<std::string> kFields = {"preset", "type", "over", "threshold", "overflow", "require_full_input"};
    if (std::find(kFields.begin(), kFields.end(), key) == kFields.end())
      invalid_question(id, "a preset question takes only preset, type, over, threshold, overflow and require_full_input");
    if (key == "type" && !value.is_null() && value != expanded["type"])
      invalid_question(id, "preset " + name.get<std::string>() + " is a " + expanded["type"].get<std::string>() + " question");
    if (key != "preset" && key != "type") expanded[key] = value;
  }
  DecisionQuestion q = decision_question(id, expanded, state);
  q.calibration_key = name.get<std::string>();
  for (size_t k = 0; k < descriptions.size() && k < q.options.size(); ++k)  // a Score preset's level descriptions
    q.options[k].description = descriptions[k].get<std::string>();
  return q;
}

}  // namespace

DecisionQuestion decision_question(const std::string& id, const DecisionJson& j, const std::vector<StatePart>& state,
                                   const DecisionJson& presets) {
  if (id.find_first_not_of(" \t\r\n") == std::string::npos) invalid_question(id, "a question ID must not be blank");
  if (!j.is_object()) invalid_question(id, "expected an object");
  if (j.contains("preset") && !j["preset"].is_null()) return preset_question(id, j, state, presets);
  for (const auto& [key, value] : j.items()) {
    static const std::vector<std::string> kFields = {"type",     "instructions",       "criteria", "choices", "levels", "labels",
                                                     "over",     "threshold",          "overflow", "head",    "preset",
                                                     "require_full_input"};
    if (std::find(kFields.begin(), kFields.end(), key) == kFields.end())
      invalid_question(id, "\"" + key + "\" is not a field this model reads");
  }
  DecisionQuestion q;
  q.id = id;
  const std::string type = j.value("type", "");
  if (type == "choice") q.kind = QuestionKind::kChoice;
  else if (type == "noul") q.kind = QuestionKind::kNoul;
  else if (type == "score") q.kind = QuestionKind::kScore;
  else if (type == "set") q.kind = QuestionKind::kSet;
  else if (type == "span") q.kind = QuestionKind::kSpan;
  else invalid_question(id, "type: choice, noul, score, set or span");
  const DecisionJson instructions = j.value("instructions", DecisionJson());
  if (instructions.is_null() || content_text(instructions).find_first_not_of(" \t\r\n") == std::string::npos)
    invalid_question(id, "instructions: required");
  q.instructions = content_text(instructions);
  q.instructions_value = instructions;
  const auto has = [&](const char* key) { return j.contains(key) && !j[key].is_null(); };
  switch (q.kind) {
    case QuestionKind::kChoice:
      if (has("criteria") == has("choices")) invalid_question(id, "one of criteria or choices");
      q.options = named_options(id, has("criteria") ? j["criteria"] : j["choices"], 2);
      break;
    case QuestionKind::kNoul:
      if (has("criteria") && has("choices")) invalid_question(id, "use criteria or choices, not both");
      if (has("criteria") || has("choices")) {
        DecisionJson c = DecisionJson::object();  // choices [{key: false|true, description?}] as criteria
        if (has("criteria")) c = j["criteria"];
        else
          for (const DecisionOption& o : named_options(id, j["choices"], 1)) c[o.name] = o.value;
        if (!c.is_object()) invalid_question(id, "criteria: {false, true}");
        for (const auto& [key, value] : c.items())
          if (key != "false" && key != "true") invalid_question(id, "criteria: {false, true}");
        const auto described = [&](const char* key, const DecisionOption& fallback) {
          const bool given = c.contains(key) && !c[key].is_null();
          if (given && content_text(c[key]).find_first_not_of(" \t\r\n") == std::string::npos)
            invalid_question(id, "a description is non-blank text, an object, an array or null");
          return DecisionOption{fallback.name, given ? content_text(c[key]) : fallback.description,
                                given ? c[key] : DecisionJson()};
        };
        q.options = {described("false", kNoulNo), described("true", kNoulYes)};
      } else {
        q.options = {kNoulNo, kNoulYes};
      }
      break;
    case QuestionKind::kScore: {
      if (has("criteria") == has("levels")) invalid_question(id, "one of criteria or levels");
      const DecisionJson& levels = has("levels") ? j["levels"] : j["criteria"];
      if (!levels.is_array() || levels.size() < kMinLevels || levels.size() > kMaxLevels)
        invalid_question(id, "levels: a list of 2 to 10");
      for (const auto& level : levels) {
        if (level.is_null()) invalid_question(id, "a level must not be null");
        q.options.push_back({content_text(level), "", level});
      }
      break;
    }
    case QuestionKind::kSet:
    case QuestionKind::kSpan:
      if (has("criteria") == has("labels")) invalid_question(id, "one of criteria or labels");
      q.options = named_options(id, has("criteria") ? j["criteria"] : j["labels"], 1);
      break;
  }
  if (has("threshold")) {
    const DecisionJson& t = j["threshold"];
    if (q.kind != QuestionKind::kSet && q.kind != QuestionKind::kSpan)
      invalid_question(id, "threshold: only for set and span questions");
    if (!t.is_number() || t.get<double>() < 0 || t.get<double>() > 1) invalid_question(id, "threshold: a number in [0, 1]");
    q.threshold = t.get<double>();
  }
  if (has("head")) {
    if (q.kind != QuestionKind::kSpan) invalid_question(id, "head: only for span questions");
    if (j["head"] == "broad") invalid_question(id, "this model has no broad span head");
    if (j["head"] != "router") invalid_question(id, "head: router or broad");
  }
  if (has("overflow")) {
    const DecisionJson& overflow = j["overflow"];
    if (overflow != "window" && overflow != "truncate") invalid_question(id, "overflow: window or truncate");
    q.truncate = overflow == "truncate";
  }
  if (j.contains("require_full_input")) {
    if (!j["require_full_input"].is_boolean()) invalid_question(id, "require_full_input: true or false");
    q.require_full_input = j["require_full_input"].get<bool>();
    if (q.require_full_input && q.truncate)
      invalid_question(id, "require_full_input cannot be combined with overflow truncate");
  }
  std::optional<CodePointRange> key_range;
  if (has("over")) q.over = parts_over(id, j["over"], state, &key_range);
  if (q.kind == QuestionKind::kSpan) {
    if (q.over.size() > 1) invalid_question(id, "a span question reads one part");
    if (q.over.empty()) q.over = {default_span_part(state)};
    q.span_range = key_range;
  }
  return q;
}

DecisionPlan plan_decision(const DecisionJson& state, const DecisionJson& questions, const DecisionModel* model) {
  if (!questions.is_object() || questions.empty()) throw InvalidInput("questions: an object of at least one question");
  DecisionPlan plan;
  plan.state = state;
  plan.parts = decision_state(state);
  const DecisionJson none = DecisionJson::object();
  const DecisionJson& presets = model != nullptr ? model->presets() : none;
  for (const auto& [id, question] : questions.items()) {
    if (id.find_first_not_of(" \t\r\n") == std::string::npos) throw InvalidInput("questions: an ID must not be blank");
    plan.ids.push_back(id);
    try {
      if (model != nullptr) model->check_question(id, question);
      plan.questions.push_back(decision_question(id, question, plan.parts, presets));
    } catch (const InvalidInput& e) {
      plan.invalid[id] = {{"type", question.is_object() ? question.value("type", DecisionJson()) : DecisionJson()},
                          {"error", "invalid_question"},
                          {"message", e.what()}};
    }
  }
  return plan;
}

std::vector<DecisionAnswer> decide_plan(const DecisionModel& model, const DecisionPlan& plan, size_t* input_tokens,
                                        const DecideOptions& options) {
  std::vector<size_t> tokens;
  auto answers = model.decide_all({{&plan.state, &plan.parts, &plan.questions}}, &tokens, options);
  if (input_tokens != nullptr) *input_tokens = tokens[0];
  return std::move(answers[0]);
}

std::vector<DecisionAnswer> failed_answers(const DecisionPlan& plan, ItemError error) {
  return failed(plan.questions, error);
}

DecisionJson decision_answers(const DecisionPlan& plan, const std::vector<DecisionAnswer>& answers) {
  std::map<std::string, const DecisionAnswer*> by_id;
  for (const DecisionAnswer& a : answers) by_id[a.id] = &a;
  // Objects assembled at the end: a reference into an ordered_json object
  // does not survive an insertion into it.
  DecisionJson all = DecisionJson::object(), spans = DecisionJson::object(), sets = DecisionJson::object(),
               thresholds = DecisionJson::object();
  const auto probabilities = [](const DecisionAnswer& a) {
    DecisionJson p = DecisionJson::object();
    for (const auto& [name, value] : a.probabilities) p[name] = value;
    return p;
  };
  for (const std::string& id : plan.ids) {
    if (const auto bad = plan.invalid.find(id); bad != plan.invalid.end()) {
      all[id] = bad->second;
      continue;
    }
    const DecisionAnswer& a = *by_id.at(id);
    DecisionJson j = {{"type", question_kind_name(a.kind)}};
    if (a.error != ItemError::kNone) {
      j["error"] = item_error_name(a.error);
      all[id] = j;
      continue;
    }
    if (a.complete_input) j["input_coverage"] = "complete";
    switch (a.kind) {
      case QuestionKind::kChoice:
        j.update({{"choice", a.choice}, {"confidence", a.confidence}, {"probabilities", probabilities(a)}});
        if (a.abstain_probability) j["abstain_probability"] = *a.abstain_probability;
        break;
      case QuestionKind::kNoul: j["noul"] = a.noul; break;
      case QuestionKind::kScore: {
        DecisionJson legend = DecisionJson::object();
        for (size_t k = 0; k < a.legend.size(); ++k) legend[std::to_string(k)] = a.legend[k];
        j.update({{"score", a.score}, {"confidence", a.confidence}, {"probabilities", probabilities(a)}, {"legend", legend}});
        break;
      }
      case QuestionKind::kSet:
        for (const auto& [name, p] : a.probabilities) all[id + "." + name] = {{"type", "noul"}, {"noul", p}};
        sets[id] = {{"selected", a.selected}, {"probabilities", probabilities(a)}};
        if (a.complete_input) sets[id]["input_coverage"] = "complete";
        thresholds[id] = a.threshold;
        continue;
      case QuestionKind::kSpan: {  // a Noul answer (the top word probability) and the spans
        j["type"] = "noul";
        j["noul"] = a.noul;
        DecisionJson list = DecisionJson::array();
        for (const DecisionSpan& s : a.spans)
          list.push_back({{"label", s.label}, {"start", s.start}, {"end", s.end}, {"text", s.text}, {"probability", s.probability}});
        spans[id] = std::move(list);
        thresholds[id] = a.threshold;
        break;
      }
    }
    all[id] = j;
  }
  DecisionJson out = {{"answers", std::move(all)}};
  if (!spans.empty()) out["spans"] = std::move(spans);
  if (!sets.empty()) out["sets"] = std::move(sets);
  if (!thresholds.empty()) out["thresholds"] = std::move(thresholds);
  return out;
}

struct Vela2Model::Head {
  at::Tensor norm_weight, norm_bias, w_o, b_o, w_q, b_q, w_p, b_p;
  double tau = 1;
  at::Tensor w_t, b_t, w_e, b_e;  // the span readout (words against labels)
  float tau_span = 1;
  at::Tensor mlp0_weight, mlp0_bias, mlp3_weight, mlp3_bias;  // mlp and both readouts
};

// Where one question sits in the sequence.
struct Vela2Model::Placed {
  bool span = false;
  size_t query = 0;
  std::vector<size_t> options;  // [O] markers, then [ABS]; a span's [E] markers
  size_t pool_begin = 0, pool_end = 0;
  size_t part = 0;                 // a span: the part it reads,
  std::vector<size_t> words;       // the positions of the words this sequence holds
  std::vector<size_t> word_index;  // and their indices among the part's words
};

Vela2Model::~Vela2Model() = default;

bool is_vela2_package(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(dir / "config.json", ec)) return false;
  const nlohmann::json config = read_json_file(dir / "config.json");
  return config.is_object() && config.value("model_type", nlohmann::json()) == "vela2-unified";
}

std::shared_ptr<const Vela2Model> Vela2Model::load(const std::filesystem::path& dir, const LoadOptions& options) {
  const std::filesystem::path config_file = file_in_dir(dir, "config.json");
  const nlohmann::json config = read_json_file(config_file);
  const auto fail = [&](const std::string& why) -> void {
    throw LoadError(config_file.string() + ": " + why, ErrorCode::kInvalidModel);
  };
  const auto integer = [&](const char* key, int64_t low) {
    const auto it = config.find(key);
    if (it == config.end() || !it->is_number_integer() || it->get<int64_t>() < low)
      fail(std::string(key) + ": an integer of at least " + std::to_string(low));
    return it->get<int64_t>();
  };
  if (!config.is_object() || config.value("model_type", nlohmann::json()) != "vela2-unified" || integer("format_version", 1) != 1)
    fail("not a Vela 2.0 package (format_version 1, model_type vela2-unified)");
  std::shared_ptr<Vela2Model> m(new Vela2Model());
  const nlohmann::json markers = config.value("marker_ids", nlohmann::json());
  if (!markers.is_object() || markers.size() != kMarkers.size()) fail("marker_ids must name the eight Vela 2.0 markers");
  for (const std::string& name : kMarkers) {
    if (!markers.contains(name) || !markers[name].is_number_integer() || markers[name].get<int64_t>() < 0)
      fail("marker_ids must name the eight Vela 2.0 markers (" + name + ")");
    m->markers_.push_back(markers[name].get<int64_t>());
  }
  m->bos_ = integer("bos_token_id", 0);
  m->eos_ = integer("eos_token_id", 0);
  m->pad_ = config.contains("pad_token_id") ? integer("pad_token_id", 0) : m->eos_;
  m->max_length_ = static_cast<size_t>(integer("max_length", 16));
  m->window_overlap_ = config.contains("window_overlap") ? static_cast<size_t>(integer("window_overlap", 0)) : 64;
  m->readout_ = config.value("readout", nlohmann::json("cosine")).is_string() ? config.value("readout", "cosine") : "";
  if (m->readout_ != "cosine" && m->readout_ != "mlp" && m->readout_ != "both") fail("readout: cosine, mlp or both");
  const nlohmann::json encoder = config.value("encoder_config", nlohmann::json());
  if (!encoder.is_object()) fail("encoder_config: the encoder's config (an object)");
  const int64_t vocab = encoder.value("vocab_size", nlohmann::json(0)).is_number_integer() ? encoder.value("vocab_size", 0) : 0;
  for (const int64_t id : m->markers_)
    if (id >= vocab) fail("marker id " + std::to_string(id) + " is outside the vocabulary");
  ModelSource source{dir, ConfigReader(encoder, config_file.string() + " encoder_config"), Checkpoint::open(dir)};
  std::vector<std::string> unused;  // the head's tensors
  m->encoder_ = load_core_model(source, options, &unused);
  const auto hidden = static_cast<int64_t>(encoder.value("hidden_size", 0));
  const auto tensor = [&](const std::string& name, std::vector<int64_t> shape) {
    if (source.checkpoint.find(name) == nullptr) fail("model.safetensors has no " + name);
    at::Tensor t = source.checkpoint.tensor(name).to(at::kFloat).contiguous();
    if (t.sizes().vec() != shape) fail(name + " has shape " + c10::str(t.sizes()) + ", expected " + c10::str(shape));
    return t;
  };
  auto head = std::make_unique<Head>();
  const at::Tensor w_o = source.checkpoint.find("w_o.weight") ? source.checkpoint.tensor("w_o.weight") : at::Tensor();
  if (!w_o.defined() || w_o.dim() != 2) fail("model.safetensors has no w_o.weight [projection, hidden]");
  const int64_t projection = w_o.size(0);
  head->norm_weight = tensor("norm.weight", {hidden});
  head->norm_bias = tensor("norm.bias", {hidden});
  head->w_o = tensor("w_o.weight", {projection, hidden});
  head->b_o = tensor("w_o.bias", {projection});
  head->w_q = tensor("w_q.weight", {projection, hidden});
  head->b_q = tensor("w_q.bias", {projection});
  head->w_p = tensor("w_p.weight", {projection, hidden});
  head->b_p = tensor("w_p.bias", {projection});
  const at::Tensor log_tau = tensor("log_tau", {});
  head->tau = std::exp(log_tau.item<double>());
  if (!std::isfinite(head->tau) || head->tau <= 0) fail("log_tau must be finite");
  head->w_t = tensor("w_t.weight", {projection, hidden});
  head->b_t = tensor("w_t.bias", {projection});
  head->w_e = tensor("w_e.weight", {projection, hidden});
  head->b_e = tensor("w_e.bias", {projection});
  head->tau_span = std::exp(tensor("log_tau_span", {}).item<float>());
  if (!std::isfinite(head->tau_span) || head->tau_span <= 0) fail("log_tau_span must be finite");
  if (m->readout_ != "cosine") {
    head->mlp0_weight = tensor("cls_mlp.0.weight", {2 * hidden, hidden});
    head->mlp0_bias = tensor("cls_mlp.0.bias", {2 * hidden});
    head->mlp3_weight = tensor("cls_mlp.3.weight", {1, 2 * hidden});
    head->mlp3_bias = tensor("cls_mlp.3.bias", {1});
  }
  m->head_ = std::move(head);
  const std::filesystem::path calibration_file = file_in_dir(dir, "calibration.json");
  const auto bad_calibration = [&](const std::string& why) -> void {
    throw LoadError(calibration_file.string() + ": " + why, ErrorCode::kInvalidModel);
  };
  const std::string calibration_text = read_file(calibration_file);
  check_json_nesting(calibration_text, calibration_file.string());
  m->calibration_ = DecisionJson::parse(calibration_text, nullptr, false);  // ordered: a preset's labels keep their order
  if (m->calibration_.is_discarded() || !m->calibration_.is_object() ||
      !m->calibration_.value("temperature", DecisionJson()).is_object())
    bad_calibration("temperature: an object of per-type temperatures");
  for (const auto& [type, t] : m->calibration_["temperature"].items())
    if (!t.is_number() || !(t.get<double>() > 0) || !std::isfinite(t.get<double>()))
      bad_calibration("temperature." + type + ": a positive number");
  try {
    m->presets_ = presets_of(m->calibration_);
  } catch (const InvalidInput& e) {
    bad_calibration(e.what());
  }
  m->tokenizer_ = load_hf_tokenizer(file_in_dir(dir, "tokenizer.json"), kMarkers);
  return m;
}

nlohmann::json Vela2Model::limits() const {
  return {{"max_input_tokens", max_length()}, {"max_scan_tokens", max_scan_tokens()}, {"truncate_tokens", truncate_tokens()},
          {"min_options", kMinOptions},      {"max_options", kMaxOptions},          {"max_labels", kMaxOptions},
          {"min_levels", kMinLevels},        {"max_levels", kMaxLevels}};
}

std::vector<float> Vela2Model::option_logits(const at::Tensor& hidden, const Placed& placed) const {
  const Head& h = *head_;
  const auto norm = [&](const at::Tensor& x) {
    return at::layer_norm(x, {h.norm_weight.size(0)}, h.norm_weight, h.norm_bias, 1e-5);
  };
  const auto unit = [](const at::Tensor& x) { return x / x.norm().clamp_min(1e-12); };
  const at::Tensor pooled = hidden.slice(0, static_cast<int64_t>(placed.pool_begin), static_cast<int64_t>(placed.pool_end)).mean(0);
  const at::Tensor part = unit(at::linear(norm(pooled), h.w_p, h.b_p));
  const at::Tensor question = at::linear(norm(hidden[static_cast<int64_t>(placed.query)]), h.w_q, h.b_q);
  std::vector<float> logits;
  for (const size_t position : placed.options) {
    const at::Tensor state = hidden[static_cast<int64_t>(position)];
    double logit = 0;
    if (readout_ != "mlp") logit += (unit(at::linear(norm(state), h.w_o, h.b_o) + question) * part).sum().item<double>() / h.tau;
    if (readout_ != "cosine")
      logit += at::linear(at::relu(at::linear(state, h.mlp0_weight, h.mlp0_bias)), h.mlp3_weight, h.mlp3_bias).item<double>();
    logits.push_back(static_cast<float>(logit));
  }
  return logits;
}

DecisionAnswer Vela2Model::answer(const DecisionQuestion& q, const std::vector<float>& logits) const {
  DecisionAnswer a;
  a.id = q.id;
  a.kind = q.kind;
  const size_t n = q.options.size();
  std::vector<double> values(logits.begin(), logits.end());
  if (!std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); })) {
    a.error = ItemError::kInvalidModelOutput;
    return a;
  }
  const DecisionJson& temperatures = calibration_["temperature"];
  const auto temperature = [&](const char* type) { return temperatures.value(type, 1.0); };
  if (q.kind == QuestionKind::kSet) {
    const DecisionJson thresholds = calibration_.value("thresholds", DecisionJson::object());
    a.threshold = q.threshold.value_or(thresholds.value("set:" + q.id, thresholds.value("set:*", 0.5)));
    for (size_t k = 0; k < n; ++k) {
      const double p = 1 / (1 + std::exp(-values[k] / temperature("set")));
      a.probabilities.emplace_back(q.options[k].name, p);
      if (p > a.threshold) a.selected.push_back(q.options[k].name);
    }
    return a;
  }
  const double t = temperature(q.kind == QuestionKind::kScore ? "score" : "choice");
  std::vector<double> scaled(values.size());
  for (size_t k = 0; k < values.size(); ++k) scaled[k] = values[k] / t;
  const std::vector<double> p = softmax(std::vector<double>(scaled.begin(), scaled.begin() + static_cast<std::ptrdiff_t>(n)));
  if (q.kind == QuestionKind::kNoul) {
    a.noul = p[1];
    return a;
  }
  if (q.kind == QuestionKind::kChoice) {
    const size_t best = static_cast<size_t>(std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(n)) - values.begin());
    a.choice = q.options[best].name;
    std::vector<double> ordered = p;
    std::sort(ordered.rbegin(), ordered.rend());
    a.confidence = n == 1 ? 1.0 : std::clamp(ordered[0] - ordered[1], 0.0, 1.0);
    for (size_t k = 0; k < n; ++k) a.probabilities.emplace_back(q.options[k].name, p[k]);
    a.abstain_probability = softmax(scaled).back();
    return a;
  }
  double mean = 0, variance = 0;
  for (size_t k = 0; k < n; ++k) mean += static_cast<double>(k) * p[k];
  for (size_t k = 0; k < n; ++k) variance += p[k] * (static_cast<double>(k) - mean) * (static_cast<double>(k) - mean);
  a.score = mean;
  for (const DecisionOption& level : q.options) a.legend.push_back(level.name);
  a.confidence = std::clamp(1.0 - variance / ((static_cast<double>(n * n) - 1) / 12), 0.0, 1.0);
  for (size_t k = 0; k < n; ++k) a.probabilities.emplace_back(std::to_string(k), p[k]);
  return a;
}

namespace {

// Tokens kept of each part (in state order) once a sequence is fitted to the
// input: the part no question reads shrinks first (to 64 tokens, then to 1),
// then the read parts in state order; nullopt when the questions alone do
// not fit.
struct Fitted {
  std::vector<size_t> kept;
  size_t cut_unread = 0, cut_read = 0;
};

std::optional<Fitted> fit(size_t schema, const std::vector<size_t>& lengths, const std::vector<bool>& read,
                          size_t max_length) {
  constexpr size_t kUnreadFloor = 64;
  Fitted f{lengths, 0, 0};
  const size_t fixed = 3 + lengths.size();  // <bos>, [SEP_SCHEMA], <eos>, a [SEG_] per part
  const auto over = [&]() -> size_t {
    size_t total = fixed + schema;
    for (const size_t n : f.kept) total += n;
    return total > max_length ? total - max_length : 0;
  };
  const auto cut = [&](size_t i, size_t floor, size_t& counter) {
    const size_t keep = std::max(std::min(f.kept[i], floor), f.kept[i] > over() ? f.kept[i] - over() : 0);
    counter += f.kept[i] - keep;
    f.kept[i] = keep;
  };
  const auto unread = std::find(read.begin(), read.end(), false);
  if (unread != read.end()) {
    const size_t i = static_cast<size_t>(unread - read.begin());
    if (over() > 0) cut(i, kUnreadFloor, f.cut_unread);
    if (over() > 0) cut(i, 1, f.cut_unread);
  }
  for (size_t i = 0; i < lengths.size() && over() > 0; ++i)
    if (read[i]) cut(i, 1, f.cut_read);
  if (over() > 0) return std::nullopt;
  return f;
}

// Token windows [begin, end) of `kept` tokens over a part of `total`,
// overlapping by `overlap`; the last one ends at the part's end.
std::vector<std::pair<size_t, size_t>> windows_over(size_t total, size_t kept, size_t overlap) {
  std::vector<std::pair<size_t, size_t>> out;
  const size_t stride = std::max<size_t>(1, kept - overlap);
  for (size_t begin = 0; begin < std::max<size_t>(1, total > overlap ? total - overlap : 0); begin += stride) {
    out.emplace_back(begin, std::min(total, begin + kept));
    if (out.back().second >= total) break;
  }
  return out;
}

}  // namespace

// A question compiled: its tokens and its options' (a span: its labels'),
// and the parts it reads.
struct Vela2Model::Compiled {
  bool span = false;
  std::vector<int64_t> text;
  std::vector<std::vector<int64_t>> options;
  bool abstain = false;
  std::vector<size_t> parts;  // indices into the state's parts, in state order
  size_t length() const {
    size_t n = span ? 0 : 1 + text.size() + abstain;  // a span places its labels only
    for (const auto& o : options) n += 1 + o.size();
    return n;
  }
};

// A part of the state as tokens (at most the scan budget and one more) and,
// when a span reads it, its text in code points, its words with their first
// tokens and where each token starts.
struct Vela2Model::EncodedPart {
  std::vector<int64_t> ids;
  std::u32string text;
  TokenWords words;
  std::vector<size_t> token_starts;
};

// One marker sequence to read: its tokens and where each question sits.
struct Vela2Model::Sequence {
  std::vector<int64_t> ids;
  std::vector<Placed> placed;  // in the order of the row's questions
};

// The questions read together (the non-span ones and the first span; each
// further span alone) and their sequences: one, or the windows over a long part.
struct Vela2Model::Row {
  std::vector<size_t> questions;  // indices into the case's questions
  std::vector<Sequence> sequences;
};

// A state's questions planned: its parts, its rows, and each question's
// error or coverage.
struct Vela2Model::CasePlan {
  std::vector<EncodedPart> parts;
  std::vector<Row> rows;
  std::vector<ItemError> errors;   // per question (kNone: answered)
  std::vector<bool> read_windows;  // per question: every sequence of its row (else the first)
  size_t tokens = 0;
};

Vela2Model::EncodedPart Vela2Model::encode_part(const std::string& text, size_t cap, bool with_words) const {
  EncodeOptions options;
  options.add_special_tokens = false;
  options.max_length = cap;  // enough to know a part does not fit
  const Encoding e = tokenizer_->encode(text, options);
  EncodedPart part;
  part.ids.assign(e.ids.begin(), e.ids.end());
  if (!with_words) return part;
  part.text = code_points(text);
  std::vector<std::pair<size_t, size_t>> bytes;
  for (const Span& s : e.offsets) bytes.emplace_back(s.begin, s.end);
  const std::vector<CodePointRange> tokens = token_code_points(code_point_starts(text), bytes);
  for (const CodePointRange& t : tokens) part.token_starts.push_back(t.first);
  std::u32string read = part.text;  // a part read in part: its words end where its last token does
  if (e.truncated && !tokens.empty()) read.resize(tokens.back().second);
  part.words = words_of(read, tokens);
  return part;
}

Vela2Model::Sequence Vela2Model::assemble(const std::vector<const Compiled*>& compiled, const std::vector<PartRole>& roles,
                                          const std::vector<std::vector<int64_t>>& parts, const std::vector<size_t>& kept,
                                          const std::vector<size_t>& begins,
                                          const std::vector<EncodedPart>& encoded) const {
  Sequence out;
  std::vector<int64_t>& ids = out.ids;
  ids.push_back(bos_);
  out.placed.resize(compiled.size());
  for (const bool spans : {false, true})  // the questions, then the span's labels
    for (size_t i = 0; i < compiled.size(); ++i) {
      if (compiled[i]->span != spans) continue;
      Placed& placed = out.placed[i];
      if (!spans) {
        placed.query = ids.size();
        ids.push_back(markers_[kQ]);
        ids.insert(ids.end(), compiled[i]->text.begin(), compiled[i]->text.end());
      }
      for (const auto& option : compiled[i]->options) {
        placed.options.push_back(ids.size());
        ids.push_back(markers_[spans ? kE : kO]);
        ids.insert(ids.end(), option.begin(), option.end());
      }
      if (compiled[i]->abstain) {
        placed.options.push_back(ids.size());
        ids.push_back(markers_[kAbs]);
      }
    }
  ids.push_back(markers_[kSepSchema]);
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t k = 0; k < parts.size(); ++k) {
    const size_t start = ids.size();
    ids.push_back(markers_[segment_of(roles[k])]);
    ids.insert(ids.end(), parts[k].begin(), parts[k].begin() + static_cast<std::ptrdiff_t>(kept[k]));
    ranges.emplace_back(start, ids.size());
  }
  ids.push_back(eos_);
  for (size_t i = 0; i < compiled.size(); ++i) {
    Placed& placed = out.placed[i];
    const size_t first = compiled[i]->parts.front();
    placed.pool_begin = ranges[first].first;
    placed.pool_end = ranges[compiled[i]->parts.back()].second;
    placed.span = compiled[i]->span;
    placed.part = first;
    if (!placed.span) continue;
    const TokenWords& words = encoded[first].words;  // the words whose first token this sequence holds
    for (size_t w = 0; w < words.first_token.size(); ++w) {
      const size_t token = words.first_token[w];
      if (token < begins[first] || token - begins[first] >= kept[first]) continue;
      placed.words.push_back(ranges[first].first + 1 + token - begins[first]);
      placed.word_index.push_back(w);
    }
  }
  return out;
}

namespace {

// Whether every word of `part` lies wholly inside one of `windows`: from its
// first token to the token before the first one at or after its end.
bool words_within(const std::vector<size_t>& token_starts, const TokenWords& words,
                  const std::vector<std::pair<size_t, size_t>>& windows) {
  for (size_t w = 0; w < words.words.size(); ++w) {
    const size_t first = words.first_token[w];
    const size_t after = static_cast<size_t>(
        std::lower_bound(token_starts.begin() + static_cast<std::ptrdiff_t>(first), token_starts.end(),
                         words.words[w].second) - token_starts.begin());
    if (!std::any_of(windows.begin(), windows.end(), [&](const auto& win) { return win.first <= first && after <= win.second; }))
      return false;
  }
  return true;
}

}  // namespace

Vela2Model::CasePlan Vela2Model::plan_case(const std::vector<StatePart>& parts,
                                           const std::vector<DecisionQuestion>& questions,
                                           const DecideOptions& options) const {
  if (parts.empty()) throw InvalidInput("state must not be empty");
  CasePlan plan;
  plan.errors.assign(questions.size(), ItemError::kNone);
  plan.read_windows.assign(questions.size(), false);
  if (questions.empty()) return plan;
  const size_t scan = options.scan_tokens > 0 ? options.scan_tokens : max_scan_tokens();
  std::vector<Compiled> compiled(questions.size());
  std::vector<bool> spanned(parts.size(), false);  // parts a span reads
  for (size_t i = 0; i < questions.size(); ++i) {
    const DecisionQuestion& q = questions[i];
    Compiled& c = compiled[i];
    c.span = q.kind == QuestionKind::kSpan;
    if (!c.span) c.text = encode_part(q.instructions, max_length_ + 1, false).ids;
    for (const DecisionOption& o : q.options) c.options.push_back(encode_part(option_text(o), max_length_ + 1, false).ids);
    c.abstain = q.kind == QuestionKind::kChoice || q.kind == QuestionKind::kNoul;
    for (size_t k = 0; k < parts.size(); ++k)
      if (q.over.empty() || std::find(q.over.begin(), q.over.end(), parts[k].role) != q.over.end()) {
        c.parts.push_back(k);
        if (c.span) spanned[k] = true;
      }
    if (c.parts.empty()) throw InvalidInput("question \"" + q.id + "\" reads no part of the state");
  }
  for (size_t k = 0; k < parts.size(); ++k)
    plan.parts.push_back(encode_part(parts[k].text, std::max(scan, max_length_) + 1, spanned[k]));
  // Rows: the questions that are not spans with the first span; each further span alone.
  std::vector<std::vector<size_t>> rows(1);
  bool first_span = true;
  for (size_t i = 0; i < questions.size(); ++i) {
    if (compiled[i].span && !std::exchange(first_span, false)) rows.push_back({i});
    else rows[0].push_back(i);
  }
  for (const std::vector<size_t>& row : rows)
    if (!row.empty()) plan.rows.push_back(plan_row(plan, parts, questions, compiled, row, scan));
  return plan;
}

Vela2Model::Row Vela2Model::plan_row(CasePlan& plan, const std::vector<StatePart>& parts,
                                     const std::vector<DecisionQuestion>& questions,
                                     const std::vector<Compiled>& all, const std::vector<size_t>& indices,
                                     size_t scan) const {
  Row row{indices, {}};
  std::vector<const Compiled*> compiled;
  std::vector<bool> read(parts.size(), false);
  size_t schema = 0;
  std::optional<size_t> span;  // the row's span, by its index in the row
  for (const size_t i : indices) {
    if (all[i].span) span = compiled.size();
    compiled.push_back(&all[i]);
    for (const size_t k : all[i].parts) read[k] = true;
    schema += all[i].length();
  }
  std::vector<PartRole> roles;
  std::vector<size_t> lengths;
  std::vector<std::vector<int64_t>> part_tokens;
  for (size_t k = 0; k < parts.size(); ++k) {
    roles.push_back(parts[k].role);
    part_tokens.push_back(plan.parts[k].ids);
    lengths.push_back(part_tokens.back().size());
  }
  const std::optional<Fitted> first = fit(schema, lengths, read, max_length_);
  if (!first) {
    for (const size_t i : indices) plan.errors[i] = ItemError::kMaxLengthExceeded;
    return row;
  }
  // A read part that was cut is read in windows of what was kept: the span's
  // part, or without a span the one part every question reads.
  std::optional<size_t> windowed;
  if (first->cut_read > 0 && span) {
    const size_t k = compiled[*span]->parts[0];
    if (first->kept[k] < lengths[k]) windowed = k;
  } else if (first->cut_read > 0 && compiled[0]->parts.size() == 1) {
    const std::vector<size_t> one = compiled[0]->parts;
    if (std::all_of(compiled.begin(), compiled.end(), [&](const Compiled* c) { return c->parts == one; }))
      windowed = one[0];
  }
  const size_t w = windowed.value_or(0);
  const bool over_scan = windowed && lengths[w] > scan;
  const bool windows_read = windowed && !over_scan && std::any_of(indices.begin(), indices.end(), [&](size_t i) {
    return !questions[i].truncate;
  });
  std::vector<std::pair<size_t, size_t>> windows = {{0, windowed ? first->kept[w] : 0}};
  if (windows_read) windows = windows_over(lengths[w], first->kept[w], std::min(window_overlap_, first->kept[w] / 4));
  bool others_whole = true;  // every window held the other parts whole
  for (const auto& [begin, end] : windows) {
    std::vector<std::vector<int64_t>> window_parts = part_tokens;
    std::vector<size_t> window_lengths = lengths, begins(parts.size(), 0);
    if (windowed) {
      window_parts[w] = std::vector<int64_t>(part_tokens[w].begin() + static_cast<std::ptrdiff_t>(begin),
                                             part_tokens[w].begin() + static_cast<std::ptrdiff_t>(end));
      window_lengths[w] = end - begin;
      begins[w] = begin;
    }
    const std::optional<Fitted> f = fit(schema, window_lengths, read, max_length_);
    if (!f) {
      for (const size_t i : indices) plan.errors[i] = ItemError::kMaxLengthExceeded;
      row.sequences.clear();
      return row;
    }
    others_whole = others_whole && f->cut_unread == 0 && f->cut_read == 0;
    row.sequences.push_back(assemble(compiled, roles, window_parts, f->kept, begins, plan.parts));
  }
  for (const Sequence& s : row.sequences) plan.tokens += s.ids.size();
  const bool whole = first->cut_unread == 0 && first->cut_read == 0;  // one input held every part
  const bool covered = windows_read && others_whole && windows.back().second == lengths[w] &&
                       (!span || words_within(plan.parts[w].token_starts, plan.parts[w].words, windows));
  for (const size_t i : indices) {
    const DecisionQuestion& q = questions[i];
    const bool reads_windowed = std::find(all[i].parts.begin(), all[i].parts.end(), w) != all[i].parts.end();
    plan.read_windows[i] = windows_read && !q.truncate;
    if (windowed && over_scan && !q.truncate && reads_windowed) plan.errors[i] = ItemError::kScanBudgetExceeded;
    else if (q.require_full_input && !whole && !covered) plan.errors[i] = ItemError::kMaxLengthExceeded;
  }
  return row;
}

std::vector<std::vector<std::vector<float>>> Vela2Model::read_all(const std::vector<const Sequence*>& sequences) const {
  std::vector<const std::vector<int64_t>*> rows;
  for (const Sequence* s : sequences) rows.push_back(&s->ids);
  std::vector<std::vector<std::vector<float>>> out(sequences.size());
  forward_padded(*encoder_, rows, pad_, [&](size_t index, const at::Tensor& hidden) {
    for (const Placed& p : sequences[index]->placed)
      out[index].push_back(p.span ? word_logits(hidden, p) : option_logits(hidden, p));
  });
  return out;
}

std::vector<float> Vela2Model::word_logits(const at::Tensor& hidden, const Placed& placed) const {
  if (placed.words.empty()) return {};
  const Head& h = *head_;
  const auto project = [&](const std::vector<size_t>& positions, const at::Tensor& weight, const at::Tensor& bias) {
    std::vector<int64_t> index(positions.begin(), positions.end());
    const at::Tensor x = hidden.index_select(0, at::tensor(index, at::kLong));
    const at::Tensor y = at::linear(at::layer_norm(x, {h.norm_weight.size(0)}, h.norm_weight, h.norm_bias, 1e-5), weight, bias);
    return y / y.norm(2, -1, true).clamp_min(1e-12);
  };
  const at::Tensor logits =
      (at::matmul(project(placed.words, h.w_t, h.b_t), project(placed.options, h.w_e, h.b_e).t()) / h.tau_span).contiguous();
  return std::vector<float>(logits.data_ptr<float>(), logits.data_ptr<float>() + logits.numel());
}

std::vector<DecisionAnswer> Vela2Model::finish_case(const CasePlan& plan, const std::vector<DecisionQuestion>& questions,
                                                    const std::vector<std::vector<std::vector<float>>>& logits) const {
  std::vector<DecisionAnswer> answers(questions.size());
  size_t next = 0;  // the row's first sequence
  for (const Row& row : plan.rows) {
    for (size_t j = 0; j < row.questions.size(); ++j) {
      const size_t i = row.questions[j];
      const DecisionQuestion& q = questions[i];
      if (plan.errors[i] != ItemError::kNone) {
        answers[i] = failed({q}, plan.errors[i])[0];
        continue;
      }
      const size_t reads = plan.read_windows[i] ? row.sequences.size() : 1;
      if (q.kind == QuestionKind::kSpan) {
        answers[i] = answer_span(q, plan.parts[row.sequences[0].placed[j].part], row, j, logits, next, reads);
      } else {
        std::vector<float> combined = logits[next][j];
        for (size_t k = 1; k < reads; ++k)
          for (size_t o = 0; o < combined.size(); ++o)
            combined[o] = q.kind == QuestionKind::kSet ? std::max(combined[o], logits[next + k][j][o])
                                                       : combined[o] + logits[next + k][j][o];
        if (q.kind != QuestionKind::kSet)
          for (float& v : combined) v /= static_cast<float>(reads);
        answers[i] = answer(q, combined);
      }
      answers[i].complete_input = q.require_full_input;
    }
    next += row.sequences.size();
  }
  return answers;
}

DecisionAnswer Vela2Model::answer_span(const DecisionQuestion& q, const EncodedPart& part, const Row& row, size_t j,
                                       const std::vector<std::vector<std::vector<float>>>& logits, size_t first,
                                       size_t reads) const {
  DecisionAnswer a = failed({q}, ItemError::kNone)[0];
  const size_t labels = q.options.size(), total = part.words.words.size();
  // Each word's logits averaged over the sequences that hold it; read in
  // windows, every word of the part is listed (one no window held at -30).
  std::vector<double> sum(total * labels, 0.0);
  std::vector<size_t> count(total, 0);
  for (size_t k = 0; k < reads; ++k) {
    const Placed& placed = row.sequences[k].placed[j];
    const std::vector<float>& values = logits[first + k][j];
    for (size_t w = 0; w < placed.word_index.size(); ++w) {
      const size_t word = placed.word_index[w];
      ++count[word];
      for (size_t l = 0; l < labels; ++l) sum[word * labels + l] += values[w * labels + l];
    }
  }
  WordProbabilities words{&part.text, {}, {}, {}};
  for (const DecisionOption& o : q.options) words.labels.push_back(o.name);
  const double temperature = calibration_["temperature"].value("span", 1.0);
  for (size_t w = 0; w < total; ++w) {
    if (count[w] == 0 && reads == 1) continue;  // one sequence: the words it held
    words.words.push_back(part.words.words[w]);
    for (size_t l = 0; l < labels; ++l) {
      const double logit = count[w] > 0 ? sum[w * labels + l] / static_cast<double>(count[w]) : -30.0;
      words.p.push_back(1 / (1 + std::exp(-logit / temperature)));
    }
  }
  if (std::any_of(words.p.begin(), words.p.end(), [](double p) { return std::isnan(p); })) {
    a.error = ItemError::kInvalidModelOutput;
    return a;
  }
  SpanThreshold threshold;
  try {
    threshold = span_threshold(calibration_, q.calibration_key.empty() ? q.id : q.calibration_key, words,
                               part.ids.size(), q.threshold);
  } catch (const std::out_of_range&) {  // the calibration lacks the rule's values
    a.error = ItemError::kInvalidModelOutput;
    return a;
  }
  a.threshold = threshold.value;
  const auto [low, high] = q.span_range.value_or(CodePointRange{0, part.text.size()});
  for (DecisionSpan& s : decode_spans(words, threshold.value)) {
    const auto [start, end] = trim_span(part.text, std::max(s.start, low), std::min(s.end, high));
    if (start >= end) continue;
    a.spans.push_back({s.label, start - low, end - low, utf8_of(part.text, start, end), s.probability});
  }
  for (size_t w = 0; w < words.words.size(); ++w)  // the top word probability, within the range
    if (words.words[w].first >= low && words.words[w].second <= high)
      for (size_t l = 0; l < labels; ++l) a.noul = std::max(a.noul, words.at(w, l));
  return a;
}

std::vector<std::vector<DecisionAnswer>> Vela2Model::decide_all(
    const std::vector<DecisionCase>& cases, std::vector<size_t>* input_tokens, const DecideOptions& options,
    const std::function<void(const std::function<void()>&)>& on_lane) const {
  std::vector<CasePlan> plans;
  std::vector<const Sequence*> sequences;
  for (const DecisionCase& c : cases) plans.push_back(plan_case(*c.parts, *c.questions, options));
  std::vector<size_t> counts;  // each case's sequences
  for (const CasePlan& plan : plans) {
    counts.push_back(sequences.size());
    for (const Row& row : plan.rows)
      for (const Sequence& s : row.sequences) sequences.push_back(&s);
    counts.back() = sequences.size() - counts.back();
  }
  std::vector<std::vector<std::vector<float>>> logits;  // every case's sequences in shared forwards
  const auto forwards = [&] { logits = read_all(sequences); };
  if (on_lane) on_lane(forwards);
  else forwards();
  std::vector<std::vector<DecisionAnswer>> out;
  if (input_tokens != nullptr) input_tokens->clear();
  size_t next = 0;
  for (size_t k = 0; k < cases.size(); ++k) {
    const auto first = logits.begin() + static_cast<std::ptrdiff_t>(next);
    next += counts[k];
    out.push_back(finish_case(plans[k], *cases[k].questions,
                              {first, logits.begin() + static_cast<std::ptrdiff_t>(next)}));
    if (input_tokens != nullptr) input_tokens->push_back(plans[k].tokens);
  }
  return out;
}

std::vector<DecisionAnswer> Vela2Model::decide(const std::vector<StatePart>& parts,
                                               const std::vector<DecisionQuestion>& questions,
                                               size_t* input_tokens, const DecideOptions& options) const {
  std::vector<size_t> tokens;
  auto answers = decide_all({{nullptr, &parts, &questions}}, &tokens, options);
  if (input_tokens != nullptr) *input_tokens = tokens[0];
  return std::move(answers[0]);
}

}  // namespace semroute
