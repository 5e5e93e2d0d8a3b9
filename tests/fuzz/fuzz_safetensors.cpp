// Fuzz target: the safetensors header parser must never crash or read out of
// bounds, whatever the bytes; malformed input is a semroute::Error.
#include <cstddef>
#include <cstdint>

#include "core/safetensors.h"
#include "semroute/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto header = semroute::parse_safetensors(data, size, "fuzz");
    for (const auto& t : header.tensors) (void)t.numel();
  } catch (const semroute::Error&) {
  }
  return 0;
}
