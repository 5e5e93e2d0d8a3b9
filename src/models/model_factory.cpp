#include "models/model_factory.h"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include <ATen/ops/ones_like.h>
#include <ATen/ops/zeros.h>
#include <c10/core/InferenceMode.h>

#include "core/runtime.h"
#include "semroute/error.h"

namespace semroute {
namespace {

// SEMROUTE_MAX_MODEL_MEMORY ("2G", "512M", bytes): the most memory one model
// may need; unset, the weights on disk bound it (every size config.json
// claims is checked against them).
std::optional<double> memory_limit() {
  const char* value = std::getenv("SEMROUTE_MAX_MODEL_MEMORY");
  if (value == nullptr || *value == '\0') return std::nullopt;
  char* end = nullptr;
  double bytes = std::strtod(value, &end);
  const std::string unit(end);
  if (unit == "K" || unit == "k") bytes *= 1024.0;
  else if (unit == "M" || unit == "m") bytes *= 1024.0 * 1024;
  else if (unit == "G" || unit == "g") bytes *= 1024.0 * 1024 * 1024;
  else if (!unit.empty()) bytes = -1;
  if (!(bytes > 0)) throw InvalidInput(std::string("SEMROUTE_MAX_MODEL_MEMORY='") + value + "' is not a size (e.g. 2G)");
  return bytes;
}

// Weights in the compute dtype, plus the activations of one input at the
// model's longest length (a generous 16 rows of hidden + intermediate per
// token), computed from validated sizes before anything is allocated.
void check_memory_need(const ModelSource& source, const LoadOptions& options) {
  const auto limit = memory_limit();
  if (!limit) return;
  double weights = 0;
  for (const auto& name : source.checkpoint.names()) {
    const TensorInfo& t = *source.checkpoint.find(name);
    weights += static_cast<double>(t.numel()) * static_cast<double>(c10::elementSize(options.dtype));
  }
  const ModelConfig c = ModelConfig::parse(source.config);
  const double tokens = static_cast<double>(std::min(c.max_position_embeddings, CoreModel::kMaxSequenceTokens));
  const double activations = 16.0 * tokens * static_cast<double>(c.hidden_size + c.intermediate_size) * 4.0;
  if (weights + activations > *limit)
    throw LoadError(source.dir.string() + ": needs about " + std::to_string(static_cast<long long>((weights + activations) / 1048576)) +
                        " MiB (weights " + std::to_string(static_cast<long long>(weights / 1048576)) +
                        " MiB), above SEMROUTE_MAX_MODEL_MEMORY=" + std::getenv("SEMROUTE_MAX_MODEL_MEMORY"),
                    ErrorCode::kOutOfMemory);
}

// One short forward at load, so that the caller's first request does not pay
// what a process pays once (the compute threads' start, first touches of the
// kernels' buffers): measured 3.9x a steady request on a fresh process
// before, see benchmarks/startup_bench.cpp.
void warm_up(const CoreModel& model) {
  if (!model.device().is_cpu()) return;
  c10::InferenceMode guard;
  const at::Tensor ids = at::zeros({1, 8}, at::kLong);
  model.forward({ids, at::ones_like(ids), {}});
}

}  // namespace

const Backend* find_backend(const ConfigReader& config) {
  const std::string model_type = config.get_string("model_type", "");
  for (const auto& backend : registered_backends()) {
    const auto& types = backend.model_types;
    if (std::find(types.begin(), types.end(), model_type) != types.end()) return &backend;
  }
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
    if (source.config.get_string("model_type", "").empty())
      throw LoadError(source.dir.string() + ": config.json has no \"model_type\" (it names the architecture)");
    std::string known;
    for (const auto& b : registered_backends()) known += (known.empty() ? "" : ", ") + b.name;
    throw Unsupported(source.dir.string() + ": model_type '" + source.config.get_string("model_type", "") +
                      "' is not supported (supported: " + (known.empty() ? "none" : known) + ")");
  }
  check_memory_need(source, options);
  ensure_runtime_initialized();
  WeightMap weights(source.checkpoint, backend->weight_prefixes,
                    at::TensorOptions().dtype(options.dtype).device(options.device));
  if (patch) weights.set_patch(patch);
  weights.set_int8_linears(options.int8);
  std::unique_ptr<CoreModel> built = backend->build(source, weights, options);
  weights.check();
  built->set_backend(backend);
  warm_up(*built);
  std::shared_ptr<const CoreModel> model = std::move(built);
  if (unused_tensors != nullptr) *unused_tensors = weights.unused();
  return model;
}

std::shared_ptr<const CoreModel> load_core_model(const std::filesystem::path& dir, const LoadOptions& options) {
  return load_core_model(open_model_source(dir), options);
}

}  // namespace semroute
