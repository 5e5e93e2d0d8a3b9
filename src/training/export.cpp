#include "training/export.h"

#include <ATen/ATen.h>

#include <fstream>

#include "core/checkpoint.h"
#include "core/model_config.h"
#include "semroute/error.h"

namespace semroute::training {
namespace {

namespace fs = std::filesystem;

const char* architecture(Objective kind) {
  switch (kind) {
    case Objective::kSequence: return "ModernBertForSequenceClassification";
    case Objective::kToken: return "ModernBertForTokenClassification";
    case Objective::kMaskedLm: return "ModernBertForMaskedLM";
  }
  return "";
}

const char* dtype_name(c10::ScalarType t) {
  if (t == at::kHalf) return "float16";
  if (t == at::kBFloat16) return "bfloat16";
  return "float32";
}

void write_json(const fs::path& path, const nlohmann::json& j) {
  std::ofstream out(path);
  out << j.dump(2) << "\n";
  if (!out) throw InvalidInput("cannot write " + path.string());
}

void copy_tokenizer(const fs::path& tokenizer_json, const fs::path& dir) {
  if (!tokenizer_json.empty() && fs::absolute(tokenizer_json) != fs::absolute(dir / "tokenizer.json"))
    fs::copy_file(tokenizer_json, dir / "tokenizer.json", fs::copy_options::overwrite_existing);
}

nlohmann::json labels_json(const TrainableModernBert& model) { return label_maps(model.parsed().base.id2label); }

bool in_head(const std::string& name) { return name.rfind("model.", 0) != 0; }

}  // namespace

void save_model(const TrainableModernBert& model, const fs::path& dir, const fs::path& tokenizer_json,
                c10::ScalarType storage) {
  fs::create_directories(dir);
  nlohmann::json config = model.config();
  config["architectures"] = {architecture(model.kind())};
  config["torch_dtype"] = dtype_name(storage);
  if (model.kind() == Objective::kMaskedLm) {
    config.erase("id2label");
    config.erase("label2id");
  } else {
    config.update(labels_json(model));
  }
  write_json(dir / "config.json", config);
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& [name, tensor] : model.weights()) {
    at::Tensor weight = tensor.detach();
    const auto lora = model.lora().find(name.substr(0, name.size() - std::string(".weight").size()));
    if (lora != model.lora().end()) {  // a full model carries the adapter folded in
      const double scale = model.lora_spec().alpha / static_cast<double>(model.lora_spec().r);
      weight = weight + at::matmul(lora->second.second, lora->second.first).detach() * scale;
    }
    tensors.emplace_back(name, weight.to(at::kCPU, storage));
  }
  save_safetensors(dir / "model.safetensors", tensors);
  copy_tokenizer(tokenizer_json, dir);
}

void save_adapter(const TrainableModernBert& model, const fs::path& dir, const std::string& base,
                  const fs::path& tokenizer_json) {
  if (model.lora().empty()) throw InvalidInput("the model has no LoRA layers to save as an adapter");
  if (model.kind() == Objective::kMaskedLm) throw Unsupported("a masked-LM adapter cannot be saved");
  fs::create_directories(dir);
  const LoraSpec& spec = model.lora_spec();
  const bool token = model.kind() == Objective::kToken;
  write_json(dir / "adapter_config.json",
             {{"peft_type", "LORA"}, {"task_type", token ? "TOKEN_CLS" : "SEQ_CLS"}, {"base_model_name_or_path", base},
              {"r", spec.r}, {"lora_alpha", spec.alpha}, {"lora_dropout", model.dropout()},
              {"target_modules", spec.targets}, {"modules_to_save", {"classifier", "head"}}, {"bias", "none"},
              {"fan_in_fan_out", false}, {"inference_mode", true}, {"init_lora_weights", true},
              {"layers_to_transform", nullptr}, {"layers_pattern", nullptr}, {"rank_pattern", nlohmann::json::object()},
              {"alpha_pattern", nlohmann::json::object()}, {"use_rslora", false}, {"use_dora", false},
              {"revision", nullptr}});
  nlohmann::json labels = labels_json(model);
  labels["architectures"] = {architecture(model.kind())};
  labels["classifier_pooling"] = model.parsed().classifier_pooling;
  if (const auto it = model.config().find("semroute_entity_aggregation"); it != model.config().end())
    labels["semroute_entity_aggregation"] = *it;  // how the adapter's spans are read
  write_json(dir / "labels.json", labels);
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  const std::string prefix = "base_model.model.";
  for (const auto& [module, pair] : model.lora()) {
    tensors.emplace_back(prefix + module + ".lora_A.weight", pair.first.detach().cpu());
    tensors.emplace_back(prefix + module + ".lora_B.weight", pair.second.detach().cpu());
  }
  for (const auto& [name, tensor] : model.weights())
    if (in_head(name)) tensors.emplace_back(prefix + name, tensor.detach().cpu());
  save_safetensors(dir / "adapter_model.safetensors", tensors);
  copy_tokenizer(tokenizer_json, dir);
}

}  // namespace semroute::training
