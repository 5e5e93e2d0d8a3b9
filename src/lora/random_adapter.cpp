#include "lora/random_adapter.h"

#include <ATen/ATen.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/checkpoint.h"
#include "core/model_config.h"

namespace semroute {

void write_random_adapter(const std::filesystem::path& base, const RandomAdapterSpec& spec,
                          const std::filesystem::path& dir) {
  const ConfigReader config = read_model_config(base);
  const int64_t layers = config.get_int("num_hidden_layers", 0), hidden = config.get_int("hidden_size", 0);
  const int64_t inter = config.get_int("intermediate_size", 0);
  std::vector<int64_t> adapted = spec.layers;
  if (adapted.empty())
    for (int64_t i = 0; i < layers; ++i) adapted.push_back(i);
  at::manual_seed(spec.seed);
  // in/out features of each ModernBERT linear layer.
  const std::vector<std::tuple<std::string, int64_t, int64_t>> modules = {
      {"attn.Wqkv", hidden, 3 * hidden}, {"attn.Wo", hidden, hidden}, {"mlp.Wi", hidden, 2 * inter},
      {"mlp.Wo", inter, hidden}};
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (int64_t layer : adapted)
    for (const auto& [name, in, out] : modules) {
      const std::string leaf = name.substr(name.find('.') + 1);
      if (std::find(spec.targets.begin(), spec.targets.end(), leaf) == spec.targets.end()) continue;
      const std::string key = "base_model.model.model.layers." + std::to_string(layer) + "." + name;
      tensors.emplace_back(key + ".lora_A.weight", at::randn({spec.r, in}) / std::sqrt(static_cast<double>(in)));
      tensors.emplace_back(key + ".lora_B.weight", at::randn({out, spec.r}) * 0.02);
    }
  const auto labels = static_cast<int64_t>(spec.labels.size());
  const double scale = 1.0 / std::sqrt(static_cast<double>(hidden));
  tensors.emplace_back("base_model.model.head.dense.weight", at::randn({hidden, hidden}) * scale);
  tensors.emplace_back("base_model.model.head.norm.weight", at::ones({hidden}));
  tensors.emplace_back("base_model.model.classifier.weight", at::randn({labels, hidden}) * scale);
  tensors.emplace_back("base_model.model.classifier.bias", at::zeros({labels}));
  std::filesystem::create_directories(dir);
  save_safetensors(dir / "adapter_model.safetensors", tensors);

  nlohmann::json adapter = {{"peft_type", "LORA"}, {"r", spec.r}, {"lora_alpha", spec.alpha},
                            {"target_modules", spec.targets}, {"modules_to_save", {"head", "classifier"}},
                            {"task_type", spec.token_task ? "TOKEN_CLS" : "SEQ_CLS"},
                            {"base_model_name_or_path", base.string()}, {"bias", "none"}};
  if (!spec.layers.empty()) {
    adapter["layers_to_transform"] = spec.layers;
    adapter["layers_pattern"] = "layers";
  }
  std::ofstream(dir / "adapter_config.json") << adapter.dump(2);
  nlohmann::json id2label = nlohmann::json::object();
  for (size_t i = 0; i < spec.labels.size(); ++i) id2label[std::to_string(i)] = spec.labels[i];
  std::ofstream(dir / "labels.json") << nlohmann::json{{"id2label", id2label}, {"classifier_pooling", "mean"}}.dump(2);
}

}  // namespace semroute
