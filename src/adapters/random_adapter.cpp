#include "adapters/random_adapter.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/checkpoint.h"
#include "core/model_config.h"
#include "semroute/error.h"

namespace semroute {
namespace {

// "encoder.layer.3.attention.self.query" -> {3, "layer"}; {-1, ""} without a
// numeric component.
std::pair<int64_t, std::string> layer_index(const std::string& module) {
  size_t begin = 0;
  std::string previous;
  while (begin < module.size()) {
    const size_t end = std::min(module.find('.', begin), module.size());
    const std::string part = module.substr(begin, end - begin);
    if (!part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return {std::stoll(part), previous};
    previous = part;
    begin = end + 1;
  }
  return {-1, ""};
}

bool contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

}  // namespace

void write_random_adapter(const std::filesystem::path& base, const RandomAdapterSpec& spec,
                          const std::filesystem::path& dir) {
  const ConfigReader config = read_model_config(base);
  const int64_t hidden = config.get_int("hidden_size", 0);
  const Checkpoint checkpoint = Checkpoint::open(base);
  at::manual_seed(static_cast<int64_t>(spec.seed));
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  std::string layers_pattern;  // "layers" (ModernBERT, Qwen3, Gemma3), "layer" (BERT)
  for (const auto& name : checkpoint.names()) {
    const TensorInfo* info = checkpoint.find(name);
    const std::string suffix = ".weight";
    if (info->shape.size() != 2 || name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string module = name.substr(0, name.size() - suffix.size());
    const auto [layer, pattern] = layer_index(module);
    if (layer < 0 || !contains(spec.targets, module.substr(module.rfind('.') + 1))) continue;
    if (!spec.layers.empty() && std::find(spec.layers.begin(), spec.layers.end(), layer) == spec.layers.end()) continue;
    layers_pattern = pattern;
    const int64_t out = info->shape[0], in = info->shape[1];
    // Named as in the task model, which holds a bare encoder as `model`
    // (PEFT's layer rule needs a component before the layers' name).
    const bool bare = module.compare(0, pattern.size() + 1, pattern + ".") == 0;
    const std::string key = "base_model.model." + std::string(bare ? "model." : "") + module;
    tensors.emplace_back(key + ".lora_A.weight", at::randn({spec.r, in}) / std::sqrt(static_cast<double>(in)));
    tensors.emplace_back(key + ".lora_B.weight", at::randn({out, spec.r}) * 0.02);
  }
  if (tensors.empty()) throw InvalidInput(base.string() + ": no linear layer matches the adapter's targets");

  const auto labels = static_cast<int64_t>(spec.labels.size());
  const double scale = 1.0 / std::sqrt(static_cast<double>(hidden));
  std::vector<std::string> saved = {spec.classifier};
  if (spec.modernbert_head) {
    tensors.emplace_back("base_model.model.head.dense.weight", at::randn({hidden, hidden}) * scale);
    tensors.emplace_back("base_model.model.head.norm.weight", at::ones({hidden}));
    saved.insert(saved.begin(), "head");
  }
  tensors.emplace_back("base_model.model." + spec.classifier + ".weight", at::randn({labels, hidden}) * scale);
  if (spec.classifier_bias) tensors.emplace_back("base_model.model." + spec.classifier + ".bias", at::zeros({labels}));
  std::filesystem::create_directories(dir);
  save_safetensors(dir / "adapter_model.safetensors", tensors);

  nlohmann::json adapter = {{"peft_type", "LORA"}, {"r", spec.r}, {"lora_alpha", spec.alpha},
                            {"target_modules", spec.targets}, {"modules_to_save", saved},
                            {"task_type", spec.token_task ? "TOKEN_CLS" : "SEQ_CLS"},
                            {"base_model_name_or_path", base.string()}, {"bias", "none"}};
  if (!spec.layers.empty()) {
    adapter["layers_to_transform"] = spec.layers;
    adapter["layers_pattern"] = layers_pattern;
  }
  std::ofstream(dir / "adapter_config.json") << adapter.dump(2);
  nlohmann::json id2label = nlohmann::json::object();
  for (size_t i = 0; i < spec.labels.size(); ++i) id2label[std::to_string(i)] = spec.labels[i];
  std::ofstream(dir / "labels.json") << nlohmann::json{{"id2label", id2label}, {"classifier_pooling", "mean"}}.dump(2);
}

}  // namespace semroute
