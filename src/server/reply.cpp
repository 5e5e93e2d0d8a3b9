#include "server/reply.h"

#include <random>

namespace semroute {

Reply json_reply(const nlohmann::json& body, int status) {
  Reply r;
  r.status = status;
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

Reply error_reply(int status, const std::string& code, const std::string& message) {
  return json_reply({{"error", {{"code", code}, {"message", message}}}}, status);
}

Reply busy_reply(const std::string& code, const std::string& message) {
  Reply r = error_reply(429, code, message);
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

int status_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::kNotFound: return 404;
    case ErrorCode::kOutOfMemory: return 503;
    case ErrorCode::kInvalidModel:
    case ErrorCode::kInternal: return 500;
    default: return 400;  // invalid_argument, invalid_utf8, too_long, unsupported: the request's
  }
}

std::string random_id() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  static const char* hex = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 2; ++i) {
    uint64_t v = rng();
    for (int k = 0; k < 16; ++k, v >>= 4) id += hex[v & 15];
  }
  return id;
}

}  // namespace semroute
