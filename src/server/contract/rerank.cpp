// POST /v1/rerank: documents scored against a query by a pair scorer. No
// served model has one yet: a valid request is answered unsupported_surface.
#include "server/contract/contract.h"

namespace semroute {

nlohmann::json rerank_surface(const nlohmann::json& body, const SurfaceCall& call) {
  allow_fields(body, {"model", "query", "documents", "top_n", "return_documents", "layer", "dimensions", "options"},
               "the request");
  const nlohmann::json options = body.value("options", nlohmann::json::object());
  allow_fields(options, {"deadline_ms", "profile", "return_meta", "overflow", "max_tokens"}, "options");
  if (!string_field(body, "query", "the request")) throw invalid_request("\"query\": required");
  const auto documents = body.find("documents");
  if (documents == body.end() || !documents->is_array() || documents->empty())
    throw invalid_request("\"documents\": a non-empty list of strings");
  if (documents->size() > kMaxContractInputs)
    throw ContractError(413, "request_too_large",
                        "\"documents\": at most " + std::to_string(kMaxContractInputs) + " per request");
  integer_field(body, "top_n", 1, "the request");
  bool_field(body, "return_documents", "the request");
  integer_field(body, "layer", 1, "the request");
  integer_field(body, "dimensions", 1, "the request");
  const ServedModel& model = select_model(body, call.models);
  common_options(options, model);
  throw ContractError(422, "unsupported_surface", "model \"" + model.name + "\" has no pair scorer (rerank)");
}

}  // namespace semroute
