// A ModernBERT that libtorch autograd can train: the forward of Hugging Face's
// ModernBertFor{SequenceClassification,TokenClassification,MaskedLM} written
// with differentiable ATen ops over a padded batch, its weights held under
// their checkpoint names, and optional PEFT LoRA on chosen linear layers.
// (The inference backend in models/ runs packed GEMMs over unpadded
// sequences in inference mode; it cannot take gradients, so training has its
// own forward, checked against the same reference outputs.)
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/configs.h"
#include "training/training_data.h"

namespace semroute::training {

struct LoraSpec {
  int64_t r = 0;  // 0: no LoRA, every weight trains
  double alpha = 16;
  // Leaf names of the adapted linear layers (PEFT's target_modules).
  std::vector<std::string> targets = {"Wqkv", "Wo", "Wi"};
};

// Throws InvalidInput unless training can compute in `dtype` on `device`:
// float32 anywhere, bfloat16 on a GPU or a CPU with native bfloat16 GEMMs.
void check_compute_dtype(at::ScalarType dtype, c10::Device device);

class TrainableModernBert {
 public:
  // `config` is a ModernBERT config.json; its classifier settings and
  // id2label are kept. Weights start as Hugging Face initializes them.
  TrainableModernBert(nlohmann::json config, Objective kind, uint64_t seed);

  // Copies every tensor of `dir`'s checkpoint whose name and shape match
  // (bare, `model.`-prefixed, heads); returns the names left as initialized.
  // Throws LoadError when an encoder weight is missing or mis-shaped.
  std::vector<std::string> load(const std::filesystem::path& dir);

  // Freezes the weights and adds LoRA A/B (A as PEFT initializes it, B zero)
  // on every targeted layer; the head stays trainable (modules_to_save).
  void add_lora(const LoraSpec& spec, uint64_t seed);
  // Moves every weight (LoRA too) to `device`, keeping which ones train. Call
  // after load and add_lora (they make their tensors on the CPU); inputs to
  // logits then go to that device.
  void to(c10::Device device);
  c10::Device device() const { return device_; }

  // Logits: [B, labels] (sequence), [B, T, labels] (token) or, for masked
  // LM, [N, vocab] at the N positions where `targets` is not kIgnore.
  at::Tensor logits(const at::Tensor& ids, const at::Tensor& mask, bool train,
                    const at::Tensor& targets = {}) const;

  // Trainable tensors: (no weight decay: norms and biases, weight decay: the rest).
  std::pair<std::vector<at::Tensor>, std::vector<at::Tensor>> trainable() const;
  // Every weight under its checkpoint name (LoRA not folded in).
  const std::map<std::string, at::Tensor>& weights() const { return weights_; }
  // LoRA pairs by module name ("model.layers.0.attn.Wqkv").
  const std::map<std::string, std::pair<at::Tensor, at::Tensor>>& lora() const { return lora_; }
  const LoraSpec& lora_spec() const { return lora_spec_; }
  // Copies of every trainable tensor, and putting them back (best epoch).
  std::vector<at::Tensor> snapshot() const;
  void restore(const std::vector<at::Tensor>& snapshot);

  const nlohmann::json& config() const { return config_json_; }
  const ModernBertConfig& parsed() const { return config_; }
  Objective kind() const { return kind_; }
  // Training-time dropout (embeddings, attention output, MLP, classifier).
  void set_dropout(double p) { dropout_ = p; }
  double dropout() const { return dropout_; }
  // Mixed precision: the matrix products run in `dtype` (kBFloat16 halves
  // their cost on CPUs with AVX-512 BF16 or AMX and on recent GPUs); norms,
  // softmax, residual sums, losses, the weights, their gradients and AdamW's
  // moments stay float32. kFloat (the default): every op in float32. Call
  // after to(): check_compute_dtype for the model's device.
  void set_compute_dtype(at::ScalarType dtype);
  at::ScalarType compute_dtype() const { return compute_dtype_; }

 private:
  at::Tensor linear(const std::string& module, const at::Tensor& x, bool train) const;
  // x·weightᵀ + bias and a·b in the compute type, the result in float32.
  at::Tensor affine(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) const;
  at::Tensor product(const at::Tensor& a, const at::Tensor& b) const;
  at::Tensor encode(const at::Tensor& ids, const at::Tensor& mask, bool train) const;
  at::Tensor head(const at::Tensor& x, bool train) const;
  at::Tensor w(const std::string& name) const;

  nlohmann::json config_json_;
  ModernBertConfig config_;
  Objective kind_;
  double dropout_ = 0;
  at::ScalarType compute_dtype_ = at::kFloat;
  c10::Device device_ = c10::kCPU;
  std::map<std::string, at::Tensor> weights_;
  std::map<std::string, std::pair<at::Tensor, at::Tensor>> lora_;
  LoraSpec lora_spec_;
};

}  // namespace semroute::training
