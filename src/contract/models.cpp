// GET /v1/models, /health and /health/live: what is served, and whether it
// is ready. Every model is loaded, identified (SHA-256 of its files, checked
// against its manifest where it has one) and answered once before the server
// listens, so a model listed here is ready.
#include "contract/contract.h"

namespace semroute {
namespace {

Json head_card(const HeadInfo& h) {
  Json card = {{"name", h.name},
                         {"kind", head_kind_name(h.kind)},
                         {"labels", h.labels},
                         {"inputs", h.inputs},
                         {"default_threshold", nullptr},
                         {"thresholds", nullptr},
                         {"overflow", overflow_policy_name(h.overflow)},
                         {"window", nullptr},
                         {"reduction", h.reduction},
                         {"operating_point_sha256", nullptr}};
  if (h.default_threshold) card["default_threshold"] = *h.default_threshold;
  if (h.window) card["window"] = {{"tokens", h.window->tokens}, {"overlap", h.window->overlap}};
  if (h.reduction.empty()) card["reduction"] = nullptr;
  if (h.operating_point) {
    card["thresholds"] = h.operating_point->thresholds;
    card["operating_point_sha256"] = h.operating_point->sha256;
  }
  return card;
}

Json golden_json(const GoldenResult& g) {
  return {{"status", g.status},
          {"checked", g.checked},
          {"matched", g.matched},
          {"reference", g.reference.empty() ? Json() : Json(g.reference)}};
}

Json model_card(const ServedModel& m) {
  if (!m.ready())  // what a failed model still says of itself
    return {{"id", m.name},          {"object", "model"},  {"family", "task_heads"}, {"surfaces", Json::array()},
            {"ready", false},        {"status", m.status}, {"reason", m.reason},     {"golden", golden_json(m.golden)},
            {"plugins", Json::array()}};
  Json card = {{"id", m.name},
                         {"object", "model"},
                         {"owned_by", "semroute"},
                         {"family", "task_heads"},
                         {"repo", nullptr},
                         {"revision", nullptr},
                         {"model_sha256", m.identity.model_sha256},
                         {"licence", nullptr},
                         {"profile", profile_of(m)},
                         {"profiles", {{{"name", profile_of(m)}, {"numerics", m.dtype == "fp32" ? "exact" : "approximate"}}}},
                         {"engine", "semroute"},
                         {"accelerator", m.device},
                         {"accelerator_validated", true},
                         {"device", m.device},
                         {"dtype", m.dtype},
                         {"parameters", m.parameters},
                         {"ready", true},
                         {"status", "ready"},
                         {"reason", nullptr},
                         {"golden", golden_json(m.golden)},
                         {"plugins", Json::array()}};
  if (!m.identity.manifest_sha256.empty()) card["manifest_sha256"] = m.identity.manifest_sha256;
  if (m.heads) {
    card["surfaces"] = {"classify"};
    card["heads"] = Json::array();
    for (const HeadInfo* h : m.heads->heads()) card["heads"].push_back(head_card(*h));
    card["limits"] = {{"max_input_tokens", m.heads->max_input_tokens()}, {"max_inputs", kMaxContractInputs}};
  } else if (m.rerank) {
    const PairScorer& scorer = m.rerank->scorer();
    const auto exit_json = [](PairExit e) { return Json{{"layer", e.layer}, {"dimension", e.dimension}}; };
    Json exits = Json::array();
    for (const PairExit e : scorer.exits()) exits.push_back(exit_json(e));
    card["surfaces"] = {"rerank"};
    card["rerank"] = {{"exits", exits}, {"default", exit_json(scorer.default_exit())}};
    card["limits"] = {{"max_input_tokens", m.rerank->max_input_tokens()}, {"max_inputs", kMaxRerankDocuments}};
  } else if (m.decision) {
    card["family"] = m.decision->family();
    card["surfaces"] = {"decisions"};
    card["question_types"] = m.decision->question_types();
    card["presets"] = Json::array();
    for (const auto& [name, question] : m.decision->presets().items()) card["presets"].push_back(name);
    card["modalities"] = {"text"};
    card["limits"] = m.decision->limits();
  } else {
    const EmbeddingInfo& e = m.embedding->info();
    card["surfaces"] = {"embeddings"};
    card["embedding"] = {{"dimensions", e.dimensions}, {"layers", e.layers},     {"modalities", {"text"}},
                         {"normalized", e.normalized}, {"pooling", e.pooling}, {"input_types", e.input_types}};
    card["limits"] = {{"max_input_tokens", m.embedding->max_input_tokens()}, {"max_inputs", kMaxContractInputs}};
  }
  return card;
}

}  // namespace

Json model_list(const ServedModels& models, const ContractLimits& limits) {
  Json data = Json::array();
  for (const auto& [name, m] : models) data.push_back(model_card(*m));
  return {{"object", "list"},
          {"api_version", kContractVersion},
          {"data", data},
          {"limits", {{"max_bundle_tasks", limits.max_bundle_tasks}, {"max_request_bytes", limits.max_request_bytes}}}};
}

std::pair<int, Json> readiness(const ServedModels& models) {
  size_t ready = 0;
  std::string reason;
  Json each = Json::object();
  for (const auto& [name, m] : models) {
    ready += m->ready();
    if (!m->ready() && reason.empty()) reason = name + ": " + m->reason;
    each[name] = {{"status", m->status}, {"reason", m->ready() ? Json() : Json(m->reason)}};
  }
  const char* status = ready == models.size() ? "ready" : ready == 0 ? "failed" : "degraded";
  Json health = {{"api_version", kContractVersion},
                           {"status", status},
                           {"reason", reason.empty() ? Json() : Json(reason)},
                           {"model", models.size() == 1 ? Json(models.begin()->first) : Json()}};
  if (models.size() > 1) health["models"] = each;
  return {ready == models.size() ? 200 : 503, health};
}

Json liveness() { return {{"api_version", kContractVersion}, {"status", "alive"}}; }

}  // namespace semroute
