// A Hugging Face PEFT LoRA adapter (adapter_config.json +
// adapter_model.safetensors), validated against the base checkpoint it will
// be applied to. Immutable after load.
//
// Module identity: a LoRA module is named by the base checkpoint tensor it
// modifies, without ".weight" ("model.layers.2.attn.Wqkv"), which is also
// the name a Linear layer knows itself by (models/layers.h).
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/checkpoint.h"
#include "core/model_config.h"
#include "core/weight_map.h"
#include "adapters/lora_config.h"
#include "models/core_model.h"

namespace semroute {

struct LoraModule {
  std::string module;  // base checkpoint name without ".weight"
  at::Tensor a;        // [r, in]
  at::Tensor b;        // [out, r], already multiplied by the module's scaling
  int64_t layer = -1;  // first numeric component of the name (the layer index), -1 if none
};

// What the adapter's task is. PEFT's files say only task_type; labels and
// pooling come from a task_config.json (the task model's Hugging Face config)
// or a labels.json ({"id2label", "classifier_pooling", "task"}) beside them.
struct AdapterTask {
  std::string task_type;            // "SEQ_CLS", "TOKEN_CLS", or "" when unknown
  std::vector<std::string> labels;  // empty when unknown
  std::string pooling;              // "cls", "mean", or "" when unknown
  double temperature = 1;           // labels.json's semroute_temperature (tasks/task_head.h)
  EntityAggregation entity_aggregation = EntityAggregation::kToken;  // its semroute_entity_aggregation
};

class LoraAdapter {
 public:
  // Loads `dir` for the base checkpoint `base`: every LoRA tensor must belong
  // to a module the config targets and the base has, with matching shapes;
  // every module the config targets must have its tensors; any other tensor
  // must belong to a modules_to_save module. LoRA weights are converted to
  // `options` (the model's dtype and device).
  static std::shared_ptr<const LoraAdapter> load(const std::filesystem::path& dir, const Checkpoint& base,
                                                 at::TensorOptions options);

  const LoraConfig& config() const { return config_; }
  const AdapterTask& task() const { return task_; }
  const std::filesystem::path& dir() const { return dir_; }
  const std::map<std::string, LoraModule>& modules() const { return modules_; }
  const LoraModule* find(const std::string& module) const;
  // The lowest layer index any module adapts (-1 if a module has no index).
  int64_t first_layer() const { return first_layer_; }

  // The saved task head (modules_to_save), if any, as a weight map with the
  // task model's names ("classifier.weight", "head.dense.weight").
  bool has_saved_modules() const { return has_saved_modules_; }
  // Puts the saved modules over the base's in `weights` (module by module, as
  // PEFT composes a task model), when there are any.
  void overlay_saved_modules(WeightMap& weights) const;

  // W + scaling · B·A, computed in float32, for `key` ("<module>.weight") of
  // the base checkpoint; `weight` itself when the module is not adapted.
  at::Tensor merge(const std::string& key, const at::Tensor& weight) const;

 private:
  LoraAdapter() = default;
  void read_tensors(const Checkpoint& base, at::TensorOptions options);
  void check_coverage(const Checkpoint& base) const;

  std::filesystem::path dir_;
  LoraConfig config_;
  AdapterTask task_;
  Checkpoint checkpoint_;
  std::map<std::string, LoraModule> modules_;
  int64_t first_layer_ = -1;
  bool has_saved_modules_ = false;
  // Adapter names and base names differ by a leading "model." when the base
  // is a bare encoder checkpoint (or the adapter was made on one).
  std::string strip_prefix_, add_prefix_;
};

// The adapter in `dir` for a model loaded with `load`: float32 on the CPU
// when it will be merged (the merge is computed in float32), else in the
// model's dtype and on its device.
std::shared_ptr<const LoraAdapter> load_adapter_for(const std::filesystem::path& dir, const Checkpoint& base,
                                                    const LoadOptions& load, bool merged);

// A WeightMap patch folding `adapter` into the weights (nullptr for no adapter).
WeightMap::Patch merge_patch(std::shared_ptr<const LoraAdapter> adapter);

}  // namespace semroute
