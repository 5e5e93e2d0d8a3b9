// POST /v1/decisions (and /v1/systemone): typed questions about a state for
// a decision model (Vela 2.0), and further `states` answered in the same
// call, each as its own request would be.
#include "contract/contract.h"
#include "semroute/error.h"

namespace semroute {
namespace {

// One state of the request: its name ("" for the request's own) and plan.
struct PlannedState {
  std::string name;
  DecisionPlan plan;
};

DecisionPlan plan_state(const Json& entry, const std::string& where, const DecisionModel& model) {
  try {
    return plan_decision(entry.at("state"), entry.at("questions"), &model);
  } catch (const InvalidInput& e) {
    throw invalid_request(where + e.what());
  }
}

void refuse_images(const Json& entry, const std::string& where) {
  const auto images = entry.find("images");
  if (images == entry.end() || images->is_null()) return;
  if (!images->is_array()) throw invalid_request(where + "images: a list of data URLs");
  if (!images->empty()) throw invalid_request(where + "images: this model reads text only (its card's modalities)");
}

std::vector<PlannedState> plan_states(const Json& body, const DecisionModel& model) {
  if (!body.contains("state")) throw invalid_request("\"state\": required");
  if (!body.contains("questions")) throw invalid_request("\"questions\": required");
  refuse_images(body, "");
  std::vector<PlannedState> out;
  out.push_back({"", plan_state(body, "", model)});
  const auto states = body.find("states");
  if (states == body.end() || states->is_null()) return out;
  if (!states->is_object()) throw invalid_request("states: an object of named states");
  for (const auto& [name, entry] : states->items()) {
    const std::string where = "states." + name + ": ";
    if (name.find_first_not_of(" \t\r\n") == std::string::npos)
      throw invalid_request("states: every state needs a non-blank name");
    allow_fields(entry, {"state", "questions", "images"}, "states." + name);
    if (!entry.contains("state") || !entry.contains("questions"))
      throw invalid_request(where + "state and questions are required");
    refuse_images(entry, where);
    out.push_back({name, plan_state(entry, where, model)});
  }
  return out;
}

// 400 when no question of any state is valid (nothing could be answered).
void refuse_unanswerable(const std::vector<PlannedState>& states) {
  std::string reasons;
  for (const PlannedState& s : states) {
    if (!s.plan.questions.empty()) return;
    for (const auto& id : s.plan.ids) {
      const Json& answer = s.plan.invalid.at(id);
      reasons += (reasons.empty() ? "" : "; ") + (s.name.empty() ? "" : s.name + ".") + id + ": " +
                 answer.value("message", std::string("invalid_question"));
    }
  }
  throw invalid_request("no question is valid (" + reasons + ")");
}

}  // namespace

Json decisions_surface(const Json& body, const SurfaceCall& call) {
  allow_fields(body, {"model", "state", "questions", "options", "states", "images"}, "the request");
  const Json options = body.value("options", Json::object());
  allow_fields(options, {"deadline_ms", "profile", "return_meta", "max_tokens"}, "options");
  const ServedModel& model = select_model(body, call.models);
  const CommonOptions common = common_options(options, model);
  if (!model.decision)
    throw ContractError(422, "unsupported_surface", "model \"" + model.name + "\" answers no decisions");
  DecideOptions decide_options;  // options.max_tokens: the scan budget, instead of the card's max_scan_tokens
  decide_options.scan_tokens = static_cast<size_t>(integer_field(options, "max_tokens", 1, "options").value_or(0));
  if (decide_options.scan_tokens > 0 && !model.decision->has_scan_budget())
    throw invalid_request("options.max_tokens: model \"" + model.name + "\" reads every question whole (no scan budget)");
  const std::vector<PlannedState> states = plan_states(body, *model.decision);
  refuse_unanswerable(states);
  const ModelSlot slot(model, call.limits);
  const RequestControl control = control_for(call, common);
  std::vector<std::vector<DecisionAnswer>> answers(states.size());
  std::vector<size_t> input_tokens(states.size(), 0);
  const auto start = RequestControl::Clock::now();
  auto on_lane = RequestControl::Clock::duration::zero();  // queued for and on the compute lane
  try {  // every state's sequences in shared forwards
    std::vector<DecisionCase> cases;
    for (const PlannedState& s : states) cases.push_back({&s.plan.state, &s.plan.parts, &s.plan.questions});
    answers = model.decision->decide_all(cases, &input_tokens, decide_options, [&](const std::function<void()>& forwards) {
      const auto queued = RequestControl::Clock::now();
      control.on_lane([&] {
        forwards();
        return 0;
      });
      on_lane = RequestControl::Clock::now() - queued;
    });
    control.add_time(&WorkTimes::tokenize, RequestControl::Clock::now() - start - on_lane);  // and the readout
  } catch (const DeadlinePassed&) {  // not started by the deadline: every question deadline_exceeded
    for (size_t i = 0; i < states.size(); ++i) answers[i] = failed_answers(states[i].plan, ItemError::kDeadlineExceeded);
  }
  Json response;
  for (size_t i = 0; i < states.size(); ++i) {
    Json state = {{"model", model.name}};
    Json answered = decision_answers(states[i].plan, answers[i]);
    state["answers"] = std::move(answered["answers"]);
    state["usage"] = {{"input_tokens", input_tokens[i]}, {"output_tokens", 0}};
    answered.erase("answers");
    state.update(answered);  // spans, sets, thresholds
    if (common.return_meta) state["meta"] = response_meta(model, *call.times);
    if (i == 0) response = std::move(state);
    else response["states"][states[i].name] = std::move(state);
  }
  return response;
}

}  // namespace semroute
