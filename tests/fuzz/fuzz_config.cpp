// Fuzz target: config.json parsing for every architecture must never crash;
// malformed or ill-typed input is a semroute::Error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/file_input.h"
#include "models/configs.h"
#include "semroute/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const semroute::ConfigReader reader(
        semroute::parse_json(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz"), "fuzz");
    semroute::ModernBertConfig::parse(reader);
    semroute::Qwen3Config::parse(reader);
    semroute::Gemma3TextConfig::parse(reader);
    semroute::BertConfig::parse(reader);
  } catch (const semroute::Error&) {
  }
  return 0;
}
