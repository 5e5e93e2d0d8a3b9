// adapter_config.json of a Hugging Face PEFT LoRA adapter, and PEFT's rules
// for which modules it targets and with which rank and scaling.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace semroute {

class Regex;

// A module-name pattern of rank_pattern / alpha_pattern with its value.
template <class T>
struct ModulePattern {
  std::shared_ptr<const Regex> regex;  // "(.*\.)?(key)", matched against the whole name
  T value;
};

struct LoraConfig {
  int64_t r = 8;
  double lora_alpha = 8;
  bool use_rslora = false;                    // scaling alpha / sqrt(r) instead of alpha / r
  std::vector<std::string> target_modules;    // names: a module matches by equality or as a ".name" suffix
  std::shared_ptr<const Regex> target_regex;  // or one regex the whole module name must match
  std::vector<int64_t> layers_to_transform;   // empty: every layer
  // "^.*\.<layers_pattern>\.(\d+)\." per layers_pattern entry; empty: PEFT's
  // generic "<name>.<index>." rule.
  std::vector<std::shared_ptr<const Regex>> layers_pattern;
  std::vector<ModulePattern<int64_t>> rank_pattern;  // in key order, as PEFT tries them
  std::vector<ModulePattern<double>> alpha_pattern;
  std::vector<std::string> modules_to_save;   // trained copies of whole modules (task heads)
  std::string task_type;                      // SEQ_CLS, TOKEN_CLS, FEATURE_EXTRACTION … or ""
  std::string base_model_name_or_path;

  // Reads and validates `path`: wrong types, ranks outside [1, kMaxRank],
  // non-finite or huge alphas and patterns that do not compile are LoadErrors
  // naming the key. Options PEFT has but this library does not implement
  // (DoRA, trained biases, …) are refused with Unsupported, never ignored.
  static LoraConfig load(const std::filesystem::path& path);
  static constexpr int64_t kMaxRank = 4096;
  static constexpr double kMaxAlpha = 1e6;

  // PEFT's check_target_module_exists for a module name relative to the task
  // model ("model.layers.2.attn.Wqkv").
  bool targets(const std::string& module) const;
  // Whether `module` lies inside a modules_to_save module (PEFT: suffix match).
  bool saves(const std::string& module) const;
  int64_t rank_of(const std::string& module) const;
  double scaling_of(const std::string& module) const;
};

}  // namespace semroute
