// Fuzz target: a YAML file read as the unified classifier's config, as an
// intent set and as a router config must parse or be refused with a semroute::Error (yaml-cpp's own
// exceptions included), whatever its nesting or aliases.
#include <cstddef>
#include <cstdint>

#include "classifiers/intent_index.h"
#include "classifiers/unified_config.h"
#include "router/router.h"
#include "fuzz_util.h"
#include "semroute/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& path = semroute::fuzz::write_input(data, size, ".yaml");
  try {
    semroute::UnifiedConfig::from_yaml(path);
  } catch (const semroute::Error&) {
  }
  try {
    semroute::IntentSet::from_yaml(path);
  } catch (const semroute::Error&) {
  }
  try {
    semroute::Router::load(path);
  } catch (const semroute::Error&) {
  }
  return 0;
}
