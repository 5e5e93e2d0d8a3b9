// POST /v1/bundle: several surface requests in one call, each answered with
// the status it would have had alone; they share the bundle's deadline
// unless their own is earlier.
#include <chrono>

#include "contract/contract.h"
#include "semroute/error.h"

namespace semroute {
namespace {

const std::pair<const char*, nlohmann::json (*)(const nlohmann::json&, const SurfaceCall&)> kSurfaces[] = {
    {"classify", classify_surface},
    {"embeddings", embeddings_surface},
    {"rerank", rerank_surface},
    {"decisions", decisions_surface}};

}  // namespace

nlohmann::json bundle_surface(const nlohmann::json& body, const SurfaceCall& call) {
  allow_fields(body, {"tasks", "options"}, "the request");
  const nlohmann::json options = body.value("options", nlohmann::json::object());
  allow_fields(options, {"deadline_ms"}, "options");
  const auto deadline_ms = number_field(options, "deadline_ms", "options");
  if (deadline_ms && *deadline_ms <= 0) throw invalid_request("options.deadline_ms: a number above 0");
  const auto tasks = body.find("tasks");
  if (tasks == body.end() || !tasks->is_array() || tasks->empty()) throw invalid_request("\"tasks\": a non-empty list");
  if (tasks->size() > call.limits.max_bundle_tasks)
    throw ContractError(413, "request_too_large",
                        "\"tasks\": at most " + std::to_string(call.limits.max_bundle_tasks) + " per bundle");
  for (size_t i = 0; i < tasks->size(); ++i) {
    const nlohmann::json& task = (*tasks)[i];
    const std::string where = "tasks[" + std::to_string(i) + "]";
    allow_fields(task, {"id", "classify", "embeddings", "rerank", "decisions"}, where);
    const auto id = string_field(task, "id", where);
    if (!id || id->empty()) throw invalid_request(where + ".id: a non-empty string");
    if (task.size() != 2) throw invalid_request(where + ": exactly one of classify, embeddings, rerank, decisions");
  }
  SurfaceCall shared = call;
  CommonOptions bundle_options;
  bundle_options.deadline_ms = deadline_ms;
  shared.control = control_for(call, bundle_options);
  nlohmann::json results = nlohmann::json::array();
  for (const nlohmann::json& task : *tasks) {
    nlohmann::json result = {{"id", task["id"]}};
    for (const auto& [name, surface] : kSurfaces) {
      const auto request = task.find(name);
      if (request == task.end()) continue;
      try {
        if (!request->is_object()) throw invalid_request(std::string(name) + ": expected a JSON object");
        nlohmann::json response = surface(*request, shared);
        result["status"] = 200;
        result[name] = std::move(response);
      } catch (const ContractError& e) {
        result["status"] = e.status;
        result["error"] = {{"code", e.code}, {"message", e.what()}};
      } catch (const Error& e) {
        const bool ours = e.code() == ErrorCode::kInternal || e.code() == ErrorCode::kInvalidModel;
        result["status"] = ours ? 500 : 400;
        result["error"] = {{"code", ours ? "internal_error" : "invalid_request"}, {"message", e.what()}};
      }
    }
    results.push_back(std::move(result));
  }
  return {{"results", results}};
}

}  // namespace semroute
