// PEFT's merge_and_unload as a file operation: base checkpoint + adapter ->
// a plain model directory that loads like any fine-tuned checkpoint (and is
// the "traditional" path of the unified classifier when no separately
// fine-tuned model exists).
#pragma once

#include <filesystem>

namespace semroute {

// Writes `out`/model.safetensors (every base tensor, LoRA folded in, the
// adapter's saved modules replacing the base's), `out`/config.json (the
// adapter's task_config.json if present, else the base config), and
// `out`/lora_config.json (a copy of adapter_config.json, marking the merge).
// Tokenizer files beside the base are copied too.
void merge_adapter(const std::filesystem::path& base, const std::filesystem::path& adapter,
                   const std::filesystem::path& out);

}  // namespace semroute
