#include "contract/contract.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "core/file_input.h"
#include "semroute/error.h"

namespace semroute {
namespace {

using Clock = RequestControl::Clock;

double ms_since(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

// "parse;dur=0.021, tokenize;dur=0.153, …, total;dur=5.141"
std::string server_timing(double parse, const WorkTimes& t, double serialize, double total) {
  const std::pair<const char*, double> phases[] = {{"parse", parse},     {"tokenize", t.tokenize},
                                                   {"queue", t.queue},   {"forward", t.forward},
                                                   {"post", t.post},     {"serialize", serialize},
                                                   {"total", total}};
  std::string out;
  char buf[64];
  for (const auto& [name, ms] : phases) {
    std::snprintf(buf, sizeof buf, "%s%s;dur=%.3f", out.empty() ? "" : ", ", name, ms);
    out += buf;
  }
  return out;
}

// Compact JSON, non-ASCII kept as UTF-8.
std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

ContractReply json_reply(const Json& body, int status = 200) {
  ContractReply r;
  r.status = status;
  r.body = dump(body);
  return r;
}

ContractReply error_reply(int status, const std::string& code, const std::string& message) {
  return json_reply({{"error", {{"code", code}, {"message", message}}}}, status);
}

ContractReply contract_error(const ContractError& e) {
  ContractReply r = error_reply(e.status, e.code, e.what());
  if (e.status == 429) r.headers.emplace_back("Retry-After", "1");
  return r;
}

// A library error raised while serving a request: the request's fault
// (400) unless the model or the machine failed.
ContractError contract_error_of(const Error& e) {
  switch (e.code()) {
    case ErrorCode::kInvalidModel:
    case ErrorCode::kInternal: return ContractError(500, "internal_error", e.what());
    case ErrorCode::kOutOfMemory: return ContractError(429, "overloaded", e.what());
    default: return invalid_request(e.what());
  }
}

Json parse_contract_body(std::string_view body) {
  try {
    return parse_request_body(body);
  } catch (const InvalidInput& e) {
    throw invalid_request(e.what());
  }
}

// One walk over a response: whether every number is finite (NaN and
// infinities have no JSON form: a response holding one is the runtime's
// failure, never a number the client misreads), and its items with an error
// of their own ({"index", "error": "deadline_exceeded"}) counted by error,
// bundled tasks' included.
bool inspect_response(const Json& j, std::map<std::string, size_t>& item_errors) {
  if (j.is_number_float()) return std::isfinite(j.get<double>());
  if (j.is_object()) {
    const auto error = j.find("error");
    if (error != j.end() && error->is_string() && j.contains("index")) ++item_errors[error->get<std::string>()];
  }
  if (j.is_structured())
    for (const auto& v : j)
      if (!inspect_response(v, item_errors)) return false;
  return true;
}

using Surface = Json (*)(const Json&, const SurfaceCall&);

Surface surface_of(std::string_view route) {
  if (route == "/v1/classify") return classify_surface;
  if (route == "/v1/embeddings") return embeddings_surface;
  if (route == "/v1/rerank") return rerank_surface;
  if (route == "/v1/bundle") return bundle_surface;
  if (route == "/v1/decisions" || route == "/v1/systemone") return decisions_surface;
  return nullptr;
}

}  // namespace

ContractError invalid_request(const std::string& message) { return ContractError(400, "invalid_request", message); }

std::optional<ContractReply> contract_reply(std::string_view method, std::string_view route, std::string_view body,
                                    const ServedModels& models, const ContractLimits& limits,
                                    const RequestControl& control, ResultCache* cache) {
  if (route == "/health/live" || route == "/health" || route == "/v1/models" || route == "/openapi.yaml") {
    if (method != "GET") return error_reply(405, "invalid_request", std::string(route) + " takes GET");
    if (route == "/openapi.yaml") {
      ContractReply document;
      document.body = kOpenApiText;
      document.content_type = "application/yaml";
      return document;
    }
    if (route == "/health/live") return json_reply(liveness());
    if (route == "/v1/models") return json_reply(model_list(models, limits));
    const auto [status, health] = readiness(models);
    return json_reply(health, status);
  }
  const Surface surface = surface_of(route);
  if (surface == nullptr) return std::nullopt;
  const auto start = Clock::now();
  WorkTimes times;
  double parse = 0, serialize = 0;
  ContractReply reply;
  try {
    if (method != "POST") throw ContractError(405, "invalid_request", std::string(route) + " takes POST");
    const Json request = parse_contract_body(body);
    parse = ms_since(start);
    const RequestControl timed = control.recording(&times);
    const Json response = surface(request, SurfaceCall{models, limits, timed, &times, Clock::now(), cache});
    std::map<std::string, size_t> item_errors;
    if (!inspect_response(response, item_errors))
      throw ContractError(500, "internal_error", "the response holds a non-finite number");
    const auto serialize_start = Clock::now();
    reply = json_reply(response);
    reply.item_errors = std::move(item_errors);
    serialize = ms_since(serialize_start);
  } catch (const ContractError& e) {
    reply = contract_error(e);
  } catch (const RequestCancelled& e) {
    reply = error_reply(503, "not_ready", e.what());
  } catch (const DeadlinePassed& e) {  // work the surface could not answer item by item
    reply = error_reply(503, "not_ready", e.what());
  } catch (const Error& e) {
    reply = contract_error(contract_error_of(e));
  } catch (const std::bad_alloc&) {
    reply = error_reply(429, "overloaded", "out of memory");
  } catch (const std::exception& e) {
    reply = error_reply(500, "internal_error", e.what());
  }
  reply.headers.emplace_back("Server-Timing", server_timing(parse, times, serialize, ms_since(start)));
  return reply;
}

void allow_fields(const Json& object, std::initializer_list<std::string_view> allowed, const std::string& where) {
  if (!object.is_object()) throw invalid_request(where + ": expected a JSON object");
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (const std::string_view a : allowed) known = known || key == a;
    if (!known) throw invalid_request(where + ": unknown field \"" + key + "\"");
  }
}

const ServedModel& select_model(const Json& body, const ServedModels& models) {
  const auto it = body.find("model");
  if (it == body.end() || it->is_null()) {
    if (models.size() == 1) return ready_model(*models.begin()->second);
    throw invalid_request("\"model\": required (this runtime serves " + std::to_string(models.size()) + " models)");
  }
  if (!it->is_string()) throw invalid_request("\"model\": expected a string");
  const std::string& name = it->get_ref<const std::string&>();
  const ServedModel* found = nullptr;
  if (const auto m = models.find(name); m != models.end()) found = m->second.get();
  for (const auto& [served, m] : models)  // the directory as configured, or its last component
    if (found == nullptr && (name == m->path.string() || name == m->path.filename().string())) found = m.get();
  if (found == nullptr) throw ContractError(404, "model_not_found", "no model \"" + name + "\"");
  return ready_model(*found);
}

const ServedModel& ready_model(const ServedModel& model) {
  if (!model.ready())
    throw ContractError(503, "not_ready", "model \"" + model.name + "\" is " + model.status + ": " + model.reason);
  return model;
}

std::optional<int64_t> integer_field(const Json& object, const char* key, int64_t min, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  if (!it->is_number_integer() || it->get<int64_t>() < min)
    throw invalid_request(where + "." + key + ": an integer of at least " + std::to_string(min));
  return it->get<int64_t>();
}

std::optional<double> number_field(const Json& object, const char* key, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  if (!it->is_number() || !std::isfinite(it->get<double>()))
    throw invalid_request(where + "." + key + ": a finite number");
  return it->get<double>();
}

std::optional<bool> bool_field(const Json& object, const char* key, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  if (!it->is_boolean()) throw invalid_request(where + "." + key + ": true or false");
  return it->get<bool>();
}

std::optional<std::string> string_field(const Json& object, const char* key, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  if (!it->is_string()) throw invalid_request(where + "." + key + ": a string");
  return it->get<std::string>();
}

std::string profile_of(const ServedModel& model) { return model.dtype == "fp32" ? "exact" : model.dtype; }

CommonOptions common_options(const Json& options, const ServedModel& model) {
  CommonOptions c;
  c.deadline_ms = number_field(options, "deadline_ms", "options");
  if (c.deadline_ms && *c.deadline_ms <= 0) throw invalid_request("options.deadline_ms: a number above 0");
  c.return_meta = bool_field(options, "return_meta", "options").value_or(false);
  c.profile = string_field(options, "profile", "options").value_or("");
  if (!c.profile.empty() && c.profile != profile_of(model))
    throw invalid_request("options.profile: \"" + c.profile + "\" is not served for this model (its profile is \"" +
                          profile_of(model) + "\")");
  return c;
}

RequestControl control_for(const SurfaceCall& call, const CommonOptions& options) {
  if (!options.deadline_ms) return call.control;
  const double ms = std::min(*options.deadline_ms, 1e12);  // beyond ~30 years: no deadline at all
  return call.control.until(call.read + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double, std::milli>(ms)));
}

ModelSlot::ModelSlot(const ServedModel& model, const ContractLimits& limits) : slot_(model.in_flight, limits.max_queue) {
  if (slot_.full())
    throw ContractError(429, "overloaded", "model \"" + model.name + "\" has a full queue; retry shortly");
}

Json response_meta(const ServedModel& model, const WorkTimes& times) {
  return {{"model_id", model.name},
          {"revision", nullptr},
          {"model_sha256", model.identity.model_sha256},
          {"profile", profile_of(model)},
          {"numerics", model.dtype == "fp32" ? "exact" : "approximate"},
          {"engine", "semroute"},
          {"accelerator", model.device},
          {"device", model.device},
          {"queue_ms", times.queue},
          {"compute_ms", times.forward}};
}

Json input_usage(const InputFacts& input) {
  Json j = {{"tokens", input.tokens}, {"processed_tokens", input.processed_tokens}, {"truncated", input.truncated}};
  if (input.tokens_lower_bound) j["tokens_lower_bound"] = true;
  if (input.windows > 0) j["windows"] = input.windows;
  return j;
}

}  // namespace semroute
