// Writes PEFT LoRA adapters with random weights for a ModernBERT base (as
// save_pretrained lays them out, with a task head in modules_to_save), for
// benchmarks and tests of the multi-task engine at real sizes.
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
  std::vector<std::string> targets = {"Wqkv", "Wo", "Wi"};
  bool token_task = false;      // TOKEN_CLS instead of SEQ_CLS
  std::vector<std::string> labels = {"negative", "positive"};
  uint64_t seed = 1;
};

// `base` is a ModernBERT model directory (its config.json gives the sizes).
void write_random_adapter(const std::filesystem::path& base, const RandomAdapterSpec& spec,
                          const std::filesystem::path& dir);

}  // namespace semroute
