// Building blocks shared by the backends: linear, norms, activations.
// Every projection goes through Linear, so weight formats (and later LoRA)
// are handled in one place.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/weight_map.h"
#include "models/packed_gemm.h"

namespace semroute {

// Additions to linear layers computed beside the base GEMM: LoRA applied
// unmerged (src/lora). A layer is named by its checkpoint tensor without
// ".weight" ("model.layers.2.attn.Wqkv"); the implementation knows how the
// batch rows are grouped.
class LinearDeltas {
 public:
  virtual ~LinearDeltas() = default;
  // y = base output of `module` for input x; returns y plus the addition.
  virtual at::Tensor add(const std::string& module, const at::Tensor& x, const at::Tensor& y) const = 0;
};

// The one linear layer every backend uses, so LoRA is applied in one place.
class Linear {
 public:
  Linear() = default;
  // Loads `<name>.weight` [out, in] and, when `bias`, `<name>.bias` [out].
  static Linear load(WeightMap& weights, const std::string& name, int64_t in, int64_t out, bool bias);

  at::Tensor operator()(const at::Tensor& x, const LinearDeltas* deltas = nullptr) const;
  // residual + this(x): the residual connection folded into the product
  // where the packed GEMM can (PackedGemm::add_to).
  at::Tensor add_to(const at::Tensor& residual, const at::Tensor& x, const LinearDeltas* deltas = nullptr) const;
  // The same for an input that may be made as the product reads it (a norm,
  // a gated activation: GemmInput). A LoRA delta reads the input as a tensor.
  at::Tensor operator()(const GemmInput& x, const LinearDeltas* deltas = nullptr) const;
  at::Tensor add_to(const at::Tensor& residual, const GemmInput& x, const LinearDeltas* deltas = nullptr) const;
  // The passes of add_to(residual, x) (an undefined residual: operator()) to
  // run in a region with others (PackedGemm::passes); none with a LoRA delta
  // or where the product does not run on our int8 kernel.
  std::optional<ProductPasses> passes(const GemmInput& x, const at::Tensor& residual,
                                      const LinearDeltas* deltas = nullptr) const;
  // The output columns each panel of passes() holds (PackedGemm::panel_columns); 0: no passes.
  int64_t panel_columns() const { return packed_ != nullptr ? packed_->panel_columns() : 0; }
  int64_t out_features() const { return out_features_; }
  // The checkpoint name of this layer (its weight tensor without ".weight").
  const std::string& module() const { return module_; }
  // From tensors already loaded (packed on the CPU; quantized with `int8`).
  static Linear from(at::Tensor weight, at::Tensor bias, std::string module, bool int8 = false);

 private:
  // On the CPU the weight lives packed (PackedGemm) and weight_/bias_ are
  // released; elsewhere, or where packing is not possible, they stay dense.
  std::shared_ptr<const PackedGemm> packed_;
  at::Tensor weight_;
  at::Tensor bias_;
  int64_t out_features_ = 0;
  std::string module_;
};

// Several linear layers reading the same input (q/k/v, gate/up) run as one
// GEMM over their stacked weights: one call and one pass over the input
// instead of several. Each part keeps its checkpoint name, so LoRA deltas
// still apply per module.
class FusedLinear {
 public:
  FusedLinear() = default;
  // Loads `<name>.weight` [out, in] (and `<name>.bias`) for each name.
  static FusedLinear load(WeightMap& weights, const std::vector<std::string>& names, int64_t in,
                          const std::vector<int64_t>& outs, bool bias);
  // One output per part, in the order of the names.
  std::vector<at::Tensor> operator()(const at::Tensor& x, const LinearDeltas* deltas = nullptr) const;

 private:
  Linear stacked_;
  std::vector<std::string> modules_;
  std::vector<int64_t> outs_;
};

// LayerNorm over the last dimension; `bias` may be absent (ModernBERT).
class LayerNorm {
 public:
  LayerNorm() = default;
  static LayerNorm load(WeightMap& weights, const std::string& name, int64_t dim, double eps, bool bias);
  static LayerNorm from(const at::Tensor& weight, const at::Tensor& bias, double eps);
  at::Tensor operator()(const at::Tensor& x) const;
  // The normed rows of a 2-D x as the input of a Linear: made as the product
  // reads them where the norm runs on our row kernel (fp32 on the CPU).
  GemmInput rows(const at::Tensor& x) const;
  // Whether rows(x) is made as it is read (else it is computed when called).
  bool rows_made_for(const at::Tensor& x) const;

 private:
  at::Tensor weight_;
  at::Tensor bias_;
  double eps_ = 1e-5;
};

// RMSNorm over the last dimension, computed in fp32: x / rms(x) scaled by w
// (Qwen3, Llama) or by (1 + w) (Gemma, whose weights are stored as offsets).
class RmsNorm {
 public:
  RmsNorm() = default;
  static RmsNorm load(WeightMap& weights, const std::string& name, int64_t dim, double eps, bool one_plus_weight);
  static RmsNorm from(const at::Tensor& weight, double eps, bool one_plus_weight);
  at::Tensor operator()(const at::Tensor& x) const;

 private:
  at::Tensor weight_;  // fp32; (1 + w) already folded in for Gemma
  double eps_ = 1e-6;
  bool scale_in_fp32_ = false;  // Gemma multiplies before casting back
};

enum class Activation { kGeluErf, kGeluTanh, kRelu, kSilu };

// HF activation names: gelu, gelu_new, gelu_pytorch_tanh, relu, silu, swish.
Activation parse_activation(const std::string& name);
// act(x); for 2-D float CPU rows one fused, vectorized pass (erf, tanh and
// exp to ~1e-7, vector_math.h), elsewhere libtorch's kernels.
at::Tensor activate(Activation activation, const at::Tensor& x);
// act(input) · gate (GeGLU, SwiGLU) in one pass where activate() fuses.
at::Tensor gated_activation(Activation activation, const at::Tensor& input, const at::Tensor& gate);
// gated_activation of 2-D rows as the input of a Linear, made as the product
// reads it where the activation fuses.
GemmInput gated_activation_rows(Activation activation, const at::Tensor& input, const at::Tensor& gate);
// Whether gated_activation_rows is made as it is read (else computed when called).
bool gated_activation_fuses(const at::Tensor& input, const at::Tensor& gate);

// The projections of a Llama-family layer (Qwen3, Gemma3): self_attn.{q,k,v,o}_proj
// with per-head self_attn.{q,k}_norm, and a gated MLP
// mlp.down_proj(act(mlp.gate_proj(x)) * mlp.up_proj(x)).
struct GatedProjections {
  struct Shape {
    int64_t hidden, heads, kv_heads, head_dim, intermediate;
    double eps;
    bool attention_bias;
    bool output_bias;     // o_proj follows attention_bias (Gemma) or has none (Qwen3)
    bool one_plus_norm;   // Gemma's (1 + w) RMSNorm
  };
  static GatedProjections load(WeightMap& weights, const std::string& prefix, const Shape& shape);
  at::Tensor mlp(Activation activation, const at::Tensor& x, const LinearDeltas* deltas) const;

  RmsNorm q_norm, k_norm;
  FusedLinear qkv;      // self_attn.{q,k,v}_proj
  Linear o;
  FusedLinear gate_up;  // mlp.{gate,up}_proj
  Linear down;
};

}  // namespace semroute
