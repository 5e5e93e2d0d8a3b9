// The model runtime contract of the vLLM Semantic Router (OpenAPI 2.x;
// docs/runtime.md): the surfaces `semroute serve` answers under it, and the
// rules they share — strict request fields, the contract's error codes and
// statuses, per-item errors, options, model selection, meta, Server-Timing.
// One file per surface (classify.cpp, embeddings.cpp, rerank.cpp,
// bundle.cpp, models.cpp); the models themselves are src/runtime's.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "contract/served_model.h"
#include "runtime/request_control.h"
#include "runtime/result_cache.h"

namespace semroute {

// Requests and responses keep the order of their keys, as the contract's
// other runtimes do: a decision's answers come back in the order asked.
using Json = nlohmann::ordered_json;

// The contract version served (/health, /v1/models): a router refuses
// another major version.
inline constexpr const char* kContractVersion = "2.3.0";
// Inputs (or documents) one classify, embeddings or rerank request may carry.
inline constexpr size_t kMaxContractInputs = 2048;
inline constexpr size_t kMaxRerankDocuments = 1024;


// What one process (or one in-process runtime) allows a request.
struct ContractLimits {
  size_t max_queue = 64;                      // requests in flight per model: 429 overloaded beyond
  size_t max_bundle_tasks = 64;               // tasks of one bundle: 413 beyond
  size_t max_request_bytes = size_t{1} << 20;  // a body's bytes (the HTTP layer refuses a larger one)
};

// An answer: its status, its JSON body, and its headers (Server-Timing; Retry-After on 429).
struct ContractReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::map<std::string, size_t> item_errors;  // items answered with an error of their own, by error
};

// A request-level failure, answered {"error": {"code", "message"}} with the
// contract's status for its code.
struct ContractError : std::runtime_error {
  ContractError(int status, std::string code, const std::string& message)
      : std::runtime_error(message), status(status), code(std::move(code)) {}
  int status;
  std::string code;  // invalid_request, model_not_found, request_too_large, unsupported_surface,
                     // overloaded, internal_error, not_ready
};
ContractError invalid_request(const std::string& message);

// What every surface call is given.
struct SurfaceCall {
  const ServedModels& models;
  const ContractLimits& limits;
  RequestControl control;  // the request's (deadline_ms applies on top); records into `times`
  WorkTimes* times;        // where this call's phases go (meta's queue_ms, compute_ms)
  RequestControl::Clock::time_point read;  // when the body had been read: deadline_ms counts from it
  ResultCache* cache = nullptr;            // answers already computed (null: none kept)
};

// The surfaces: a parsed body in, the response's JSON out; ContractError for
// a request-level failure.
Json classify_surface(const Json& body, const SurfaceCall& call);
Json embeddings_surface(const Json& body, const SurfaceCall& call);
Json rerank_surface(const Json& body, const SurfaceCall& call);
Json decisions_surface(const Json& body, const SurfaceCall& call);
Json bundle_surface(const Json& body, const SurfaceCall& call);

// GET /v1/models, /health (status and body), /health/live.
Json model_list(const ServedModels& models, const ContractLimits& limits);
std::pair<int, Json> readiness(const ServedModels& models);
Json liveness();

// The OpenAPI document of what semroute serves (src/contract/openapi.yaml).
extern const char* const kOpenApiText;

// A contract path ("/v1/classify", "/health", …) with its method: its reply
// with the Server-Timing header (for POST surfaces, errors included). Never
// throws. nullopt for paths the contract does not define. `cache`: where
// answers are kept and found (null: none).
std::optional<ContractReply> contract_reply(std::string_view method, std::string_view route, std::string_view body,
                                            const ServedModels& models, const ContractLimits& limits,
                                            const RequestControl& control, ResultCache* cache = nullptr);

// ---- shared by the surfaces -------------------------------------------

// `object` must be a JSON object whose keys are all in `allowed` (else
// invalid_request naming `where` and the key).
void allow_fields(const Json& object, std::initializer_list<std::string_view> allowed, const std::string& where);
// The served model the request names ("model"), or the only one. 404
// model_not_found for no match, 503 not_ready for a model that failed.
const ServedModel& select_model(const Json& body, const ServedModels& models);
const ServedModel& ready_model(const ServedModel& model);

// The options every surface takes, read (and checked) from body["options"]
// after allow_fields(options, …) accepted its keys.
struct CommonOptions {
  std::optional<double> deadline_ms;
  bool return_meta = false;
  std::string profile;
};
CommonOptions common_options(const Json& options, const ServedModel& model);
// call.control with options.deadline_ms (counted from `read`) applied.
RequestControl control_for(const SurfaceCall& call, const CommonOptions& options);
// Typed readers of optional fields: nullopt when absent; invalid_request
// naming `where` for a wrong type or range.
std::optional<int64_t> integer_field(const Json& object, const char* key, int64_t min, const std::string& where);
std::optional<double> number_field(const Json& object, const char* key, const std::string& where);
std::optional<bool> bool_field(const Json& object, const char* key, const std::string& where);
std::optional<std::string> string_field(const Json& object, const char* key, const std::string& where);

// The model's share of the queue held for the request (429 overloaded when full).
class ModelSlot {
 public:
  ModelSlot(const ServedModel& model, const ContractLimits& limits);
 private:
  QueueSlot slot_;
};

// {"model_id", "revision", "model_sha256", "profile", "numerics", "engine",
// "accelerator", "device", "queue_ms", "compute_ms"} of a response.
Json response_meta(const ServedModel& model, const WorkTimes& times);
// The contract's InputUsage object.
Json input_usage(const InputFacts& input);
// The profile a model is served with: "exact" for float32 weights, else its dtype.
std::string profile_of(const ServedModel& model);

// /v1/classify in three steps, so that a bundle runs the calls of one model
// in one packed forward: the parsed request (its items are views into the
// body, which must outlive it), the answers of calls to one model (through
// the result cache), the response.
struct ClassifyCall {
  const ServedModel* model = nullptr;
  size_t head = 0;
  ClassifyRequest request;
  CommonOptions common;
  size_t inputs = 0;                // the request's input count
  std::vector<ClassifyItem> items;  // its well-formed items (the others: invalid_input)
  std::vector<size_t> positions;    // where each item is in the input
};
ClassifyCall parse_classify(const Json& body, const SurfaceCall& call);
std::vector<std::vector<ClassifyAnswer>> run_classify(const std::vector<const ClassifyCall*>& calls,
                                                      const SurfaceCall& call, const RequestControl& control);
Json classify_response(const ClassifyCall& call, const std::vector<ClassifyAnswer>& answers,
                                 const SurfaceCall& surface);

}  // namespace semroute
