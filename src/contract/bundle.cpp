// POST /v1/bundle: several surface requests in one call, each answered with
// the status it would have had alone; they share the bundle's deadline
// unless their own is earlier. Classify tasks of one model (whichever heads
// they ask) run as one job: one packed forward, identical inputs computed once.
#include <chrono>
#include <map>

#include "contract/contract.h"
#include "semroute/error.h"

namespace semroute {
namespace {

const std::pair<const char*, Json (*)(const Json&, const SurfaceCall&)> kSurfaces[] = {
    {"embeddings", embeddings_surface},
    {"rerank", rerank_surface},
    {"decisions", decisions_surface}};

// Fills a task's result with what `run` answers (status 200 under `name`)
// or its error, with the status the task would have had alone.
template <class Run>
void answer_task(Json& result, const char* name, Run&& run) {
  try {
    Json response = run();
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

}  // namespace

Json bundle_surface(const Json& body, const SurfaceCall& call) {
  allow_fields(body, {"tasks", "options"}, "the request");
  const Json options = body.value("options", Json::object());
  allow_fields(options, {"deadline_ms"}, "options");
  const auto deadline_ms = number_field(options, "deadline_ms", "options");
  if (deadline_ms && *deadline_ms <= 0) throw invalid_request("options.deadline_ms: a number above 0");
  const auto tasks = body.find("tasks");
  if (tasks == body.end() || !tasks->is_array() || tasks->empty()) throw invalid_request("\"tasks\": a non-empty list");
  if (tasks->size() > call.limits.max_bundle_tasks)
    throw ContractError(413, "request_too_large",
                        "\"tasks\": at most " + std::to_string(call.limits.max_bundle_tasks) + " per bundle");
  for (size_t i = 0; i < tasks->size(); ++i) {
    const Json& task = (*tasks)[i];
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
  std::vector<Json> results(tasks->size());
  // Classify tasks, parsed, then run together by model and deadline.
  std::vector<ClassifyCall> calls(tasks->size());
  std::map<std::pair<const ServedModel*, std::optional<double>>, std::vector<size_t>> jobs;
  for (size_t i = 0; i < tasks->size(); ++i) {
    const Json& task = (*tasks)[i];
    results[i] = {{"id", task["id"]}};
    const auto request = task.find("classify");
    if (request == task.end()) continue;
    answer_task(results[i], "classify", [&]() -> Json {
      if (!request->is_object()) throw invalid_request("classify: expected a JSON object");
      calls[i] = parse_classify(*request, shared);
      jobs[{calls[i].model, calls[i].common.deadline_ms}].push_back(i);
      return nullptr;  // answered below
    });
  }
  for (const auto& job : jobs) {
    const ServedModel& model = *job.first.first;
    const std::vector<size_t>& members = job.second;
    std::vector<std::vector<ClassifyAnswer>> answers;
    std::vector<const ClassifyCall*> group;
    for (const size_t i : members) group.push_back(&calls[i]);
    for (size_t k = 0; k < members.size(); ++k) {
      const ClassifyCall& c = calls[members[k]];
      answer_task(results[members[k]], "classify", [&] {
        if (answers.empty()) {  // the first task runs the job; a task whose run failed lets the next try
          const ModelSlot slot(model, call.limits);
          answers = run_classify(group, shared, control_for(shared, c.common));
        }
        return classify_response(c, answers[k], shared);
      });
    }
  }
  for (size_t i = 0; i < tasks->size(); ++i) {
    const Json& task = (*tasks)[i];
    for (const auto& entry : kSurfaces) {
      const auto& name = entry.first;
      const auto& surface = entry.second;
      const auto request = task.find(name);
      if (request == task.end()) continue;
      answer_task(results[i], name, [&] {
        if (!request->is_object()) throw invalid_request(std::string(name) + ": expected a JSON object");
        return surface(*request, shared);
      });
    }
  }
  return {{"results", results}};
}

}  // namespace semroute
