// Writes PEFT LoRA adapters with random weights for any base model directory
// (as save_pretrained lays them out, with a task head in modules_to_save),
// for benchmarks and tests of the multi-task engine on every backend.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace semroute {

struct RandomAdapterSpec {
  int64_t r = 16;
  double alpha = 32;
  std::vector<int64_t> layers;  // adapted layers; empty = all
  // Leaf names of the linear layers to adapt, as PEFT's target_modules.
  std::vector<std::string> targets = {"Wqkv", "Wo", "Wi"};
  bool token_task = false;      // TOKEN_CLS instead of SEQ_CLS
  std::vector<std::string> labels = {"negative", "positive"};
  uint64_t seed = 1;
  // The saved head (modules_to_save): the classifier ("score" for Qwen3 /
  // Gemma3) and, for ModernBERT, its head.dense + head.norm.
  std::string classifier = "classifier";
  bool classifier_bias = true;
  bool modernbert_head = true;
};

// LoRA A/B for every 2-D weight of `base`'s checkpoint whose leaf name is a
// target, in an adapted layer (its first numeric name component).
void write_random_adapter(const std::filesystem::path& base, const RandomAdapterSpec& spec,
                          const std::filesystem::path& dir);

}  // namespace semroute
