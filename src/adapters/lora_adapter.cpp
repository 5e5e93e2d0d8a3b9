#include "adapters/lora_adapter.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/isfinite.h>
#include <ATen/ops/matmul.h>

#include <algorithm>

#include "core/config_reader.h"
#include "core/file_input.h"
#include "core/model_config.h"
#include "semroute/error.h"

namespace semroute {
namespace {

constexpr const char* kFilePrefix = "base_model.model.";  // PeftModel -> LoraModel -> the task model

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The first dotted part of the name that is a number ("layers.3.attn" -> 3), or -1.
int64_t layer_of(const std::string& module) {
  for (size_t begin = 0; begin <= module.size();) {
    const size_t end = std::min(module.find('.', begin), module.size());
    const size_t length = end - begin;
    if (length > 0 && length < 10 &&
        std::all_of(module.begin() + static_cast<long>(begin), module.begin() + static_cast<long>(end),
                    [](char c) { return c >= '0' && c <= '9'; }))
      return std::stoll(module.substr(begin, length));
    begin = end + 1;
  }
  return -1;
}

// The task metadata PEFT does not save, from the files training projects
// keep beside it.
AdapterTask read_task(const std::filesystem::path& dir, const LoraConfig& config) {
  AdapterTask task;
  task.task_type = config.task_type;
  for (const char* name : {"task_config.json", "labels.json"}) {
    const auto path = file_in_dir(dir, name);
    if (!std::filesystem::exists(path)) continue;
    const ConfigReader reader = ConfigReader::from_file(path);
    if (reader.has("id2label")) task.labels = ModelConfig::parse(reader).id2label;
    task.pooling = reader.get_string("classifier_pooling", "");
    task.temperature = read_temperature(reader);
    task.entity_aggregation = read_entity_aggregation(reader);
    const auto architectures = reader.get_strings("architectures");
    const std::string arch = architectures.empty() ? "" : architectures.front();
    const std::string kind = reader.get_string("task", "");
    if (ends_with(arch, "ForSequenceClassification") || kind == "sequence_classification") task.task_type = "SEQ_CLS";
    if (ends_with(arch, "ForTokenClassification") || kind == "token_classification") task.task_type = "TOKEN_CLS";
    break;
  }
  return task;
}

std::string shape_string(at::IntArrayRef shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

std::shared_ptr<const LoraAdapter> LoraAdapter::load(const std::filesystem::path& dir, const Checkpoint& base,
                                                     at::TensorOptions options) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw LoadError(dir.string() + ": not an adapter directory", ErrorCode::kNotFound);
  std::shared_ptr<LoraAdapter> adapter(new LoraAdapter());
  adapter->dir_ = dir;
  adapter->config_ = LoraConfig::load(file_in_dir(dir, "adapter_config.json"));
  adapter->task_ = read_task(dir, adapter->config_);
  adapter->checkpoint_ = Checkpoint::open_weights_in(dir, "adapter_model");
  if (adapter->checkpoint_.size() == 0)
    throw LoadError(dir.string() + ": no adapter_model.safetensors", ErrorCode::kNotFound);
  adapter->read_tensors(base, options);
  adapter->check_coverage(base);
  return adapter;
}

void LoraAdapter::read_tensors(const Checkpoint& base, at::TensorOptions options) {
  std::vector<std::string> problems;
  std::map<std::string, std::pair<at::Tensor, at::Tensor>> pairs;  // adapter module name -> (A, B)
  for (const auto& key : checkpoint_.names()) {
    if (!starts_with(key, kFilePrefix)) {
      problems.push_back("'" + key + "' does not start with '" + kFilePrefix + "'");
      continue;
    }
    const std::string name = key.substr(std::string(kFilePrefix).size());
    for (const char* part : {".lora_A.weight", ".lora_B.weight"}) {
      if (!ends_with(name, part)) continue;
      const std::string module = name.substr(0, name.size() - std::string(part).size());
      (part[6] == 'A' ? pairs[module].first : pairs[module].second) = checkpoint_.tensor(key);
    }
    if (ends_with(name, ".lora_A.weight") || ends_with(name, ".lora_B.weight")) continue;
    if (name.find("lora_") != std::string::npos) {
      problems.push_back("'" + key + "' is a LoRA tensor of a kind this library does not support");
    } else if (config_.saves(name.substr(0, name.rfind('.')))) {
      has_saved_modules_ = true;
    } else {
      problems.push_back("'" + key + "' is neither a LoRA weight nor part of modules_to_save");
    }
  }

  for (auto& [module, ab] : pairs) {
    auto& [a, b] = ab;
    if (!a.defined() || !b.defined()) {
      problems.push_back(module + ": lora_" + std::string(a.defined() ? "B" : "A") + ".weight is missing");
      continue;
    }
    if (!config_.targets(module)) {
      problems.push_back(module + ": has LoRA weights but adapter_config.json does not target it");
      continue;
    }
    // Find the base tensor, allowing for a "model." difference in naming.
    if (modules_.empty() && strip_prefix_.empty() && add_prefix_.empty() && !base.find(module + ".weight")) {
      if (starts_with(module, "model.") && base.find(module.substr(6) + ".weight")) strip_prefix_ = "model.";
      if (base.find("model." + module + ".weight")) add_prefix_ = "model.";
    }
    std::string base_name = module;
    if (!strip_prefix_.empty() && starts_with(base_name, strip_prefix_)) base_name = base_name.substr(strip_prefix_.size());
    base_name = add_prefix_ + base_name;
    const TensorInfo* w = base.find(base_name + ".weight");
    const int64_t r = config_.rank_of(module);
    if (w == nullptr || w->shape.size() != 2) {
      problems.push_back(module + ": the base checkpoint has no linear layer of that name");
    } else if (a.dim() != 2 || b.dim() != 2 || a.size(0) != r || b.size(1) != r || a.size(1) != w->shape[1] ||
               b.size(0) != w->shape[0]) {
      problems.push_back(module + ": lora_A " + shape_string(a.sizes()) + " and lora_B " + shape_string(b.sizes()) +
                         " do not fit rank " + std::to_string(r) + " and the base weight " +
                         shape_string(w->shape));
    } else if (!a.is_floating_point() || !b.is_floating_point()) {
      problems.push_back(module + ": lora_A / lora_B must hold floating-point values, not " +
                         c10::toString(a.scalar_type()) + " / " + c10::toString(b.scalar_type()));
    } else if (!at::isfinite(a).all().item<bool>() || !at::isfinite(b).all().item<bool>()) {
      problems.push_back(module + ": lora_A or lora_B holds NaN or infinite values");
    } else {
      LoraModule m{base_name, a.to(options), (b.to(at::kFloat) * config_.scaling_of(module)).to(options),
                   layer_of(base_name)};
      if (first_layer_ < 0 || (m.layer >= 0 && m.layer < first_layer_)) first_layer_ = m.layer;
      modules_.emplace(base_name, std::move(m));
    }
  }
  if (modules_.empty() && problems.empty()) problems.push_back("no LoRA weights");
  if (!problems.empty()) {
    std::string message = dir_.string() + ": adapter does not fit the base model:";
    for (const auto& p : problems) message += "\n  " + p;
    throw LoadError(message);
  }
}

void LoraAdapter::check_coverage(const Checkpoint& base) const {
  std::string missing;
  for (const auto& key : base.names()) {
    if (!ends_with(key, ".weight") || base.find(key)->shape.size() != 2) continue;
    const std::string base_name = key.substr(0, key.size() - 7);
    if (!add_prefix_.empty() && !starts_with(base_name, add_prefix_)) continue;
    const std::string module = strip_prefix_ + base_name.substr(add_prefix_.size());
    if (config_.targets(module) && modules_.count(base_name) == 0) missing += "\n  " + module;
  }
  if (!missing.empty())
    throw LoadError(dir_.string() + ": adapter_config.json targets modules without LoRA weights:" + missing);
}

const LoraModule* LoraAdapter::find(const std::string& module) const {
  const auto it = modules_.find(module);
  return it == modules_.end() ? nullptr : &it->second;
}

void LoraAdapter::overlay_saved_modules(WeightMap& weights) const {
  if (has_saved_modules_) weights.set_overlay(checkpoint_, kFilePrefix);
}

at::Tensor LoraAdapter::merge(const std::string& key, const at::Tensor& weight) const {
  if (!ends_with(key, ".weight")) return weight;
  const LoraModule* m = find(key.substr(0, key.size() - 7));
  if (m == nullptr) return weight;
  const at::Tensor delta = at::matmul(m->b.to(at::kFloat).cpu(), m->a.to(at::kFloat).cpu());
  return (weight.to(at::kFloat).cpu() + delta).to(weight.dtype());
}

std::shared_ptr<const LoraAdapter> load_adapter_for(const std::filesystem::path& dir, const Checkpoint& base,
                                                    const LoadOptions& load, bool merged) {
  const auto options = merged ? at::TensorOptions().dtype(at::kFloat)
                              : at::TensorOptions().dtype(load.dtype).device(load.device);
  return LoraAdapter::load(dir, base, options);
}

WeightMap::Patch merge_patch(std::shared_ptr<const LoraAdapter> adapter) {
  if (!adapter) return nullptr;
  return [adapter](const std::string& name, const at::Tensor& t) { return adapter->merge(name, t); };
}

}  // namespace semroute
