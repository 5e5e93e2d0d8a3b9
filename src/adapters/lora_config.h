// adapter_config.json of a Hugging Face PEFT LoRA adapter, and PEFT's rules
// for which modules it targets and with which rank and scaling.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace semroute {

struct LoraConfig {
  int64_t r = 8;
  double lora_alpha = 8;
  bool use_rslora = false;                    // scaling alpha / sqrt(r) instead of alpha / r
  std::vector<std::string> target_modules;    // names: a module matches by equality or as a ".name" suffix
  std::optional<std::string> target_regex;    // or one regex the whole module name must match
  std::vector<int64_t> layers_to_transform;   // empty: every layer
  std::vector<std::string> layers_pattern;    // empty: PEFT's generic "<name>.<index>." rule
  std::map<std::string, int64_t> rank_pattern;   // module pattern -> r
  std::map<std::string, double> alpha_pattern;   // module pattern -> alpha
  std::vector<std::string> modules_to_save;   // trained copies of whole modules (task heads)
  std::string task_type;                      // SEQ_CLS, TOKEN_CLS, FEATURE_EXTRACTION … or ""
  std::string base_model_name_or_path;

  // Reads and validates `path`. Options PEFT has but this library does not
  // implement (DoRA, trained biases, …) are refused with Unsupported, never
  // ignored.
  static LoraConfig load(const std::filesystem::path& path);

  // PEFT's check_target_module_exists for a module name relative to the task
  // model ("model.layers.2.attn.Wqkv").
  bool targets(const std::string& module) const;
  // Whether `module` lies inside a modules_to_save module (PEFT: suffix match).
  bool saves(const std::string& module) const;
  int64_t rank_of(const std::string& module) const;
  double scaling_of(const std::string& module) const;
};

}  // namespace semroute
