#include "adapters/lora_config.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/config_reader.h"
#include "core/file_input.h"
#include "core/model_config.h"
#include "core/regex.h"
#include "semroute/error.h"

namespace semroute {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The value of the first pattern that matches `module` as PEFT's
// get_pattern_key does: the key matches the name or a dotted suffix of it.
template <class T>
std::optional<T> pattern_value(const std::vector<ModulePattern<T>>& patterns, const std::string& module) {
  for (const auto& p : patterns)
    if (p.regex->matches_whole(module)) return p.value;
  return std::nullopt;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The layer index PEFT reads from a module name for layers_to_transform.
std::optional<int64_t> layer_index(const std::string& module, const std::vector<std::shared_ptr<const Regex>>& patterns) {
  if (patterns.empty()) {
    // PEFT's ".*\.[^.]*\.(\d+)\." with re.match: the greedy prefix takes the
    // last dotted number that has a dot before its predecessor and after it.
    std::vector<std::string> parts;
    for (size_t begin = 0;;) {
      const size_t dot = module.find('.', begin);
      parts.push_back(module.substr(begin, dot - begin));
      if (dot == std::string::npos) break;
      begin = dot + 1;
    }
    for (size_t i = parts.size() - 1; i-- > 2;)
      if (all_digits(parts[i]) && parts[i].size() < 18) return std::stoll(parts[i]);
    return std::nullopt;
  }
  // Group 1 as PEFT reads it (a layers_pattern with groups of its own shifts it).
  for (const auto& p : patterns)
    if (const auto index = p->find_group(module, 1); index && all_digits(*index) && index->size() < 18)
      return std::stoll(*index);
  return std::nullopt;
}

[[noreturn]] void refuse(const std::filesystem::path& path, const std::string& what) {
  throw Unsupported(path.string() + ": " + what + " is not supported");
}

// A string or a list of strings ("" / null: none).
std::vector<std::string> string_list(const ConfigReader& r, const char* key) {
  if (!r.has(key)) return {};
  if (r.json().at(key).is_string()) return {r.get_string(key, "")};
  return r.get_strings(key);
}

template <class T>
std::vector<ModulePattern<T>> module_patterns(const ConfigReader& r, const char* key, T low, T high) {
  std::vector<ModulePattern<T>> out;
  const ConfigReader patterns = r.get_object(key);
  for (const auto& [pattern, _] : patterns.json().items()) {
    const T value = std::is_integral_v<T> ? static_cast<T>(patterns.get_int(pattern, 0)) : patterns.get_double(pattern, 0);
    if (!(value >= low && value <= high))
      throw LoadError(r.source() + ": " + key + " value for '" + pattern + "' must be in [" + std::to_string(low) + ", " +
                      std::to_string(high) + "]");
    out.push_back({std::make_shared<const Regex>("(.*\\.)?(" + pattern + ")", Regex::Dialect::kPcre,
                                                 r.source() + ": " + key + " pattern"),
                   value});
  }
  return out;
}

}  // namespace

LoraConfig LoraConfig::load(const std::filesystem::path& path) {
  const ConfigReader r(read_json_file(path), path.string());
  if (r.get_string("peft_type", "LORA") != "LORA") refuse(path, "peft_type '" + r.get_string("peft_type", "") + "'");
  if (r.get_bool("use_dora", false)) refuse(path, "DoRA (use_dora)");
  if (r.get_string("bias", "none") != "none") refuse(path, "training biases (bias '" + r.get_string("bias", "") + "')");
  if (r.get_bool("lora_bias", false)) refuse(path, "lora_bias");
  if (r.get_bool("use_qalora", false)) refuse(path, "QALoRA");
  for (const char* key : {"target_parameters", "layer_replication", "trainable_token_indices"}) {
    const auto it = r.json().find(key);
    if (it != r.json().end() && !it->is_null() && !it->empty()) refuse(path, std::string("'") + key + "'");
  }

  LoraConfig c;
  c.r = r.get_int("r", c.r);
  if (c.r <= 0 || c.r > kMaxRank)
    throw LoadError(path.string() + ": 'r' must be in [1, " + std::to_string(kMaxRank) + "], got " + std::to_string(c.r));
  c.lora_alpha = r.get_double("lora_alpha", c.lora_alpha);
  if (!(std::fabs(c.lora_alpha) <= kMaxAlpha))
    throw LoadError(path.string() + ": 'lora_alpha' must be finite and at most " + std::to_string(kMaxAlpha) + " in size");
  c.use_rslora = r.get_bool("use_rslora", false);
  if (r.has("target_modules") && r.json().at("target_modules").is_string()) {
    c.target_regex = std::make_shared<const Regex>(r.get_string("target_modules", ""), Regex::Dialect::kPcre,
                                                   path.string() + ": 'target_modules' regex");
  } else {
    c.target_modules = string_list(r, "target_modules");
  }
  if (r.has("layers_to_transform")) {
    const auto& layers = r.json().at("layers_to_transform");
    for (const auto& layer : layers.is_array() ? layers : nlohmann::json::array({layers})) {
      if (!layer.is_number_unsigned() || layer.get<uint64_t>() >= static_cast<uint64_t>(ModelConfig::kMaxLayers))
        throw LoadError(path.string() + ": 'layers_to_transform' must be layer indices (an integer or a list)");
      c.layers_to_transform.push_back(layer.get<int64_t>());
    }
  }
  for (const auto& p : string_list(r, "layers_pattern"))
    c.layers_pattern.push_back(std::make_shared<const Regex>("^.*\\." + p + "\\.(\\d{1,17})\\.", Regex::Dialect::kPcre,
                                                             path.string() + ": 'layers_pattern'"));
  c.rank_pattern = module_patterns<int64_t>(r, "rank_pattern", 1, kMaxRank);
  c.alpha_pattern = module_patterns<double>(r, "alpha_pattern", -kMaxAlpha, kMaxAlpha);
  c.modules_to_save = string_list(r, "modules_to_save");
  c.task_type = r.get_string("task_type", "");
  c.base_model_name_or_path = r.get_string("base_model_name_or_path", "");
  if (c.target_modules.empty() && !c.target_regex) throw LoadError(path.string() + ": no 'target_modules'");
  if (!c.layers_pattern.empty() && c.layers_to_transform.empty())
    throw LoadError(path.string() + ": 'layers_pattern' needs 'layers_to_transform'");
  return c;
}

bool LoraConfig::targets(const std::string& module) const {
  if (saves(module)) return false;
  if (target_regex) return target_regex->matches_whole(module);
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
