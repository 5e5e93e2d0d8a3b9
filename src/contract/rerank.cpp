// POST /v1/rerank: documents scored against a query by a pair scorer,
// results by descending logit (ties by index), the first top_n of them, then
// the documents that failed.
#include <algorithm>
#include <cmath>

#include "contract/contract.h"

namespace semroute {

Json rerank_surface(const Json& body, const SurfaceCall& call) {
  allow_fields(body, {"model", "query", "documents", "top_n", "return_documents", "layer", "dimensions", "options"},
               "the request");
  const Json options = body.value("options", Json::object());
  allow_fields(options, {"deadline_ms", "profile", "return_meta", "overflow", "max_tokens"}, "options");
  const auto query = string_field(body, "query", "the request");
  if (!query) throw invalid_request("\"query\": required");
  const auto documents = body.find("documents");
  if (documents == body.end() || !documents->is_array() || documents->empty())
    throw invalid_request("\"documents\": a non-empty list of strings");
  if (documents->size() > kMaxRerankDocuments)
    throw invalid_request("\"documents\": at most " + std::to_string(kMaxRerankDocuments) + " per request");
  std::vector<std::string_view> texts;
  for (const auto& d : *documents) {
    if (!d.is_string()) throw invalid_request("\"documents\": a list of strings");
    texts.push_back(d.get_ref<const std::string&>());
  }
  const auto top_n = integer_field(body, "top_n", 1, "the request");
  const bool return_documents = bool_field(body, "return_documents", "the request").value_or(false);
  RerankRequest request;
  request.exit.layer = integer_field(body, "layer", 1, "the request").value_or(0);
  request.exit.dimension = integer_field(body, "dimensions", 1, "the request").value_or(0);
  if (string_field(options, "overflow", "options").value_or("reject") != "reject")
    throw invalid_request("options.overflow: pairs are never cut (reject)");
  request.max_tokens = static_cast<size_t>(integer_field(options, "max_tokens", 1, "options").value_or(0));
  const ServedModel& model = select_model(body, call.models);
  const CommonOptions common = common_options(options, model);
  if (!model.rerank) throw ContractError(422, "unsupported_surface", "model \"" + model.name + "\" has no pair scorer");
  const PairExit fallback = model.rerank->scorer().default_exit();
  if (request.exit.layer == 0) request.exit.layer = fallback.layer;
  if (request.exit.dimension == 0) request.exit.dimension = fallback.dimension;

  const ModelSlot slot(model, call.limits);
  const std::vector<RerankAnswer> answers = model.rerank->rerank(*query, texts, request, control_for(call, common));
  Json scored = Json::array(), failed = Json::array();
  std::vector<size_t> order;
  size_t input_tokens = 0;
  for (size_t i = 0; i < answers.size(); ++i) {
    if (answers[i].error != ItemError::kNone) {
      failed.push_back({{"index", i}, {"error", item_error_name(answers[i].error)}});
    } else {
      order.push_back(i);
      input_tokens += answers[i].input.tokens;
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return answers[a].logit > answers[b].logit; });
  if (top_n && order.size() > static_cast<size_t>(*top_n)) order.resize(static_cast<size_t>(*top_n));
  for (const size_t i : order) {
    Json r = {{"index", i},
                        {"relevance_score", 1.0 / (1.0 + std::exp(-answers[i].logit))},
                        {"logit", answers[i].logit},
                        {"input", input_usage(answers[i].input)}};
    if (return_documents) r["document"] = texts[i];
    scored.push_back(std::move(r));
  }
  for (auto& f : failed) scored.push_back(std::move(f));
  Json out = {{"model", model.name},
                        {"results", scored},
                        {"usage", {{"input_tokens", input_tokens}, {"output_tokens", 0}}}};
  if (common.return_meta) {
    out["meta"] = response_meta(model, *call.times);
    out["meta"]["pair_scorer"] = {{"layer", request.exit.layer}, {"dimension", request.exit.dimension}};
  }
  return out;
}

}  // namespace semroute
