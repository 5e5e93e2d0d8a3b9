// What `semroute serve` answers, apart from HTTP: a request (method, path,
// body) in, a status and a JSON body out. Loads what the config names once;
// every call is thread-safe and never throws (errors are replies carrying
// the stable error codes). The HTTP layer (http_server.h) only moves bytes.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/metrics.h"
#include "server/reply.h"
#include "server/serve_config.h"

namespace semroute {

class AnswerChecks;

class Service {
 public:
  // Loads every model, engine, unified classifier and router (LoadError
  // naming the config's field on failure).
  explicit Service(ServeConfig config);
  ~Service();

  // metadata_json: the x-semroute-metadata header (a JSON object of strings
  // the router's conditions see as meta.<key>), or empty.
  Reply handle(std::string_view method, std::string_view path, std::string_view body,
               std::string_view metadata_json = {}) const noexcept;

  // Reads the router configs again; each keeps serving its old version until
  // its new one loaded. Throws LoadError (the old routers stay) on failure.
  void reload_routers();

  const ServeConfig& config() const { return config_; }
  Metrics& metrics() const { return metrics_; }

 private:
  struct Loaded;
  Reply dispatch(std::string_view method, std::string_view path, std::string_view body,
                 std::string_view metadata_json) const;
  Reply classify(const nlohmann::json& request) const;
  Reply tokens(const nlohmann::json& request) const;
  Reply embeddings(const nlohmann::json& request) const;
  Reply similarity(const nlohmann::json& request) const;
  Reply unified(const nlohmann::json& request) const;
  Reply route(std::string_view path, std::string_view body, std::string_view metadata_json) const;
  Reply store_answer(const nlohmann::json& request) const;
  Reply compress(const nlohmann::json& request) const;
  Reply health() const;

  ServeConfig config_;
  std::unique_ptr<Loaded> loaded_;
  std::unique_ptr<AnswerChecks> checks_;
  mutable Metrics metrics_;
};

}  // namespace semroute
