#include "adapters/merge_adapter.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/checkpoint.h"
#include "core/config_reader.h"
#include "adapters/lora_adapter.h"
#include "semroute/error.h"

namespace semroute {

void merge_adapter(const std::filesystem::path& base, const std::filesystem::path& adapter_dir,
                   const std::filesystem::path& out) {
  namespace fs = std::filesystem;
  const Checkpoint checkpoint = Checkpoint::open(base);
  const auto adapter = LoraAdapter::load(adapter_dir, checkpoint, at::TensorOptions().dtype(at::kFloat));
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& name : checkpoint.names()) tensors.emplace_back(name, adapter->merge(name, checkpoint.tensor(name)));
  if (adapter->has_saved_modules()) {
    const Checkpoint saved = Checkpoint::open_weights_in(adapter_dir, "adapter_model");
    const std::string prefix = "base_model.model.";
    for (const auto& key : saved.names()) {
      const std::string name = key.substr(prefix.size());
      if (name.find(".lora_") != std::string::npos) continue;
      const auto it = std::find_if(tensors.begin(), tensors.end(), [&](const auto& t) { return t.first == name; });
      if (it != tensors.end()) {
        it->second = saved.tensor(key);
      } else {
        tensors.emplace_back(name, saved.tensor(key));
      }
    }
  }
  fs::create_directories(out);
  save_safetensors(out / "model.safetensors", tensors);
  // The task's config: the adapter's task_config.json, or the base's with the
  // adapter's labels.json over it (labels, head class, pooling, temperature,
  // entity aggregation).
  const fs::path task_config = adapter_dir / "task_config.json", labels = adapter_dir / "labels.json";
  nlohmann::json config = ConfigReader::from_file(fs::exists(task_config) ? task_config : base / "config.json").json();
  if (!fs::exists(task_config) && fs::exists(labels)) config.update(ConfigReader::from_file(labels).json());
  std::ofstream(out / "config.json") << config.dump(2) << "\n";
  fs::copy_file(adapter_dir / "adapter_config.json", out / "lora_config.json", fs::copy_options::overwrite_existing);
  for (const char* file : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"})
    if (fs::exists(base / file)) fs::copy_file(base / file, out / file, fs::copy_options::overwrite_existing);
}

}  // namespace semroute
