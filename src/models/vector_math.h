// Scalar float functions written so that loops calling them vectorize
// (no branches, no libcalls), for the CPU kernels. They need the default
// floating-point model: -ffast-math would fold the rounding trick away.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/cpu_features.h"

// Defines `void name params` from one body compiled three times, for AVX-512,
// AVX2 + FMA and the baseline; the first call picks the variant from
// cpu_features(), so SEMROUTE_MAX_CPU_ISA can hold a wide host to the narrow
// paths (target_clones would choose at load, past any switch, and its ifunc
// resolvers crash under ThreadSanitizer). `body` is an inline function taking
// `args`. `flatten` inlines the body (and what it calls) into each variant:
// left to itself the compiler kept a large body out of line, compiled for the
// baseline only (GeGLU ran unvectorized, a quarter of a long int8 forward).
#define SEMROUTE_ISA_DISPATCH(name, body, params, args)                                                     \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"), flatten)) void name##_avx512 params { \
    body args;                                                                                               \
  }                                                                                                          \
  __attribute__((target("avx2,fma"), flatten)) void name##_avx2 params { body args; }                        \
  void name##_baseline params { body args; }                                                                 \
  void name params {                                                                                \
    using Variant = void(*) params;                                                                 \
    static const Variant variant = ::semroute::cpu_features().avx512 ? name##_avx512                \
                                   : ::semroute::cpu_features().avx2 ? name##_avx2                  \
                                                                     : name##_baseline;             \
    variant args;                                                                                   \
  }

namespace semroute::vec {

// exp(x) for x <= 0 to ~2 ulp: 2^n · p(r), n = round(x / ln 2), r = x − n·ln 2.
inline float exp_nonpositive(float x) {
  x = x < -87.0f ? -87.0f : x;
  // Round to nearest by adding and removing 1.5 · 2^23.
  const float n = (x * 1.44269504f + 12582912.0f) - 12582912.0f;
  const float r = (x - n * 0.693145752f) - n * 1.42860677e-6f;
  float p = 1.98756912e-4f;
  p = p * r + 1.39819994e-3f;
  p = p * r + 8.33345205e-3f;
  p = p * r + 4.16657962e-2f;
  p = p * r + 1.66666657e-1f;
  p = p * r + 5.0e-1f;
  p = p * r * r + r + 1.0f;
  // n is in [-126, 0] for every x <= 0; the clamp only keeps a NaN or an
  // infinity (from broken weights) from an undefined conversion: the NaN
  // still reaches the result through p.
  const float k = n > 0.0f ? 0.0f : (n >= -126.0f ? n : -126.0f);
  const int32_t bits = (static_cast<int32_t>(k) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

inline float absolute(float x) { return x < 0 ? -x : x; }
inline float copy_sign(float magnitude, float sign) { return sign < 0 ? -magnitude : magnitude; }

// erf to ~1.5e-7 absolute (Abramowitz & Stegun 7.1.26).
inline float erf(float x) {
  const float a = absolute(x), t = 1.0f / (1.0f + 0.3275911f * a);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  return copy_sign(1.0f - p * t * exp_nonpositive(-a * a), x);
}

// tanh through e = exp(−2|x|) ≤ 1: tanh|x| = (1 − e) / (1 + e).
inline float tanh(float x) {
  const float e = exp_nonpositive(-2.0f * absolute(x));
  return copy_sign((1.0f - e) / (1.0f + e), x);
}

// x · sigmoid(x), with the exponent kept non-positive on both sides.
inline float silu(float x) {
  const float e = exp_nonpositive(-absolute(x));
  return x < 0 ? x * e / (1.0f + e) : x / (1.0f + e);
}

// Reductions over n floats with kLanes partial results, so they vectorize
// without -ffast-math (which would reorder every float sum in a file).
constexpr int64_t kLanes = 16;

inline float max(const float* x, int64_t n) {
  float lanes[kLanes];
  for (int64_t l = 0; l < kLanes; ++l) lanes[l] = -3.402823466e38f;
  const int64_t whole = n / kLanes * kLanes;
  for (int64_t j = 0; j < whole; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] = lanes[l] > x[j + l] ? lanes[l] : x[j + l];
  for (int64_t j = whole; j < n; ++j) lanes[0] = lanes[0] > x[j] ? lanes[0] : x[j];
  float best = lanes[0];
  for (int64_t l = 1; l < kLanes; ++l) best = best > lanes[l] ? best : lanes[l];
  return best;
}

// The smallest and largest of 0 and x[0..n), and whether every x is finite
// (a NaN or an infinity makes x · 0 NaN).
inline void range_with_zero(const float* x, int64_t n, float* lo, float* hi, bool* finite) {
  float low[kLanes] = {}, high[kLanes] = {}, probe[kLanes] = {};
  const int64_t whole = n / kLanes * kLanes;
  for (int64_t j = 0; j < whole; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) {
      low[l] = x[j + l] < low[l] ? x[j + l] : low[l];
      high[l] = x[j + l] > high[l] ? x[j + l] : high[l];
      probe[l] += x[j + l] * 0.0f;
    }
  for (int64_t j = whole; j < n; ++j) {
    low[0] = x[j] < low[0] ? x[j] : low[0];
    high[0] = x[j] > high[0] ? x[j] : high[0];
    probe[0] += x[j] * 0.0f;
  }
  float total = 0;
  *lo = low[0], *hi = high[0];
  for (int64_t l = 0; l < kLanes; ++l) {
    *lo = low[l] < *lo ? low[l] : *lo;
    *hi = high[l] > *hi ? high[l] : *hi;
    total += probe[l];
  }
  *finite = total == 0.0f;
}

// Σ (x[j] − center)² when `squares`, else Σ x[j].
inline float sum(const float* x, int64_t n, bool squares = false, float center = 0.0f) {
  float lanes[kLanes] = {};
  const int64_t whole = n / kLanes * kLanes;
  for (int64_t j = 0; j < whole; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lanes[l] += squares ? (x[j + l] - center) * (x[j + l] - center) : x[j + l];
  for (int64_t j = whole; j < n; ++j) lanes[0] += squares ? (x[j] - center) * (x[j] - center) : x[j];
  float total = 0;
  for (int64_t l = 0; l < kLanes; ++l) total += lanes[l];
  return total;
}

inline float gelu_erf(float x) { return 0.5f * x * (1.0f + erf(x * 0.70710678f)); }

inline float gelu_tanh(float x) {
  return 0.5f * x * (1.0f + tanh(0.79788456f * (x + 0.044715f * x * x * x)));
}

}  // namespace semroute::vec
