// CoreModel: the one contract every transformer backend implements. A
// backend runs on packed (unpadded) tokens in three steps — embed, a range of
// layers, finish — so that callers can run all layers at once (forward) or
// compute a shared prefix of layers once and continue from it several ways
// (the multi-task engine). What the architecture means for tasks (heads,
// pooling, appended tokens) it declares in the registry (model_factory.h);
// task heads live in src/tasks and sit on top of any backend.
//
// Models are immutable after load: every method is const and safe to call
// from any number of threads at once.
#pragma once

#include <ATen/core/Tensor.h>

#include <algorithm>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/model_config.h"
#include "models/packed_sequences.h"

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
  // Linear layers of the encoder quantized to int8 (dynamic quantization:
  // activations per row at run time); dtype stays float32. CPU only.
  bool int8 = false;
};

// LoadOptions from user-facing names: parse_device() and parse_precision().
LoadOptions parse_load_options(const std::string& device, const std::string& dtype);

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

// The hidden states between layers: the packed real tokens of a batch, with
// `groups` copies of it stacked one after another (each may continue with
// its own low-rank deltas).
struct LayerState {
  PackedSequences packed;  // the layout of one group
  at::Tensor hidden;       // [groups * tokens, hidden_size]
  int64_t groups = 1;

  int64_t tokens() const { return hidden.size(0) / groups; }
  // Rows of group g.
  at::Tensor group(int64_t g) const { return hidden.narrow(0, g * tokens(), tokens()); }
  // The sequence lengths of every group, one after another: stacked groups
  // are further sequences to attention.
  std::vector<int64_t> stacked_lengths() const;
};

struct Backend;  // model_factory.h

class CoreModel {
 public:
  virtual ~CoreModel() = default;
  CoreModel(const CoreModel&) = delete;
  CoreModel& operator=(const CoreModel&) = delete;

  // ---- what a backend implements
  virtual int64_t num_layers() const = 0;
  // The input of layer 0 (one group); validates `inputs`.
  virtual LayerState embed(const ModelInputs& inputs) const = 0;
  // Runs layers range.begin .. range.end - 1 on every group of `state`
  // (called by run_layers: the range is valid and not empty, inference mode is on).
  struct LayerRange {
    int64_t begin, end;
    const std::vector<int64_t>& lengths;  // of the stacked sequences (state.stacked_lengths())
    const LinearDeltas* deltas;           // may be null; knows the groups
    int64_t attention_block;
  };
  virtual void run_range(LayerState& state, const LayerRange& range) const = 0;
  // Group g after the final norm (if the architecture has one), [batch, seq,
  // hidden] with zeros at padding.
  virtual at::Tensor finish(const LayerState& state, int64_t group) const = 0;

  // ---- built on it
  // Runs layers [begin, end) on every group; `deltas` (may be null) knows the
  // groups. InvalidInput for a range outside the model.
  void run_layers(LayerState& state, int64_t begin, int64_t end, const LinearDeltas* deltas,
                  int64_t attention_block = 0) const;
  // Last hidden state, [batch, seq, hidden_size], in the model's dtype, zeros
  // at padded positions: embed, the layers options.layers asks for, finish.
  at::Tensor forward(const ModelInputs& inputs, const ForwardOptions& options = {}) const;

  // The registry entry this model was built from (set by the factory).
  const Backend& backend() const;
  // The backend's short name ("modernbert", "bert", …).
  const char* backend_name() const;
  void set_backend(const Backend* backend) { backend_ = backend; }

  const ModelConfig& config() const { return config_; }
  c10::Device device() const { return options_.device; }
  c10::ScalarType dtype() const { return options_.dtype; }
  // "int8" for int8 linear layers, else the dtype's name.
  std::string precision_name() const { return semroute::precision_name({options_.dtype, options_.int8}); }
  // Whether attention takes bf16 products (kernels/bf16_gemm.h): int8 models
  // on a CPU with AVX-512 BF16, unless SEMROUTE_BF16_ATTENTION=0.
  bool bf16_attention() const;
  int64_t hidden_size() const { return config_.hidden_size; }
  // Longest sequence the model accepts (its position limit).
  // Longest input in tokens: the positions the config declares, at most
  // kMaxSequenceTokens (longer inputs are truncated before any work).
  int64_t max_length() const { return std::min(config_.max_position_embeddings, kMaxSequenceTokens); }
  static constexpr int64_t kMaxSequenceTokens = 32768;

  // Throws (kInvalidModel) when `output` holds a NaN or an infinity: broken
  // weights or an overflowing dtype must give an error, never an answer.
  static void check_finite(const at::Tensor& output, const char* what);

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
  const Backend* backend_ = nullptr;
};

}  // namespace semroute
