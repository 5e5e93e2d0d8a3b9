#include "models/core_model.h"

#include <ATen/ops/max.h>
#include <ATen/ops/min.h>

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

}  // namespace semroute

namespace semroute {

int64_t CoreModel::layers_to_run(const ForwardOptions& options, int64_t total) {
  if (options.layers < 0 || options.layers > total)
    throw InvalidInput("cannot stop after layer " + std::to_string(options.layers) + ": the model has " +
                       std::to_string(total) + " layers");
  return options.layers == 0 ? total : options.layers;
}

}  // namespace semroute
