// What `semroute serve` answers, apart from HTTP: a request (method, path,
// body) in, a status and a JSON body out. Loads what the config names once;
// every call is thread-safe and never throws (errors are replies carrying
// the stable error codes). The HTTP layer (http_server.h) only moves bytes.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/metrics.h"
#include "server/reply.h"
#include "runtime/request_control.h"
#include "server/serve_config.h"

namespace semroute {

class AnswerChecks;

// What a request carries besides its method, path and body.
struct RequestInfo {
  // x-semroute-metadata: a JSON object of strings the router's conditions
  // see as meta.<key>, or empty.
  std::string_view metadata_json;
  // x-semroute-timeout-ms: a request whose work is not done this long after
  // its headers came is answered 504, what remains uncomputed (0: only the
  // config's limits.request_timeout_ms, if any; the shorter of the two wins).
  int64_t timeout_ms = 0;
  std::chrono::steady_clock::time_point arrived = std::chrono::steady_clock::now();
  // True once the client left or the server stops: the work ends at its next
  // step (empty: never).
  std::function<bool()> cancelled;
};

class Service {
 public:
  // Loads every model, engine, unified classifier and router (LoadError
  // naming the config's field on failure).
  explicit Service(ServeConfig config);
  ~Service();

  Reply handle(std::string_view method, std::string_view path, std::string_view body,
               const RequestInfo& info = {}) const noexcept;

  // Reads the router configs again: each that loads replaces its old
  // version, each that does not keeps serving the old one. Returns the
  // failures (one message each, naming the router).
  std::vector<std::string> reload_routers();

  const ServeConfig& config() const { return config_; }
  Metrics& metrics() const { return metrics_; }

 private:
  struct Loaded;
  Reply dispatch(std::string_view method, std::string_view path, std::string_view body,
                 std::string_view metadata_json, const RequestControl& control) const;
  Reply tokens(const nlohmann::json& request, const RequestControl& control) const;
  Reply similarity(const nlohmann::json& request, const RequestControl& control) const;
  Reply unified(const nlohmann::json& request, const RequestControl& control) const;
  Reply route(std::string_view path, std::string_view body, std::string_view metadata_json,
              const RequestControl& control) const;
  Reply store_answer(const nlohmann::json& request) const;
  Reply compress(const nlohmann::json& request, const RequestControl& control) const;
  Reply health() const;

  ServeConfig config_;
  std::unique_ptr<Loaded> loaded_;
  std::unique_ptr<AnswerChecks> checks_;
  mutable Metrics metrics_;
};

}  // namespace semroute
