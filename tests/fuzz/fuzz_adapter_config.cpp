// Fuzz target: an adapter_config.json file must load or be refused with a
// semroute::Error; a config that loads must answer PEFT's module rules
// (targets, ranks, scalings: finite) for typical module names, in bounded time.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "adapters/lora_config.h"
#include "fuzz_util.h"
#include "semroute/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto config = semroute::LoraConfig::load(semroute::fuzz::write_input(data, size, "-adapter_config.json"));
    for (const char* module : {"model.layers.0.attn.Wqkv", "model.layers.12.mlp.Wo", "classifier", "head.dense",
                               "model.layers.3.self_attn.q_proj", "bert.encoder.layer.1.attention.self.query"}) {
      if (config.targets(module) && !std::isfinite(config.scaling_of(module))) std::abort();
      if (config.rank_of(module) <= 0) std::abort();
    }
  } catch (const semroute::Error&) {
  }
  return 0;
}
