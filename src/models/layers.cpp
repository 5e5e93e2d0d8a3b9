#include "models/layers.h"

#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/silu.h>

#include "models/vector_math.h"
#include "semroute/error.h"

#include <algorithm>
#include <cmath>

namespace semroute {

namespace {

// The checkpoint name of a layer: its weight tensor as the WeightMap found it,
// without ".weight" (LoRA adapters address layers by it).
std::string module_name(const WeightMap& weights, const std::string& name) {
  const std::string resolved = weights.resolved(name + ".weight");
  return resolved.empty() ? name : resolved.substr(0, resolved.size() - std::string(".weight").size());
}

}  // namespace

Linear Linear::load(WeightMap& weights, const std::string& name, int64_t in, int64_t out, bool bias) {
  at::Tensor weight = weights.get(name + ".weight", {out, in});
  at::Tensor b = bias ? weights.get(name + ".bias", {out}) : at::Tensor();
  return from(std::move(weight), std::move(b), module_name(weights, name), weights.int8_linears());
}

Linear Linear::from(at::Tensor weight, at::Tensor bias, std::string module, bool int8) {
  Linear linear;
  // An undefined weight is a missing tensor the WeightMap reports after loading.
  linear.out_features_ = weight.defined() ? weight.size(0) : 0;
  linear.module_ = std::move(module);
  linear.packed_ = PackedGemm::pack(weight, bias, int8);
  if (linear.packed_ == nullptr) {
    linear.weight_ = std::move(weight);
    linear.bias_ = std::move(bias);
  }
  return linear;
}

FusedLinear FusedLinear::load(WeightMap& weights, const std::vector<std::string>& names, int64_t in,
                              const std::vector<int64_t>& outs, bool bias) {
  FusedLinear fused;
  std::vector<at::Tensor> stacked_weights, stacked_biases;
  for (size_t i = 0; i < names.size(); ++i) {
    stacked_weights.push_back(weights.get(names[i] + ".weight", {outs[i], in}));
    if (bias) stacked_biases.push_back(weights.get(names[i] + ".bias", {outs[i]}));
    fused.modules_.push_back(module_name(weights, names[i]));
  }
  fused.outs_ = outs;
  const auto missing = [](const at::Tensor& t) { return !t.defined(); };
  if (std::any_of(stacked_weights.begin(), stacked_weights.end(), missing) ||
      std::any_of(stacked_biases.begin(), stacked_biases.end(), missing))
    return fused;  // the WeightMap reports what is missing once loading ends
  fused.stacked_ = Linear::from(at::cat(stacked_weights, 0), bias ? at::cat(stacked_biases, 0) : at::Tensor(),
                                fused.modules_.front(), weights.int8_linears());
  return fused;
}

std::vector<at::Tensor> FusedLinear::operator()(const at::Tensor& x, const LinearDeltas* deltas) const {
  std::vector<at::Tensor> parts = stacked_(x).split_with_sizes(outs_, -1);
  if (deltas != nullptr)
    for (size_t i = 0; i < parts.size(); ++i) parts[i] = deltas->add(modules_[i], x, parts[i]);
  return parts;
}

at::Tensor Linear::operator()(const at::Tensor& x, const LinearDeltas* deltas) const {
  const at::Tensor y = packed_ != nullptr ? (*packed_)(x) : at::linear(x, weight_, bias_);
  return deltas != nullptr ? deltas->add(module_, x, y) : y;
}

at::Tensor Linear::add_to(const at::Tensor& residual, const at::Tensor& x, const LinearDeltas* deltas) const {
  // A LoRA delta adds to the sum as it would to the product alone.
  const at::Tensor y = packed_ != nullptr ? packed_->add_to(residual, x) : residual + at::linear(x, weight_, bias_);
  return deltas != nullptr ? deltas->add(module_, x, y) : y;
}

at::Tensor Linear::operator()(const GemmInput& x, const LinearDeltas* deltas) const {
  if (packed_ != nullptr && deltas == nullptr) return (*packed_)(x);
  return (*this)(x.materialize(), deltas);
}

at::Tensor Linear::add_to(const at::Tensor& residual, const GemmInput& x, const LinearDeltas* deltas) const {
  if (packed_ != nullptr && deltas == nullptr) return packed_->add_to(residual, x);
  return add_to(residual, x.materialize(), deltas);
}

std::optional<ProductPasses> Linear::passes(const GemmInput& x, const at::Tensor& residual,
                                            const LinearDeltas* deltas) const {
  if (packed_ == nullptr || deltas != nullptr) return std::nullopt;
  return packed_->passes(x, residual);
}

LayerNorm LayerNorm::load(WeightMap& weights, const std::string& name, int64_t dim, double eps, bool bias) {
  const at::Tensor weight = weights.get(name + ".weight", {dim});
  return from(weight, bias ? weights.get(name + ".bias", {dim}) : at::Tensor(), eps);
}

LayerNorm LayerNorm::from(const at::Tensor& weight, const at::Tensor& bias, double eps) {
  LayerNorm norm;
  norm.weight_ = weight;
  norm.bias_ = bias;
  norm.eps_ = eps;
  return norm;
}

namespace {

// out[r] = (x[r] − mean) / sqrt(var + eps) · w (+ b) for `rows` contiguous
// rows of `dim` floats; the variance from the centred values (two passes
// over a row in cache), as libtorch computes it.
inline void layer_norm_rows_body(const float* x, const float* w, const float* b, float* out, int64_t rows,
                                 int64_t dim, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* o = out + r * dim;
    const float mean = vec::sum(xr, dim) / static_cast<float>(dim);
    const float scale = 1.0f / std::sqrt(vec::sum(xr, dim, true, mean) / static_cast<float>(dim) + eps);
    if (b != nullptr) {
      for (int64_t j = 0; j < dim; ++j) o[j] = (xr[j] - mean) * scale * w[j] + b[j];
    } else {
      for (int64_t j = 0; j < dim; ++j) o[j] = (xr[j] - mean) * scale * w[j];
    }
  }
}
SEMROUTE_ISA_DISPATCH(layer_norm_rows, layer_norm_rows_body,
                      (const float* x, const float* w, const float* b, float* out, int64_t rows, int64_t dim,
                       float eps),
                      (x, w, b, out, rows, dim, eps))

// Whether a norm of `x` with fp32 `weight` (and `bias`, when defined) runs on
// our row kernels: fp32 on the CPU.
bool fp32_rows(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {}) {
  return x.device().is_cpu() && x.scalar_type() == at::kFloat && x.dim() >= 1 && weight.scalar_type() == at::kFloat &&
         (!bias.defined() || bias.scalar_type() == at::kFloat);
}

// `norm(in, out, rows, dim)` over the rows of x (last dimension) as an input
// made on demand; materialized, it runs in tasks of ~16 K floats. One fused
// pass per row where libtorch's kernels took several (its layer_norm: 17 µs
// for 64 x 768, ~4x a pass over the data).
template <class Norm>
GemmInput norm_rows(const at::Tensor& x, Norm norm) {
  const int64_t dim = x.size(-1);
  at::Tensor rows = x.reshape({-1, dim}).contiguous();
  const float* in = rows.data_ptr<float>();
  const int64_t count = rows.size(0);
  return GemmInput(count, dim, [rows = std::move(rows), in, dim, norm](int64_t begin, int64_t end, float* out) {
    norm(in + begin * dim, out, end - begin, dim);
  });
}

}  // namespace

bool LayerNorm::rows_made_for(const at::Tensor& x) const { return fp32_rows(x, weight_, bias_) && x.dim() == 2; }

GemmInput LayerNorm::rows(const at::Tensor& x) const {
  if (!rows_made_for(x)) return GemmInput((*this)(x));
  const at::Tensor w = weight_.contiguous(), b = bias_.defined() ? bias_.contiguous() : at::Tensor();
  const float *wp = w.data_ptr<float>(), *bp = b.defined() ? b.data_ptr<float>() : nullptr;
  const auto eps = static_cast<float>(eps_);
  return norm_rows(x, [w, b, wp, bp, eps](const float* in, float* out, int64_t rows, int64_t dim) {
    layer_norm_rows(in, wp, bp, out, rows, dim, eps);
  });
}

at::Tensor LayerNorm::operator()(const at::Tensor& x) const {
  if (!fp32_rows(x, weight_, bias_)) return at::layer_norm(x, {x.size(-1)}, weight_, bias_, eps_);
  return rows(x.reshape({-1, x.size(-1)})).materialize().view(x.sizes());
}

RmsNorm RmsNorm::load(WeightMap& weights, const std::string& name, int64_t dim, double eps, bool one_plus_weight) {
  return from(weights.get(name + ".weight", {dim}), eps, one_plus_weight);
}

RmsNorm RmsNorm::from(const at::Tensor& w, double eps, bool one_plus_weight) {
  RmsNorm norm;
  if (w.defined()) norm.weight_ = one_plus_weight ? w.to(at::kFloat) + 1.0 : w;
  norm.eps_ = eps;
  norm.scale_in_fp32_ = one_plus_weight;
  return norm;
}

namespace {

// out[r] = x[r] / rms(x[r]) · w for `rows` contiguous rows of `dim` floats.
inline void rms_norm_rows_body(const float* x, const float* w, float* out, int64_t rows, int64_t dim, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    const float squares = vec::sum(xr, dim, true);
    const float scale = 1.0f / std::sqrt(squares / static_cast<float>(dim) + eps);
    for (int64_t j = 0; j < dim; ++j) out[r * dim + j] = xr[j] * scale * w[j];
  }
}
SEMROUTE_ISA_DISPATCH(rms_norm_rows, rms_norm_rows_body,
                      (const float* x, const float* w, float* out, int64_t rows, int64_t dim, float eps),
                      (x, w, out, rows, dim, eps))

}  // namespace

at::Tensor RmsNorm::operator()(const at::Tensor& x) const {
  if (fp32_rows(x, weight_)) {
    // fp32 in and out: one fused pass (both HF orders of scaling agree here).
    const at::Tensor w = weight_.contiguous();
    const float* wp = w.data_ptr<float>();
    const auto eps = static_cast<float>(eps_);
    return norm_rows(x, [w, wp, eps](const float* in, float* out, int64_t rows, int64_t dim) {
             rms_norm_rows(in, wp, out, rows, dim, eps);
           })
        .materialize()
        .view(x.sizes());
  }
  const at::Tensor h = x.to(at::kFloat);
  const at::Tensor normed = h * at::rsqrt(h.pow(2).mean(-1, true) + eps_);
  // Gemma scales in fp32 then casts; Qwen3 casts then scales in the model dtype.
  return scale_in_fp32_ ? (normed * weight_).to(x.scalar_type()) : weight_ * normed.to(x.scalar_type());
}

GatedProjections GatedProjections::load(WeightMap& w, const std::string& p, const Shape& s) {
  const int64_t q_dim = s.heads * s.head_dim, kv_dim = s.kv_heads * s.head_dim;
  return GatedProjections{
      RmsNorm::load(w, p + "self_attn.q_norm", s.head_dim, s.eps, s.one_plus_norm),
      RmsNorm::load(w, p + "self_attn.k_norm", s.head_dim, s.eps, s.one_plus_norm),
      FusedLinear::load(w, {p + "self_attn.q_proj", p + "self_attn.k_proj", p + "self_attn.v_proj"}, s.hidden,
                        {q_dim, kv_dim, kv_dim}, s.attention_bias),
      Linear::load(w, p + "self_attn.o_proj", q_dim, s.hidden, s.output_bias),
      FusedLinear::load(w, {p + "mlp.gate_proj", p + "mlp.up_proj"}, s.hidden, {s.intermediate, s.intermediate}, false),
      Linear::load(w, p + "mlp.down_proj", s.intermediate, s.hidden, false),
  };
}

at::Tensor GatedProjections::mlp(Activation activation, const at::Tensor& x, const LinearDeltas* deltas) const {
  const auto gate_and_up = gate_up(x, deltas);
  return down(gated_activation_rows(activation, gate_and_up[0], gate_and_up[1]), deltas);
}

Activation parse_activation(const std::string& name) {
  if (name == "gelu") return Activation::kGeluErf;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::kGeluTanh;
  if (name == "relu") return Activation::kRelu;
  if (name == "silu" || name == "swish") return Activation::kSilu;
  throw Unsupported("activation '" + name + "' is not supported");
}

namespace {

// T: float, or a vector type (V below).
template <typename T>
inline T apply(Activation activation, T x) {
  switch (activation) {
    case Activation::kGeluErf: return vec::gelu_erf(x);
    case Activation::kGeluTanh: return vec::gelu_tanh(x);
    case Activation::kRelu: return x > 0.0f ? x : T{};
    case Activation::kSilu: return vec::silu(x);
  }
  return x;
}

// y[j] = act(x[j]) (· gate[j]) for j in [0, n): V's lanes at a time (Floats8
// or Floats16), the tail one by one, in one pass. GCC left the float loop
// scalar under AVX2 (its exp), where this made a 16-token int8 forward 13 %
// faster.
template <typename V, Activation kActivation>
inline void activate_row(const float* x, const float* gate, float* y, int64_t n) {
  constexpr int64_t kWidth = sizeof(V) / sizeof(float);
  int64_t j = 0;
  for (; j + kWidth <= n; j += kWidth) {
    const V a = apply(kActivation, vec::load<V>(x + j));
    vec::store(y + j, gate != nullptr ? a * vec::load<V>(gate + j) : a);
  }
  for (; j < n; ++j) y[j] = gate != nullptr ? apply(kActivation, x[j]) * gate[j] : apply(kActivation, x[j]);
}

// out[r] = act(in[r]) (· gate[r]) for `rows` rows of `cols` floats; one
// switch per row.
template <typename V>
inline void activate_rows_body(Activation activation, const float* in, int64_t in_stride, const float* gate,
                               int64_t gate_stride, float* out, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = in + r * in_stride;
    const float* g = gate != nullptr ? gate + r * gate_stride : nullptr;
    float* y = out + r * cols;
    switch (activation) {
      case Activation::kGeluErf: activate_row<V, Activation::kGeluErf>(x, g, y, cols); break;
      case Activation::kGeluTanh: activate_row<V, Activation::kGeluTanh>(x, g, y, cols); break;
      case Activation::kRelu: activate_row<V, Activation::kRelu>(x, g, y, cols); break;
      case Activation::kSilu: activate_row<V, Activation::kSilu>(x, g, y, cols); break;
    }
  }
}
SEMROUTE_ISA_DISPATCH_VECTOR(void, activate_rows, activate_rows_body,
                             (Activation activation, const float* in, int64_t in_stride, const float* gate,
                              int64_t gate_stride, float* out, int64_t rows, int64_t cols),
                             (activation, in, in_stride, gate, gate_stride, out, rows, cols))

// Rows of a float CPU tensor whose last dimension is contiguous: the fused path.
bool fusable(const at::Tensor& x) {
  return x.defined() && x.device().is_cpu() && x.scalar_type() == at::kFloat && x.dim() == 2 && x.stride(1) == 1;
}

// bf16 rows on the CPU run through the fp32 kernel and are rounded once:
// closer to the exact value than libtorch's bf16 ops, and independent of
// their oneDNN path, which exists only on AVX-512 hosts.
bool widenable(const at::Tensor& x) {
  return x.defined() && x.device().is_cpu() && x.scalar_type() == at::kBFloat16 && x.dim() == 2;
}

at::Tensor eager_activate(Activation activation, const at::Tensor& x) {
  switch (activation) {
    case Activation::kGeluErf: return at::gelu(x);
    case Activation::kGeluTanh: return at::gelu(x, "tanh");
    case Activation::kRelu: return at::relu(x);
    case Activation::kSilu: return at::silu(x);
  }
  throw InternalError("unhandled activation");
}

// act(x) (· gate) over fusable rows, as an input made on demand.
GemmInput activation_rows(Activation activation, const at::Tensor& x, const at::Tensor& gate) {
  const float* in = x.data_ptr<float>();
  const float* g = gate.defined() ? gate.data_ptr<float>() : nullptr;
  const int64_t in_stride = x.stride(0), gate_stride = gate.defined() ? gate.stride(0) : 0, cols = x.size(1);
  return GemmInput(x.size(0), cols, [x, gate, activation, in, g, in_stride, gate_stride, cols](int64_t begin, int64_t end,
                                                                                            float* out) {
    activate_rows(activation, in + begin * in_stride, in_stride, g == nullptr ? nullptr : g + begin * gate_stride,
                  gate_stride, out, end - begin, cols);
  });
}

at::Tensor activate_fused(Activation activation, const at::Tensor& x, const at::Tensor& gate) {
  return activation_rows(activation, x, gate).materialize();
}

}  // namespace

at::Tensor activate(Activation activation, const at::Tensor& x) {
  if (fusable(x)) return activate_fused(activation, x, at::Tensor());
  if (widenable(x)) return activate_fused(activation, x.to(at::kFloat), at::Tensor()).to(x.scalar_type());
  return eager_activate(activation, x);
}

at::Tensor gated_activation(Activation activation, const at::Tensor& input, const at::Tensor& gate) {
  if (fusable(input) && fusable(gate) && input.sizes() == gate.sizes()) return activate_fused(activation, input, gate);
  if (widenable(input) && widenable(gate) && input.sizes() == gate.sizes())
    return activate_fused(activation, input.to(at::kFloat), gate.to(at::kFloat)).to(input.scalar_type());
  return eager_activate(activation, input) * gate;
}

bool gated_activation_fuses(const at::Tensor& input, const at::Tensor& gate) {
  return fusable(input) && fusable(gate) && input.sizes() == gate.sizes();
}

GemmInput gated_activation_rows(Activation activation, const at::Tensor& input, const at::Tensor& gate) {
  if (gated_activation_fuses(input, gate)) return activation_rows(activation, input, gate);
  return GemmInput(gated_activation(activation, input, gate));
}

}  // namespace semroute
