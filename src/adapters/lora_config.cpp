#include "adapters/lora_config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "semroute/error.h"

namespace semroute {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The value of the first pattern key that matches `module` as PEFT's
// get_pattern_key does: the key matches the name or a dotted suffix of it.
template <class T>
std::optional<T> pattern_value(const std::map<std::string, T>& patterns, const std::string& module) {
  for (const auto& [pattern, value] : patterns)
    if (std::regex_match(module, std::regex("(.*\\.)?(" + pattern + ")"))) return value;
  return std::nullopt;
}

// The layer index PEFT reads from a module name for layers_to_transform.
std::optional<int64_t> layer_index(const std::string& module, const std::vector<std::string>& patterns) {
  std::smatch m;
  if (patterns.empty()) {
    // ".*\.[^.]*\.(\d+)\." with re.match: the greedy prefix takes the last match.
    if (std::regex_search(module, m, std::regex("^.*\\.[^.]*\\.(\\d+)\\."))) return std::stoll(m[1].str());
    return std::nullopt;
  }
  for (const auto& p : patterns)
    if (std::regex_search(module, m, std::regex("^.*\\." + p + "\\.(\\d+)\\."))) return std::stoll(m[1].str());
  return std::nullopt;
}

[[noreturn]] void refuse(const std::filesystem::path& path, const std::string& what) {
  throw Unsupported(path.string() + ": " + what + " is not supported");
}

std::vector<std::string> string_list(const nlohmann::json& j, const std::filesystem::path& path, const char* key) {
  std::vector<std::string> out;
  if (j.is_null()) return out;
  if (j.is_string()) return {j.get<std::string>()};
  if (!j.is_array()) throw LoadError(path.string() + ": '" + key + "' must be a string or a list of strings");
  for (const auto& item : j) {
    if (!item.is_string()) throw LoadError(path.string() + ": '" + key + "' must list strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

LoraConfig LoraConfig::load(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw LoadError(path.string() + ": cannot open the adapter config", ErrorCode::kNotFound);
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw LoadError(path.string() + ": " + e.what());
  }
  if (!j.is_object()) throw LoadError(path.string() + ": not a JSON object");
  const auto value = [&](const char* key) { return j.contains(key) ? j.at(key) : nlohmann::json(); };
  const auto truthy = [&](const char* key) { return value(key).is_boolean() && value(key).get<bool>(); };
  const auto present = [&](const char* key) {
    const auto v = value(key);
    return !v.is_null() && !(v.is_object() && v.empty()) && !(v.is_array() && v.empty());
  };

  if (j.value("peft_type", "LORA") != "LORA") refuse(path, "peft_type '" + j.value("peft_type", "") + "'");
  if (truthy("use_dora")) refuse(path, "DoRA (use_dora)");
  if (j.value("bias", "none") != "none") refuse(path, "training biases (bias '" + j.value("bias", "") + "')");
  if (truthy("lora_bias")) refuse(path, "lora_bias");
  if (truthy("use_qalora")) refuse(path, "QALoRA");
  for (const char* key : {"target_parameters", "layer_replication", "trainable_token_indices"})
    if (present(key)) refuse(path, std::string("'") + key + "'");

  LoraConfig c;
  try {
    c.r = j.value("r", int64_t{8});
    c.lora_alpha = j.value("lora_alpha", 8.0);
    c.use_rslora = truthy("use_rslora");
    if (value("target_modules").is_string()) {
      c.target_regex = value("target_modules").get<std::string>();
    } else {
      c.target_modules = string_list(value("target_modules"), path, "target_modules");
    }
    const auto layers = value("layers_to_transform");
    if (layers.is_number_integer()) {
      c.layers_to_transform = {layers.get<int64_t>()};
    } else if (layers.is_array()) {
      c.layers_to_transform = layers.get<std::vector<int64_t>>();
    }
    c.layers_pattern = string_list(value("layers_pattern"), path, "layers_pattern");
    if (value("rank_pattern").is_object()) c.rank_pattern = value("rank_pattern").get<std::map<std::string, int64_t>>();
    if (value("alpha_pattern").is_object())
      c.alpha_pattern = value("alpha_pattern").get<std::map<std::string, double>>();
    c.modules_to_save = string_list(value("modules_to_save"), path, "modules_to_save");
    if (value("task_type").is_string()) c.task_type = value("task_type").get<std::string>();
    if (value("base_model_name_or_path").is_string())
      c.base_model_name_or_path = value("base_model_name_or_path").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw LoadError(path.string() + ": " + e.what());
  }
  if (c.r <= 0) throw LoadError(path.string() + ": 'r' must be positive");
  if (c.target_modules.empty() && !c.target_regex) throw LoadError(path.string() + ": no 'target_modules'");
  if (!c.layers_pattern.empty() && c.layers_to_transform.empty())
    throw LoadError(path.string() + ": 'layers_pattern' needs 'layers_to_transform'");
  try {
    if (c.target_regex) std::regex check(*c.target_regex);
  } catch (const std::regex_error&) {
    throw LoadError(path.string() + ": 'target_modules' is not a valid regex");
  }
  return c;
}

bool LoraConfig::targets(const std::string& module) const {
  if (saves(module)) return false;
  if (target_regex) return std::regex_match(module, std::regex(*target_regex));
  bool named = false;
  for (const auto& t : target_modules) named = named || module == t || ends_with(module, "." + t);
  if (!named) return false;
  if (layers_to_transform.empty()) return true;
  const auto index = layer_index(module, layers_pattern);
  return index && std::find(layers_to_transform.begin(), layers_to_transform.end(), *index) !=
                      layers_to_transform.end();
}

bool LoraConfig::saves(const std::string& module) const {
  for (const auto& m : modules_to_save) {
    // PEFT wraps modules whose name ends with the entry; their submodules
    // ("head.dense" inside "head") belong to the saved copy.
    if (ends_with(module, m)) return true;
    const auto at = module.find(m + ".");
    if (at != std::string::npos && (at == 0 || module[at - 1] == '.')) return true;
  }
  return false;
}

int64_t LoraConfig::rank_of(const std::string& module) const {
  return pattern_value(rank_pattern, module).value_or(r);
}

double LoraConfig::scaling_of(const std::string& module) const {
  const double alpha = pattern_value(alpha_pattern, module).value_or(lora_alpha);
  const auto rank = static_cast<double>(rank_of(module));
  return use_rslora ? alpha / std::sqrt(rank) : alpha / rank;
}

}  // namespace semroute
