// Fuzz target: a chat request routed by a config on built-in signals
// (corpus/yaml/router_rules.yaml): it is routed (and its rewritten request
// serialized) or refused with a semroute::Error, never anything else.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "router/router.h"
#include "semroute/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto router = semroute::Router::load(SEMROUTE_FUZZ_CORPUS "/yaml/router_rules.yaml");
  try {
    const auto result = router->route_json(std::string_view(reinterpret_cast<const char*>(data), size),
                                           {{"role", "ops"}, {"tier", "free"}});
    (void)result.to_json().dump();
    (void)result.to_text();
  } catch (const semroute::Error&) {
  }
  return 0;
}
