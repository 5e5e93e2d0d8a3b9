#include "models/model_factory.h"

#include <algorithm>

#include "core/runtime.h"
#include "semroute/error.h"

namespace semroute {

const Backend* find_backend(const ConfigReader& config) {
  const std::string model_type = config.get_string("model_type", "");
  const auto architectures = config.get_strings("architectures");
  for (const auto& backend : registered_backends()) {
    const auto& types = backend.model_types;
    if (!model_type.empty() && std::find(types.begin(), types.end(), model_type) != types.end()) return &backend;
  }
  if (!model_type.empty()) return nullptr;  // an explicit type we do not know wins over guessing
  for (const auto& backend : registered_backends())
    for (const auto& arch : architectures)
      if (arch.rfind(backend.architecture_prefix, 0) == 0) return &backend;
  return nullptr;
}

ModelSource open_model_source(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw LoadError(dir.string() + ": not a model directory", ErrorCode::kNotFound);
  ConfigReader config = read_model_config(dir);
  return ModelSource{dir, std::move(config), Checkpoint::open(dir)};
}

std::shared_ptr<const CoreModel> load_core_model(const ModelSource& source, const LoadOptions& options,
                                                 std::vector<std::string>* unused_tensors,
                                                 const WeightMap::Patch& patch) {
  const Backend* backend = find_backend(source.config);
  if (backend == nullptr) {
    std::string known;
    for (const auto& b : registered_backends()) known += (known.empty() ? "" : ", ") + b.name;
    throw Unsupported(source.dir.string() + ": model_type '" + source.config.get_string("model_type", "") +
                      "' is not supported (supported: " + (known.empty() ? "none" : known) + ")");
  }
  ensure_runtime_initialized();
  WeightMap weights(source.checkpoint, backend->weight_prefixes,
                    at::TensorOptions().dtype(options.dtype).device(options.device));
  if (patch) weights.set_patch(patch);
  std::unique_ptr<CoreModel> built = backend->build(source, weights, options);
  weights.check();
  built->set_backend(backend);
  std::shared_ptr<const CoreModel> model = std::move(built);
  if (unused_tensors != nullptr) *unused_tensors = weights.unused();
  return model;
}

std::shared_ptr<const CoreModel> load_core_model(const std::filesystem::path& dir, const LoadOptions& options) {
  return load_core_model(open_model_source(dir), options);
}

}  // namespace semroute
