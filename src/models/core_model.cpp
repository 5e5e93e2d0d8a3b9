#include "models/core_model.h"

#include <ATen/ops/isfinite.h>
#include <ATen/ops/max.h>
#include <ATen/ops/min.h>
#include <c10/core/InferenceMode.h>

#include <cstdlib>
#include <string>

#include "core/device.h"
#include "core/free_cpus.h"
#include "kernels/bf16_gemm.h"
#include "models/model_factory.h"
#include "semroute/error.h"

namespace semroute {

void CoreModel::check_inputs(const ModelInputs& inputs) const {
  const auto& ids = inputs.input_ids;
  if (!ids.defined() || ids.dim() != 2 || ids.scalar_type() != c10::kLong)
    throw InvalidInput("input_ids must be a [batch, seq] int64 tensor");
  if (!inputs.attention_mask.defined() || inputs.attention_mask.sizes() != ids.sizes())
    throw InvalidInput("attention_mask must have the shape of input_ids");
  if (inputs.token_type_ids.defined() && inputs.token_type_ids.sizes() != ids.sizes())
    throw InvalidInput("token_type_ids must have the shape of input_ids");
  if (ids.size(1) > max_length())
    throw InvalidInput("sequence of " + std::to_string(ids.size(1)) + " tokens exceeds the model's limit of " +
                           std::to_string(max_length()),
                       ErrorCode::kTooLong);
  check_ids_in_range(ids, config_.vocab_size, "token id");
}

void CoreModel::check_ids_in_range(const at::Tensor& ids, int64_t limit, const char* what) {
  if (ids.numel() == 0) return;
  const int64_t lowest = at::min(ids).item<int64_t>();
  const int64_t highest = at::max(ids).item<int64_t>();
  if (lowest < 0 || highest >= limit)
    throw InvalidInput(std::string(what) + " " + std::to_string(lowest < 0 ? lowest : highest) + " is outside [0, " +
                       std::to_string(limit) + ")");
}

void CoreModel::check_finite(const at::Tensor& output, const char* what) {
  if (!at::isfinite(output).all().item<bool>())
    throw LoadError(std::string("the model produced NaN or infinite ") + what +
                    ": its weights or configuration are broken (or overflow in this dtype)");
}

}  // namespace semroute

namespace semroute {

std::vector<int64_t> LayerState::stacked_lengths() const {
  std::vector<int64_t> lengths;
  lengths.reserve(packed.lengths.size() * static_cast<size_t>(groups));
  for (int64_t g = 0; g < groups; ++g) lengths.insert(lengths.end(), packed.lengths.begin(), packed.lengths.end());
  return lengths;
}

at::Tensor CoreModel::forward(const ModelInputs& inputs, const ForwardOptions& options) const {
  const int64_t layers = layers_to_run(options, num_layers());
  LayerState state = embed(inputs);
  run_layers(state, 0, layers, options.deltas, options.attention_block);
  return finish(state, 0);
}

const Backend& CoreModel::backend() const {
  if (backend_ == nullptr) throw InternalError("model built outside the factory: no backend description");
  return *backend_;
}

const char* CoreModel::backend_name() const { return backend().name.c_str(); }

void CoreModel::run_layers(LayerState& state, int64_t begin, int64_t end, const LinearDeltas* deltas,
                           int64_t attention_block) const {
  if (begin < 0 || begin > end || end > num_layers())
    throw InvalidInput("layer range [" + std::to_string(begin) + ", " + std::to_string(end) + ") is outside the " +
                       std::to_string(num_layers()) + " layers of the model");
  if (begin == end) return;
  c10::InferenceMode guard;
  follow_free_cpus();  // a team no larger than the cores other processes leave
  const std::vector<int64_t> lengths = state.stacked_lengths();
  run_range(state, LayerRange{begin, end, lengths, deltas, attention_block});
}

int64_t CoreModel::layers_to_run(const ForwardOptions& options, int64_t total) {
  if (options.layers < 0 || options.layers > total)
    throw InvalidInput("cannot stop after layer " + std::to_string(options.layers) + ": the model has " +
                       std::to_string(total) + " layers");
  return options.layers == 0 ? total : options.layers;
}

}  // namespace semroute

namespace semroute {

LoadOptions parse_load_options(const std::string& device, const std::string& dtype) {
  LoadOptions options;
  options.device = parse_device(device);
  const Precision precision = parse_precision(dtype, options.device);
  options.dtype = precision.dtype;
  options.int8 = precision.int8;
  return options;
}

bool CoreModel::bf16_attention() const {
  static const bool allowed = [] {
    const char* value = std::getenv("SEMROUTE_BF16_ATTENTION");
    return value == nullptr || std::string(value) != "0";
  }();
  return allowed && options_.int8 && options_.device.is_cpu() && kernels::bf16_dot_here();
}

}  // namespace semroute
