// What every endpoint answers: a status, a body and its headers; failures
// carry the stable error codes ({"error": {"code", "message"}}).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "semroute/error.h"

namespace semroute {

struct Reply {
  int status = 200;
  std::string body;  // JSON, Prometheus text for /metrics, or server-sent events
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
};

Reply json_reply(const nlohmann::json& body, int status = 200);
// A reply for a failure: {"error": {"code": "invalid_utf8", "message": …}}.
Reply error_reply(int status, const std::string& code, const std::string& message);
// 429 with Retry-After: a bounded queue or table is full.
Reply busy_reply(const std::string& code, const std::string& message);
// The HTTP status of an error code: 404 not found, 503 out of memory, 500 a
// broken model or a bug, else 400 (the request's fault).
int status_of(ErrorCode code);
// 32 random hex digits: the ids of routes and answer streams.
std::string random_id();

}  // namespace semroute
