#include "contract/contract.h"

namespace semroute {

// POST /v1/decisions (and /v1/systemone): typed questions for a decision
// model. No served model is one: a valid request is answered unsupported_surface.
Json decisions_surface(const Json& body, const SurfaceCall& call) {
  allow_fields(body, {"model", "state", "questions", "options", "states", "images"}, "the request");
  const Json options = body.value("options", Json::object());
  allow_fields(options, {"deadline_ms", "profile", "return_meta", "max_tokens"}, "options");
  if (!body.contains("state")) throw invalid_request("\"state\": required");
  const auto questions = body.find("questions");
  if (questions == body.end() || !questions->is_object() || questions->empty())
    throw invalid_request("\"questions\": an object of at least one question");
  const ServedModel& model = select_model(body, call.models);
  common_options(options, model);
  throw ContractError(422, "unsupported_surface", "model \"" + model.name + "\" answers no decisions");
}

}  // namespace semroute
