// CoreModel: the interface every transformer backend implements. A backend
// turns a batch of token ids into hidden states; task heads (classification,
// pooling, …) live in src/tasks and sit on top of any backend.
//
// Models are immutable after load: forward() is const and safe to call from
// any number of threads at once.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

#include "core/model_config.h"

namespace semroute {

// One padded batch. input_ids and attention_mask are [batch, seq] int64 on the
// model's device; attention_mask is 1 for real tokens, 0 for padding.
struct ModelInputs {
  at::Tensor input_ids;
  at::Tensor attention_mask;
  at::Tensor token_type_ids;  // optional (BERT); undefined means all zeros
};

struct LoadOptions {
  c10::Device device = c10::Device(c10::kCPU);
  c10::ScalarType dtype = c10::kFloat;
};

class LinearDeltas;  // models/layers.h

struct ForwardOptions {
  // Run only the first `layers` layers (0 = all); the final norm, if the
  // architecture has one, is still applied ("early exit" embeddings).
  int64_t layers = 0;
  // Attention query-block size; 0 chooses one that bounds memory. Tests set
  // a block >= the length to get the one-shot reference computation.
  int64_t attention_block = 0;
  // Low-rank additions to the linear layers (LoRA unmerged), or null.
  const LinearDeltas* deltas = nullptr;
};

class CoreModel {
 public:
  virtual ~CoreModel() = default;
  CoreModel(const CoreModel&) = delete;
  CoreModel& operator=(const CoreModel&) = delete;

  // Last hidden state, [batch, seq, hidden_size], in the model's dtype.
  // Values at padded positions are unspecified.
  virtual at::Tensor forward(const ModelInputs& inputs, const ForwardOptions& options = {}) const = 0;

  // The backend's short name ("modernbert", "bert", …).
  virtual const char* backend_name() const = 0;

  const ModelConfig& config() const { return config_; }
  c10::Device device() const { return options_.device; }
  c10::ScalarType dtype() const { return options_.dtype; }
  int64_t hidden_size() const { return config_.hidden_size; }
  // Longest sequence the model accepts (its position limit).
  int64_t max_length() const { return config_.max_position_embeddings; }

 protected:
  CoreModel(ModelConfig config, LoadOptions options) : config_(std::move(config)), options_(options) {}

  // Throws InvalidInput unless `inputs` has the documented shapes and dtypes.
  void check_inputs(const ModelInputs& inputs) const;
  // Number of layers to run for `options` (validated against `total`).
  static int64_t layers_to_run(const ForwardOptions& options, int64_t total);
  // Throws InvalidInput unless every value of `ids` is in [0, limit).
  static void check_ids_in_range(const at::Tensor& ids, int64_t limit, const char* what);

 private:
  ModelConfig config_;
  LoadOptions options_;
};

}  // namespace semroute
