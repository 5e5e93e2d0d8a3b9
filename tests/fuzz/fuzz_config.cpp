// Fuzz target: config.json parsing for every architecture must never crash;
// malformed or ill-typed input is a semroute::Error.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "models/configs.h"
#include "semroute/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto json = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  try {
    const semroute::ConfigReader reader(json, "fuzz");
    semroute::ModernBertConfig::parse(reader);
    semroute::Qwen3Config::parse(reader);
    semroute::Gemma3TextConfig::parse(reader);
    semroute::BertConfig::parse(reader);
  } catch (const semroute::Error&) {
  }
  return 0;
}
