// Picks and builds the backend for a Hugging Face model directory from its
// config.json (`model_type`, then `architectures`). The list of backends is
// in registry.cpp: adding an architecture is one backend file (a CoreModel)
// plus one entry there, which also says what the architecture means for
// tasks (heads, pooling, appended tokens).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/checkpoint.h"
#include "core/config_reader.h"
#include "core/weight_map.h"
#include "models/core_model.h"
#include "models/task_conventions.h"

namespace semroute {

// Everything a backend needs to build itself.
struct ModelSource {
  std::filesystem::path dir;
  ConfigReader config;     // the raw config.json, for architecture-specific keys
  Checkpoint checkpoint;   // the validated weights
};

struct Backend {
  std::string name;                      // "modernbert"
  std::vector<std::string> model_types;  // config.json "model_type" values it serves (required, as in transformers)
  std::vector<std::string> weight_prefixes;  // where checkpoints put the encoder ("", "model.", …)
  // Builds the model, taking its tensors from `weights`; the factory checks
  // afterwards that nothing was missing or mis-shaped.
  std::function<std::unique_ptr<CoreModel>(const ModelSource&, WeightMap& weights, const LoadOptions&)> build;
  // The head Hugging Face's task class of `kind` puts on this architecture,
  // shaped by the config.json of the checkpoint it comes from (a head bound
  // to a shared encoder keeps its own pooling); nullopt when there is none.
  std::function<std::optional<HeadLayout>(const ConfigReader&, TaskKind)> head;
  EmbeddingConvention embedding;
};

// All registered backends (registry.cpp).
const std::vector<Backend>& registered_backends();

// The backend serving this config, or nullptr.
const Backend* find_backend(const ConfigReader& config);

// Opens `dir` (config.json + weights) without building a model.
ModelSource open_model_source(const std::filesystem::path& dir);

// Opens `dir` and builds its backend. Throws LoadError / Unsupported.
// `unused_tensors`, when given, receives the checkpoint tensors the backend did
// not take (task heads, MLM heads, extras). `patch`, when set, transforms
// every weight on its way in (a LoRA adapter merged at load).
std::shared_ptr<const CoreModel> load_core_model(const ModelSource& source, const LoadOptions& options,
                                                 std::vector<std::string>* unused_tensors = nullptr,
                                                 const WeightMap::Patch& patch = nullptr);
std::shared_ptr<const CoreModel> load_core_model(const std::filesystem::path& dir, const LoadOptions& options = {});

}  // namespace semroute
