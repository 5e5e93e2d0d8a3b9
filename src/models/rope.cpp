#include "models/rope.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/outer.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/sin.h>

#include <cmath>

#include "models/vector_math.h"
#include "semroute/error.h"

namespace semroute {
namespace {

at::Tensor default_inv_freq(double theta, int64_t dim) {
  const at::Tensor exponents = at::arange(0, dim, 2, at::kLong).to(at::kFloat) / static_cast<double>(dim);
  return 1.0 / at::pow(theta, exponents);
}

double yarn_mscale(double scale, double k = 1.0) { return scale <= 1.0 ? 1.0 : 0.1 * k * std::log(scale) + 1.0; }

// One step of rotate_rows: the pairs (i, i + half) of V's lanes from i on.
template <typename V>
inline void rotate_pairs(const float* x, const float* c, const float* s, float* o, int64_t i, int64_t half) {
  const V a = vec::load<V>(x + i), b = vec::load<V>(x + i + half);  // both read before either is written
  vec::store(o + i, a * vec::load<V>(c + i) - b * vec::load<V>(s + i));
  vec::store(o + i + half, b * vec::load<V>(c + i + half) + a * vec::load<V>(s + i + half));
}

template <typename V>
inline void rotate_rows_body(const float* x, int64_t stride, int64_t rows, int64_t first, const float* cos,
                             const float* sin, int64_t dim, int64_t heads, float* out, int64_t out_stride) {
  constexpr int64_t kLanes = sizeof(V) / sizeof(float);
  const int64_t half = dim / 2, vectors = half / kLanes * kLanes;
  for (int64_t r = 0; r < rows; ++r) {
    const float *c = cos + (first + r) * dim, *s = sin + (first + r) * dim;
    for (int64_t h = 0; h < heads; ++h) {
      const float* xh = x + r * stride + h * dim;
      float* oh = out + r * out_stride + h * dim;
      int64_t i = 0;
      for (; i < vectors; i += kLanes) rotate_pairs<V>(xh, c, s, oh, i, half);
      for (; i < half; ++i) rotate_pairs<float>(xh, c, s, oh, i, half);
    }
  }
}

// YaRN (Peng et al.): high-frequency dimensions keep their original
// frequency, low-frequency ones are interpolated by the factor, with a
// linear ramp between, and cos/sin scaled by an attention factor.
at::Tensor yarn_inv_freq(const RopeScaling& s, double theta, int64_t dim, int64_t max_positions, double* attention) {
  const double factor = s.factor;
  const double original = static_cast<double>(s.original_max_position_embeddings.value_or(max_positions));
  if (s.attention_factor) {
    *attention = *s.attention_factor;
  } else if (s.mscale && s.mscale_all_dim && *s.mscale != 0 && *s.mscale_all_dim != 0) {
    *attention = yarn_mscale(factor, *s.mscale) / yarn_mscale(factor, *s.mscale_all_dim);
  } else {
    *attention = yarn_mscale(factor);
  }
  const auto correction_dim = [&](double rotations) {
    return (dim * std::log(original / (rotations * 2 * M_PI))) / (2 * std::log(theta));
  };
  double low = correction_dim(s.beta_fast), high = correction_dim(s.beta_slow);
  if (s.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dim - 1));
  if (low == high) high += 0.001;

  const at::Tensor extrapolation = default_inv_freq(theta, dim);
  const at::Tensor interpolation = extrapolation / factor;
  const at::Tensor ramp = at::clamp((at::arange(dim / 2, at::kFloat) - low) / (high - low), 0, 1);
  const at::Tensor keep = 1.0 - ramp;  // weight of the original frequency
  return interpolation * (1.0 - keep) + extrapolation * keep;
}

}  // namespace

SEMROUTE_ISA_DISPATCH_VECTOR(void, rotate_rows, rotate_rows_body,
                             (const float* x, int64_t stride, int64_t rows, int64_t first, const float* cos,
                              const float* sin, int64_t dim, int64_t heads, float* out, int64_t out_stride),
                             (x, stride, rows, first, cos, sin, dim, heads, out, out_stride))

RotaryEmbedding::RotaryEmbedding(const RopeParams& params, int64_t head_dim, int64_t max_position_embeddings) {
  // Rotary embeddings turn pairs of a head's dimensions: an odd width has a lone one.
  if (head_dim <= 0 || head_dim % 2 != 0)
    throw LoadError("head_dim " + std::to_string(head_dim) + " under rotary position embeddings: it must be even");
  const RopeScaling& s = params.scaling;
  if (s.type == "default") {
    inv_freq_ = default_inv_freq(params.theta, head_dim);
  } else if (s.type == "linear") {
    inv_freq_ = default_inv_freq(params.theta, head_dim) / s.factor;
  } else if (s.type == "yarn") {
    inv_freq_ = yarn_inv_freq(s, params.theta, head_dim, max_position_embeddings, &attention_scaling_);
  } else {
    throw Unsupported("rope_scaling type '" + s.type + "' is not supported (default, linear and yarn are)");
  }
}

std::pair<at::Tensor, at::Tensor> RotaryEmbedding::cos_sin(int64_t length, c10::ScalarType dtype,
                                                           c10::Device device) const {
  const at::Tensor freqs = at::outer(at::arange(length, at::kFloat), inv_freq_);
  const at::Tensor angles = at::cat({freqs, freqs}, -1);
  at::Tensor cos = at::cos(angles), sin = at::sin(angles);
  if (attention_scaling_ != 1.0) {
    cos = cos * attention_scaling_;
    sin = sin * attention_scaling_;
  }
  return {cos.to(device, dtype), sin.to(device, dtype)};
}

at::Tensor RotaryEmbedding::apply(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  const at::Tensor rotated = at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * cos + rotated * sin;
}

}  // namespace semroute
