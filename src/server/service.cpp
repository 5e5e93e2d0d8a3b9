#include "server/service.h"

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <set>

#include "classifiers/unified_classifier.h"
#include "classifiers/unified_config.h"
#include "core/config_reader.h"
#include "core/file_input.h"
#include "core/log.h"
#include "core/model_config.h"
#include "router/router.h"
#include "semroute/error.h"
#include "server/answer_checks.h"
#include "server/answer_json.h"
#include "contract/contract.h"
#include "tasks/batcher.h"
#include "tasks/embedder.h"
#include "tasks/sequence_classifier.h"
#include "tasks/task_head.h"
#include "tasks/token_classifier.h"

namespace semroute {
namespace {

constexpr size_t kMaxTextsPerRequest = 1024;
// Routes whose answer may still be stored: each keeps its decision's name and
// its prompt's embedding only (nothing the client sent), so the table is
// bounded in bytes by this count times one embedding.
constexpr size_t kMaxPendingRoutes = 4096;
// Texts per forward of one request: a long list is computed in pieces, each
// its own turn on the compute lane, with the request's deadline checked between.
constexpr size_t kTextsPerForward = 32;

ContractLimits contract_limits(const ServeLimits& l) { return {l.max_queue, l.max_bundle_tasks, l.max_body_bytes}; }

// "input": a string or a list of strings (the OpenAI form).
std::vector<std::string_view> texts_of(const nlohmann::json& request) {
  const auto it = request.find("input");
  if (it == request.end()) throw InvalidInput("\"input\": missing (a text or a list of texts)");
  std::vector<std::string_view> texts;
  if (it->is_string()) {
    texts.push_back(it->get_ref<const std::string&>());
  } else if (it->is_array()) {
    if (it->size() > kMaxTextsPerRequest)
      throw Error(ErrorCode::kTooLong, "\"input\": at most " + std::to_string(kMaxTextsPerRequest) + " texts");
    for (const auto& t : *it) {
      if (!t.is_string()) throw InvalidInput("\"input\": every item must be a string");
      texts.push_back(t.get_ref<const std::string&>());
    }
  } else {
    throw InvalidInput("\"input\": expected a string or a list of strings");
  }
  return texts;
}

std::string string_field(const nlohmann::json& request, const char* key) {
  const auto it = request.find(key);
  if (it == request.end() || !it->is_string()) throw InvalidInput(std::string("\"") + key + "\": expected a string");
  return it->get<std::string>();
}

// The query parameter `key` of a path ("/v1/route?router=main"), or "".
std::string query_value(std::string_view path, std::string_view key) {
  const size_t q = path.find('?');
  if (q == std::string_view::npos) return "";
  std::string_view query = path.substr(q + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) == key && eq != std::string_view::npos) return std::string(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return "";
}

}  // namespace

// answer(piece) for each piece of at most kTextsPerForward texts, checking
// the request's control before each: the answers in order.
template <class Answer, class Forward>
std::vector<Answer> in_pieces(const std::vector<std::string_view>& texts, const RequestControl& control,
                              Forward forward) {
  std::vector<Answer> out;
  out.reserve(texts.size());
  for (size_t begin = 0; begin < texts.size(); begin += kTextsPerForward) {
    control.check();
    const std::vector<std::string_view> piece(texts.begin() + static_cast<std::ptrdiff_t>(begin),
                                              texts.begin() + static_cast<std::ptrdiff_t>(
                                                                  std::min(texts.size(), begin + kTextsPerForward)));
    for (auto& answer : forward(piece)) out.push_back(std::move(answer));
  }
  return out;
}

// In-flight counters of what the config names besides models (unified
// classifiers, routers, compressors), for their queue slots.
class Queues {
 public:
  void add(const std::string& name) { counters_.try_emplace(name, 0); }
  std::atomic<int64_t>& operator[](const std::string& name) const { return counters_.at(name); }

 private:
  mutable std::map<std::string, std::atomic<int64_t>> counters_;
};

struct Service::Loaded {
  ServedModels models;
  std::unique_ptr<ResultCache> results;  // the contract's item answers
  std::map<std::string, std::shared_ptr<const UnifiedClassifier>> unified;
  Queues unified_queues, router_queues, compressor_queues;
  mutable std::mutex routers_mutex;
  std::map<std::string, std::shared_ptr<const Router>> routers;
  mutable std::mutex pending_mutex;
  struct PendingRoute {
    std::shared_ptr<const Router> router;  // the version that routed it (a reload may have replaced it)
    RouteResult cache_key;                 // its cache partition and embedding, nothing else
  };
  mutable std::map<std::string, PendingRoute> pending;
  mutable std::deque<std::string> pending_order;

  // The router a request names and its name ("" picks the only one, or "default").
  std::pair<std::string, std::shared_ptr<const Router>> router(const std::string& name) const {
    const std::lock_guard<std::mutex> lock(routers_mutex);
    if (name.empty() && routers.size() == 1) return *routers.begin();
    const auto it = routers.find(name.empty() ? "default" : name);
    if (it == routers.end()) throw Error(ErrorCode::kNotFound, "no router '" + name + "' (?router=NAME)");
    return *it;
  }
};

namespace {

Reply queue_full(const std::string& model) {
  return busy_reply("queue_full", "model '" + model + "' has a full queue; retry shortly");
}

}  // namespace

namespace {

std::shared_ptr<const Router> load_router(const std::string& name, const std::filesystem::path& path) {
  try {
    return Router::load(path);
  } catch (const Error& e) {
    throw LoadError("routers." + name + ": " + e.what(), e.code());
  }
}

}  // namespace

Service::Service(ServeConfig config) : config_(std::move(config)), loaded_(std::make_unique<Loaded>()) {
  for (const auto& [name, c] : config_.models) loaded_->models.emplace(name, load_served_model(name, c));
  loaded_->results = std::make_unique<ResultCache>(config_.limits.result_cache_entries);
  checks_ = std::make_unique<AnswerChecks>(config_.detectors, config_.limits);
  for (const auto& [name, path] : config_.unified) {
    try {
      loaded_->unified.emplace(name, UnifiedClassifier::load(UnifiedConfig::from_yaml(path)));
    } catch (const Error& e) {
      throw LoadError("unified." + name + ": " + e.what(), e.code());
    }
    loaded_->unified_queues.add(name);
  }
  for (const auto& [name, path] : config_.routers) {
    loaded_->routers.emplace(name, load_router(name, path));
    loaded_->router_queues.add(name);
  }
  for (const auto& [name, compressor] : config_.compressors) loaded_->compressor_queues.add(name);
}

Service::~Service() = default;

std::vector<std::string> Service::reload_routers() {
  std::vector<std::string> failures;
  for (const auto& [name, path] : config_.routers) {
    std::shared_ptr<const Router> fresh;
    try {
      fresh = load_router(name, path);
    } catch (const Error& e) {
      failures.push_back(e.what());
      continue;
    }
    const std::lock_guard<std::mutex> lock(loaded_->routers_mutex);
    loaded_->routers[name] = std::move(fresh);  // requests holding the old one finish on it
  }
  return failures;
}

namespace {

// The endpoint a request is counted under in /metrics: one of a fixed set,
// whatever the path (a label made of the raw path would let any client write
// into the scraped text and grow it without bound).
std::string endpoint_label(std::string_view route) {
  static const std::set<std::string_view> kEndpoints = {
      "/health",        "/health/live",  "/openapi.yaml",  "/ready",          "/metrics",      "/v1/models",       "/v1/classify",
      "/v1/embeddings", "/v1/rerank",    "/v1/bundle",      "/v1/decisions", "/v1/systemone",    "/v1/tokens",
      "/v1/similarity", "/v1/unified",   "/v1/route",       "/v1/route/answer", "/v1/compress",  "/v1/check-answer",
      "/v1/check-answer/streams"};
  if (kEndpoints.count(route) != 0) return std::string(route);
  if (route.rfind("/v1/check-answer/streams/", 0) == 0) return "/v1/check-answer/streams/{id}";
  return "other";
}

}  // namespace

Reply Service::handle(std::string_view method, std::string_view path, std::string_view body,
                      const RequestInfo& info) const noexcept {
  const auto start = std::chrono::steady_clock::now();
  int64_t timeout_ms = config_.limits.request_timeout_ms;
  if (info.timeout_ms > 0) timeout_ms = timeout_ms > 0 ? std::min(timeout_ms, info.timeout_ms) : info.timeout_ms;
  const auto deadline = timeout_ms > 0 ? info.arrived + std::chrono::milliseconds(timeout_ms)
                                       : RequestControl::Clock::time_point::max();
  const RequestControl control(deadline, info.cancelled);
  Reply reply;
  try {
    reply = dispatch(method, path, body, info.metadata_json, control);
  } catch (const DeadlinePassed& e) {
    reply = error_reply(504, "deadline_exceeded", e.what());
  } catch (const RequestCancelled& e) {
    reply = error_reply(503, "cancelled", e.what());
  } catch (const Error& e) {
    reply = error_reply(status_of(e.code()), error_code_name(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    reply = error_reply(503, "out_of_memory", "out of memory");
  } catch (const std::exception& e) {
    reply = error_reply(500, "internal", e.what());
  }
  metrics_.record(endpoint_label(path.substr(0, path.find('?'))), reply.status,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return reply;
}

Reply Service::dispatch(std::string_view method, std::string_view path, std::string_view body,
                        std::string_view metadata_json, const RequestControl& control) const {
  const std::string_view route = path.substr(0, path.find('?'));
  if (auto answer = contract_reply(method, route, body, loaded_->models, contract_limits(config_.limits), control,
                                   loaded_->results.get())) {
    if (!answer->item_errors.empty()) metrics_.record_item_errors(endpoint_label(route), answer->item_errors);
    Reply reply;
    reply.status = answer->status;
    reply.body = std::move(answer->body);
    reply.content_type = std::move(answer->content_type);
    reply.headers = std::move(answer->headers);
    return reply;
  }
  if (method == "GET") {
    if (route == "/ready") return health();
    if (route == "/metrics") {
      for (const auto& [name, m] : loaded_->models) metrics_.set_in_flight(name, m->in_flight.load());
      metrics_.set_result_cache(loaded_->results->stats());
      Reply r;
      r.body = metrics_.prometheus_text();
      r.content_type = "text/plain; version=0.0.4";
      return r;
    }
    return error_reply(404, "not_found", "no endpoint GET " + std::string(route));
  }
  constexpr std::string_view kStreams = "/v1/check-answer/streams/";
  const bool stream_path = route.substr(0, kStreams.size()) == kStreams;
  if (method == "DELETE" && stream_path) return checks_->finish(std::string(route.substr(kStreams.size())), control);
  if (method != "POST") return error_reply(405, "method_not_allowed", "GET or POST (DELETE ends an answer stream)");
  if (stream_path) return checks_->feed(std::string(route.substr(kStreams.size())), body, control);
  if (route == "/v1/route") return this->route(path, body, metadata_json, control);
  const nlohmann::json request = parse_request_body(body);
  if (route == "/v1/tokens") return tokens(request, control);
  if (route == "/v1/similarity") return similarity(request, control);
  if (route == "/v1/unified") return unified(request, control);
  if (route == "/v1/route/answer") return store_answer(request);
  if (route == "/v1/compress") return compress(request, control);
  if (route == "/v1/check-answer") return checks_->check(request, control);
  if (route == "/v1/check-answer/streams") return checks_->open(request);
  return error_reply(404, "not_found", "no endpoint POST " + std::string(route));
}

namespace {

const ServedModel& model_named(const ServedModels& models, const nlohmann::json& request) {
  const std::string name = string_field(request, "model");
  const auto it = models.find(name);
  if (it == models.end()) throw Error(ErrorCode::kNotFound, "no model '" + name + "'");
  return *it->second;
}

}  // namespace

// Token by token, with byte offsets ({"model", "labels", "results"}): the
// contract's classify answers spans in code points; this keeps the bytes.
Reply Service::tokens(const nlohmann::json& request, const RequestControl& control) const {
  const ServedModel& m = model_named(loaded_->models, request);
  if (!m.heads || !m.heads->token()) throw InvalidInput("model '" + m.name + "' is not a token classifier");
  const TokenClassifier& token = *m.heads->token();
  const auto texts = texts_of(request);
  const QueueSlot slot(m.in_flight, config_.limits.max_queue);
  if (slot.full()) return queue_full(m.name);
  const auto results = in_pieces<TokenClassification>(texts, control, [&](const std::vector<std::string_view>& piece) {
    return control.on_lane([&] { return token.classify(piece); });
  });
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < results.size(); ++i) out.push_back(token_result_json(texts[i], results[i]));
  return json_reply({{"model", m.name}, {"labels", token.labels()}, {"results", out}});
}

Reply Service::similarity(const nlohmann::json& request, const RequestControl& control) const {
  const ServedModel& m = model_named(loaded_->models, request);
  if (!m.embedding) throw InvalidInput("model '" + m.name + "' is not an embedding model");
  const std::string a = string_field(request, "a"), b = string_field(request, "b");
  const QueueSlot slot(m.in_flight, config_.limits.max_queue);
  if (slot.full()) return queue_full(m.name);
  const std::vector<float> rows = control.on_lane([&] { return m.embedding->embedder()->embed_rows({a, b}); });
  const size_t dim = rows.size() / 2;
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < dim; ++i) {
    dot += double(rows[i]) * rows[dim + i];
    na += double(rows[i]) * rows[i];
    nb += double(rows[dim + i]) * rows[dim + i];
  }
  const double cosine = na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0.0;
  return json_reply({{"model", m.name}, {"similarity", cosine}});
}

Reply Service::unified(const nlohmann::json& request, const RequestControl& control) const {
  const std::string name = string_field(request, "model");
  const auto it = loaded_->unified.find(name);
  if (it == loaded_->unified.end()) throw Error(ErrorCode::kNotFound, "no unified classifier '" + name + "'");
  UnifiedRequest options;
  if (const auto t = request.find("tasks"); t != request.end()) {
    if (!t->is_array()) throw InvalidInput("\"tasks\": expected a list of task names");
    for (const auto& task : *t) {
      if (!task.is_string()) throw InvalidInput("\"tasks\": expected a list of task names");
      options.tasks.push_back(task.get<std::string>());
    }
  }
  if (const auto p = request.find("prefer_accuracy"); p != request.end()) {
    if (!p->is_boolean()) throw InvalidInput("\"prefer_accuracy\": true or false");
    options.prefer_accuracy = p->get<bool>();
  }
  const auto texts = texts_of(request);
  const QueueSlot slot(loaded_->unified_queues[name], config_.limits.max_queue);
  if (slot.full()) return queue_full(name);
  const auto results = in_pieces<UnifiedResult>(texts, control, [&](const std::vector<std::string_view>& piece) {
    return control.on_lane([&] { return it->second->classify(piece, options); });
  });
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    nlohmann::json answers = nlohmann::json::array();
    for (const auto& a : results[i].answers) answers.push_back(task_answer_json(a, it->second->labels(a.task)));
    out.push_back({{"text", texts[i]}, {"tasks", answers}});
  }
  return json_reply({{"model", name}, {"results", out}});
}

// An OpenAI chat request in (the body as the gateway received it); the
// decision, the rewritten request and the headers out. A route whose answer
// may be cached carries a "route_id" for /v1/route/answer.
Reply Service::route(std::string_view path, std::string_view body, std::string_view metadata_json,
                     const RequestControl& control) const {
  const auto named = loaded_->router(query_value(path, "router"));
  const std::string& name = named.first;
  const std::shared_ptr<const Router>& router = named.second;  // a plain name: lambdas below capture it
  std::map<std::string, std::string> metadata;
  if (!metadata_json.empty()) {
    const nlohmann::json meta = parse_request_body(metadata_json);
    for (const auto& [key, value] : meta.items()) {
      if (!value.is_string()) throw InvalidInput("x-semroute-metadata: every value must be a string");
      metadata.emplace(key, value.get<std::string>());
    }
  }
  const QueueSlot slot(loaded_->router_queues[name], config_.limits.max_queue);
  if (slot.full()) return busy_reply("queue_full", "router '" + name + "' has a full queue; retry shortly");
  RouteOptions options;
  options.checkpoint = [&] { control.check(); };
  RouteResult result;
  try {
    result = control.on_lane([&] { return router->route_json(body, metadata, options); });
  } catch (const Error& e) {  // the config loaded at start: a parse failure now is the request's
    if (e.code() != ErrorCode::kInvalidModel) throw;
    throw InvalidInput(e.what());
  }
  nlohmann::json out = result.to_json();
  if (!result.cache_partition.empty() && result.cache_embedding) {
    const std::string id = random_id();
    out["route_id"] = id;
    RouteResult cache_key;
    cache_key.cache_partition = result.cache_partition;
    cache_key.cache_embedding = result.cache_embedding;
    const std::lock_guard<std::mutex> lock(loaded_->pending_mutex);
    loaded_->pending.emplace(id, Loaded::PendingRoute{router, std::move(cache_key)});
    loaded_->pending_order.push_back(id);
    while (loaded_->pending_order.size() > kMaxPendingRoutes) {
      loaded_->pending.erase(loaded_->pending_order.front());
      loaded_->pending_order.pop_front();
    }
  }
  if (!result.cache_partition.empty() || result.cache_hit) metrics_.record_cache(result.cache_hit);
  Reply reply = json_reply(out);
  for (const auto& [header, value] : result.headers) reply.headers.emplace_back(header, value);
  return reply;
}

// {"route_id", "response": a chat.completion} -> {"stored": true | false}
Reply Service::store_answer(const nlohmann::json& request) const {
  const std::string id = string_field(request, "route_id");
  const auto response = request.find("response");
  if (response == request.end() || !response->is_object()) throw InvalidInput("\"response\": expected a chat.completion object");
  Loaded::PendingRoute route;
  {
    const std::lock_guard<std::mutex> lock(loaded_->pending_mutex);
    const auto it = loaded_->pending.find(id);
    if (it == loaded_->pending.end()) throw Error(ErrorCode::kNotFound, "no pending route '" + id + "' (stored, or too old)");
    route = it->second;
    loaded_->pending.erase(it);  // its id stays in pending_order until it ages out: erasing there is harmless
  }
  return json_reply({{"stored", route.router->store_answer(route.cache_key, response->dump())}});
}

// {"model": a compressor's name, "input": text} -> `semroute compress --json`'s keys.
Reply Service::compress(const nlohmann::json& request, const RequestControl& control) const {
  const std::string name = string_field(request, "model");
  const auto it = config_.compressors.find(name);
  if (it == config_.compressors.end()) throw Error(ErrorCode::kNotFound, "no compressor '" + name + "'");
  const std::string text = string_field(request, "input");
  const QueueSlot slot(loaded_->compressor_queues[name], config_.limits.max_queue);
  if (slot.full()) return busy_reply("queue_full", "compressor '" + name + "' has a full queue; retry shortly");
  control.check();  // (no model: it runs here, bounded by the body's size)
  nlohmann::json out = compressed_json(it->second->compress(text), text.size());
  out["model"] = name;
  return json_reply(out);
}

Reply Service::health() const {
  nlohmann::json models = nlohmann::json::array(), unified = nlohmann::json::array(), routers = nlohmann::json::array(),
                 compressors = nlohmann::json::array();
  for (const auto& [name, c] : config_.compressors) compressors.push_back(name);
  for (const auto& [name, m] : loaded_->models) models.push_back(name);
  for (const auto& [name, u] : loaded_->unified) unified.push_back(name);
  {
    const std::lock_guard<std::mutex> lock(loaded_->routers_mutex);
    for (const auto& [name, r] : loaded_->routers) routers.push_back(name);
  }
  return json_reply({{"ready", true}, {"models", models}, {"unified", unified}, {"routers", routers},
                     {"compressors", compressors}, {"detectors", checks_->names()}});
}

}  // namespace semroute
