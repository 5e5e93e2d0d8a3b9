// The router: load a YAML config, route chat requests (src/router/).
#include <nlohmann/json.hpp>

#include <mutex>

#include "core/file_input.h"
#include "handles.h"
#include "router/router.h"

using namespace semroute::capi;
using semroute::InvalidInput;

struct semroute_router {
  std::shared_ptr<const semroute::Router> router;
};

struct semroute_route {
  semroute::RouteResult result;
  // The strings handed out, kept for the route's lifetime.
  std::string model, request_json, response_json;
  // The whole result with its trace: formatted on first request only.
  mutable std::once_flag json_once;
  mutable std::string json;
  std::vector<std::pair<std::string, std::string>> headers;
};

namespace {

// Metadata: a JSON object of strings (numbers and booleans are taken as
// their JSON text).
std::map<std::string, std::string> parse_metadata(const char* json, size_t len) {
  std::map<std::string, std::string> metadata;
  if (json == nullptr) return metadata;
  nlohmann::json parsed;
  try {
    parsed = semroute::parse_json(std::string_view(json, len), "metadata");
  } catch (const semroute::LoadError& e) {
    throw InvalidInput(e.what());
  }
  if (!parsed.is_object()) throw InvalidInput("metadata: expected a JSON object of strings");
  for (const auto& [key, value] : parsed.items()) {
    if (value.is_string()) {
      metadata[key] = value.get<std::string>();
    } else if (value.is_number() || value.is_boolean()) {
      metadata[key] = value.dump();
    } else {
      throw InvalidInput("metadata: '" + key + "' is not a string, number or boolean");
    }
  }
  return metadata;
}

}  // namespace

semroute_status* semroute_router_load(const char* config_path, semroute_router** out_router) {
  if (out_router != nullptr) *out_router = nullptr;
  return guarded_load([&] {
    require(config_path, "config_path");
    require(out_router, "out_router");
    auto handle = std::make_unique<semroute_router>();
    handle->router = semroute::Router::load(config_path);
    *out_router = handle.release();
  });
}

void semroute_router_free(semroute_router* router) { delete router; }

semroute_status* semroute_router_route(const semroute_router* router, const char* request_json, size_t request_len,
                                       const char* metadata_json, size_t metadata_len, semroute_route** out_route) {
  if (out_route != nullptr) *out_route = nullptr;
  return guarded([&] {
    require(router, "router");
    require(request_json, "request_json");
    require(out_route, "out_route");
    auto route = std::make_unique<semroute_route>();
    route->result = router->router->route_json(std::string_view(request_json, request_len),
                                               parse_metadata(metadata_json, metadata_len));
    const auto& r = route->result;
    const auto model = r.request.find("model");
    route->model = model != r.request.end() && model->is_string() ? model->get<std::string>() : "";
    route->request_json = r.request.dump();
    if (r.blocked || r.cache_hit) route->response_json = r.response.dump();
    route->headers.assign(r.headers.begin(), r.headers.end());
    *out_route = route.release();
  });
}

const char* semroute_route_decision(const semroute_route* route) {
  return route ? route->result.decision.c_str() : nullptr;
}
double semroute_route_confidence(const semroute_route* route) { return route ? route->result.confidence : 0; }
int semroute_route_blocked(const semroute_route* route) { return route && route->result.blocked ? 1 : 0; }
const char* semroute_route_model(const semroute_route* route) { return route ? route->model.c_str() : nullptr; }
const char* semroute_route_request_json(const semroute_route* route) {
  return route ? route->request_json.c_str() : nullptr;
}
int semroute_route_cache_hit(const semroute_route* route) { return route && route->result.cache_hit ? 1 : 0; }
const char* semroute_route_response_json(const semroute_route* route) {
  return route && (route->result.blocked || route->result.cache_hit) ? route->response_json.c_str() : nullptr;
}
size_t semroute_route_header_count(const semroute_route* route) { return route ? route->headers.size() : 0; }
const char* semroute_route_header_name(const semroute_route* route, size_t i) {
  return route && i < route->headers.size() ? route->headers[i].first.c_str() : nullptr;
}
const char* semroute_route_header_value(const semroute_route* route, size_t i) {
  return route && i < route->headers.size() ? route->headers[i].second.c_str() : nullptr;
}
const char* semroute_route_json(const semroute_route* route) {
  if (route == nullptr) return nullptr;
  std::call_once(route->json_once, [route] { route->json = route->result.to_json().dump(); });
  return route->json.c_str();
}
void semroute_route_free(semroute_route* route) { delete route; }

semroute_status* semroute_router_store_answer(const semroute_router* router, const semroute_route* route,
                                              const char* answer_json, size_t answer_len, int* out_stored) {
  if (out_stored != nullptr) *out_stored = 0;
  return guarded([&] {
    require(router, "router");
    require(route, "route");
    require(answer_json, "answer_json");
    const bool stored = router->router->store_answer(route->result, std::string_view(answer_json, answer_len));
    if (out_stored != nullptr) *out_stored = stored ? 1 : 0;
  });
}

extern "C" {

int semroute_route_check_answer(const semroute_route* route) { return route && route->result.check_answer ? 1 : 0; }

semroute_status* semroute_router_check_answer(const semroute_router* router, const semroute_route* route,
                                              const char* context, size_t context_len, int sse,
                                              semroute_halluc_stream** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    require(router, "router");
    require(route, "route");
    require(out, "out");
    auto handle = std::make_unique<semroute_halluc_stream>();
    handle->stream = router->router->check_answer(route->result, text_view(context, context_len, "context"), sse != 0);
    *out = handle.release();
  });
}

}  // extern "C"
