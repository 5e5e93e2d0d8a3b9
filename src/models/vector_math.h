// Scalar float functions written so that loops calling them vectorize
// (no branches, no libcalls), for the CPU kernels. They need the default
// floating-point model: -ffast-math would fold the rounding trick away.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/cpu_features.h"

// Defines `void name params` (`type name params`: ..._RETURNING) from one
// body compiled three times, for AVX-512, AVX2 + FMA and the baseline; the
// first call picks the variant from
// cpu_features(), so SEMROUTE_MAX_CPU_ISA can hold a wide host to the narrow
// paths (target_clones would choose at load, past any switch, and its ifunc
// resolvers crash under ThreadSanitizer). `body` is an inline function taking
// `args`. `flatten` inlines the body (and what it calls) into each variant:
// left to itself the compiler kept a large body out of line, compiled for the
// baseline only (GeGLU ran unvectorized, a quarter of a long int8 forward).
#define SEMROUTE_ISA_DISPATCH_EACH(type, name, body512, body2, body0, params, args)                  \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"), flatten)) type name##_avx512 params { \
    return body512 args;                                                                              \
  }                                                                                                   \
  __attribute__((target("avx2,fma"), flatten)) type name##_avx2 params { return body2 args; }        \
  type name##_baseline params { return body0 args; }                                                  \
  type name params {                                                                                  \
    using Variant = type(*) params;                                                                   \
    static const Variant variant = ::semroute::cpu_features().avx512 ? name##_avx512                  \
                                   : ::semroute::cpu_features().avx2 ? name##_avx2                    \
                                                                     : name##_baseline;               \
    return variant args;                                                                              \
  }
#define SEMROUTE_ISA_DISPATCH_RETURNING(type, name, body, params, args) \
  SEMROUTE_ISA_DISPATCH_EACH(type, name, body, body, body, params, args)
#define SEMROUTE_ISA_DISPATCH(name, body, params, args) SEMROUTE_ISA_DISPATCH_RETURNING(void, name, body, params, args)
// `body` a template on the vector type: Floats16 for AVX-512, Floats8 else.
#define SEMROUTE_ISA_DISPATCH_VECTOR(type, name, body, params, args)                                     \
  SEMROUTE_ISA_DISPATCH_EACH(type, name, body<::semroute::vec::Floats16>, body<::semroute::vec::Floats8>, \
                             body<::semroute::vec::Floats8>, params, args)

namespace semroute::vec {

// Vectors of 8 and 16 floats (GCC vector extensions) for loops GCC leaves
// scalar: a reduction through a select (max), exp under AVX2. Floats8 is one
// register on AVX2, Floats16 on AVX-512 (GCC 12 lowers a vector wider than
// the target's registers to scalars); SEMROUTE_ISA_DISPATCH_VECTOR hands each
// variant its own. They are inlined into each variant, so GCC's note that the
// baseline would pass them differently (-Wpsabi, off for the models layer)
// never applies.
using Floats8 = float __attribute__((vector_size(32)));
using Ints8 = int32_t __attribute__((vector_size(32)));
using Floats16 = float __attribute__((vector_size(64)));
using Ints16 = int32_t __attribute__((vector_size(64)));
using Bits8 = uint32_t __attribute__((vector_size(32)));
using Bits16 = uint32_t __attribute__((vector_size(64)));
using Floats4 = float __attribute__((vector_size(16)));
using Halves8 = uint16_t __attribute__((vector_size(16)));
using Halves16 = uint16_t __attribute__((vector_size(32)));

template <typename V>
inline V load(const float* x) {
  V v;
  std::memcpy(&v, x, sizeof v);
  return v;
}
template <typename V>
inline void store(float* x, V v) {
  std::memcpy(x, &v, sizeof v);
}

// 2^k for whole k in [-126, 0].
inline float pow2(float k) {
  const int32_t bits = (static_cast<int32_t>(k) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return scale;
}
template <typename V, typename I = std::conditional_t<sizeof(V) == 32, Ints8, Ints16>>
inline V pow2(V k) {
  const I bits = (__builtin_convertvector(k, I) + 127) << 23;
  V scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return scale;
}

// exp(x) for x <= 0 as 2^n · p(r), n = round(x / ln 2), r = x − n·ln 2, with
// `poly` giving p ≈ e^r on [−ln 2 / 2, ln 2 / 2]. T: float, Floats8 or Floats16.
template <typename T, typename Poly>
inline T exp_reduced(T x, Poly poly) {
  x = x < -87.0f ? T{} - 87.0f : x;
  // Round to nearest by adding and removing 1.5 · 2^23.
  const T n = (x * 1.44269504f + 12582912.0f) - 12582912.0f;
  const T r = (x - n * 0.693145752f) - n * 1.42860677e-6f;
  // n is in [-126, 0] for every x <= 0; the clamp only keeps a NaN or an
  // infinity (from broken weights) from an undefined conversion: the NaN
  // still reaches the result through p.
  const T k = n > 0.0f ? T{} : (n >= -126.0f ? n : T{} - 126.0f);
  return poly(r) * pow2(k);
}

// exp(x) for x <= 0 to ~2 ulp.
template <typename T>
inline T exp_nonpositive(T x) {
  return exp_reduced(x, [](T r) {
    T p = T{} + 1.98756912e-4f;
    p = p * r + 1.39819994e-3f;
    p = p * r + 8.33345205e-3f;
    p = p * r + 4.16657962e-2f;
    p = p * r + 1.66666657e-1f;
    p = p * r + 5.0e-1f;
    return p * r * r + r + 1.0f;
  });
}

// exp(x) for x <= 0 to 7.5e-5 relative (a degree-3 minimax polynomial):
// for values rounded to bf16 next, whose rounding (up to 2e-3) stays far
// above it.
template <typename T>
inline T exp_nonpositive_for_bf16(T x) {
  return exp_reduced(x, [](T r) {
    T p = T{} + 0.165668428f;
    p = p * r + 0.504963279f;
    p = p * r + 1.00016415f;
    return p * r + 0.999928057f;
  });
}

// The bf16 nearest v (ties to even), as bits; a NaN stays a NaN.
inline uint16_t bf16_bits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return v != v ? uint16_t{0x7FC0} : static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}
template <typename V, typename Bits = std::conditional_t<sizeof(V) == 32, Bits8, Bits16>,
          typename Halves = std::conditional_t<sizeof(V) == 32, Halves8, Halves16>>
inline void store_bf16(uint16_t* out, V v) {
  Bits bits;
  std::memcpy(&bits, &v, sizeof bits);
  bits = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
  bits = v != v ? Bits{} + 0x7FC0u : bits;
  const Halves halves = __builtin_convertvector(bits, Halves);
  std::memcpy(out, &halves, sizeof halves);
}

// store_bf16 by the CPU's own conversion (AVX-512 BF16's vcvtneps2bf16, one
// instruction for the eight above): the same bits for every normal value
// and zero; a NaN stays a NaN (payload aside), a denormal becomes zero. For
// callers compiled for AVX-512 BF16, on CPUs that have it (v by reference:
// a call from code compiled without AVX-512 passes a vector by value on the
// stack, where this expects a register).
__attribute__((target("avx512f,avx512bf16"))) inline void store_bf16_native(uint16_t* out, const Floats16& v) {
  __m512 x;
  std::memcpy(&x, &v, sizeof x);
  const __m256bh halves = _mm512_cvtneps_pbh(x);
  std::memcpy(out, &halves, sizeof halves);
}

// exp_nonpositive_for_bf16 on AVX-512's own rounding and scaling
// (vrndscaleps, vscalefps; their maskz forms, as the plain ones trip GCC 12's
// uninitialized warnings, bug 105593): 2^n · p(r) without the integer
// exponent arithmetic and its clamps, 10 instructions for 16 values where the
// portable form compiles to 21. The same clamp at -87, n, r and p, and 2^n · p
// exact either way; a NaN stays NaN. For callers compiled for AVX-512
// (arguments by reference, as store_bf16_native's).
__attribute__((target("avx512f"))) inline void exp_nonpositive_for_bf16_native(const Floats16& in, Floats16* out) {
  __m512 x;
  std::memcpy(&x, &in, sizeof x);
  x = _mm512_maskz_max_ps(0xFFFF, _mm512_set1_ps(-87.0f), x);  // max keeps its second operand's NaN
  const __m512 n = _mm512_maskz_roundscale_ps(0xFFFF, _mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145752f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.42860677e-6f), r);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(0.165668428f), r, _mm512_set1_ps(0.504963279f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.00016415f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.999928057f));
  const __m512 e = _mm512_maskz_scalef_ps(0xFFFF, p, n);
  std::memcpy(out, &e, sizeof e);
}

// The activations below take T: float, Floats8 or Floats16 (the vector
// types under AVX2, where GCC leaves the float forms' loops scalar).
template <typename T>
inline T absolute(T x) {
  return x < 0.0f ? -x : x;
}
template <typename T>
inline T copy_sign(T magnitude, T sign) {
  return sign < 0.0f ? -magnitude : magnitude;
}

// erf to ~1.5e-7 absolute (Abramowitz & Stegun 7.1.26).
template <typename T>
inline T erf(T x) {
  const T a = absolute(x), t = 1.0f / (1.0f + 0.3275911f * a);
  T p = T{} + 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  return copy_sign(1.0f - p * t * exp_nonpositive(-a * a), x);
}

// tanh through e = exp(−2|x|) ≤ 1: tanh|x| = (1 − e) / (1 + e).
template <typename T>
inline T tanh(T x) {
  const T e = exp_nonpositive(-2.0f * absolute(x));
  return copy_sign((1.0f - e) / (1.0f + e), x);
}

// x · sigmoid(x), with the exponent kept non-positive on both sides.
template <typename T>
inline T silu(T x) {
  const T e = exp_nonpositive(-absolute(x));
  return x < 0.0f ? x * e / (1.0f + e) : x / (1.0f + e);
}

// Reductions over n floats with kLanes partial results, so they vectorize
// without -ffast-math (which would reorder every float sum in a file).
constexpr int64_t kLanes = 16;

// op over the lanes of v (Floats4, Floats8 or Floats16) by halves: log2 of
// the lanes dependent steps, where a lane-by-lane loop is a chain of them
// all (softmax rows of 16 keys spent most of their time in such chains).
template <typename V, typename Op>
inline float fold_lanes(V v, Op op) {
  if constexpr (sizeof(V) == 16) {
    return op(op(v[0], v[1]), op(v[2], v[3]));
  } else {
    using Half = std::conditional_t<sizeof(V) == 64, Floats8, Floats4>;
    Half low, high;
    std::memcpy(&low, &v, sizeof low);
    std::memcpy(&high, reinterpret_cast<const char*>(&v) + sizeof low, sizeof high);
    return fold_lanes(op(low, high), op);
  }
}
template <typename V>
inline float lane_sum(V v) {
  return fold_lanes(v, [](auto a, auto b) { return a + b; });
}
template <typename V>
inline float lane_max(V v) {
  return fold_lanes(v, [](auto a, auto b) { return a > b ? a : b; });
}
template <typename V>
inline float lane_min(V v) {
  return fold_lanes(v, [](auto a, auto b) { return a < b ? a : b; });
}

// V: Floats8 or Floats16.
template <typename V>
inline float max(const float* x, int64_t n) {
  constexpr int64_t kWidth = sizeof(V) / sizeof(float), kStep = 4 * kWidth;
  constexpr float kLowest = -3.402823466e38f;
  V m[4] = {V{} + kLowest, V{} + kLowest, V{} + kLowest, V{} + kLowest};
  const int64_t steps = n / kStep * kStep, whole = n / kWidth * kWidth;
  for (int64_t j = 0; j < steps; j += kStep)
    for (int64_t a = 0; a < 4; ++a) {
      const V v = load<V>(x + j + kWidth * a);
      m[a] = m[a] > v ? m[a] : v;
    }
  for (int64_t j = steps; j < whole; j += kWidth) {
    const V v = load<V>(x + j);
    m[0] = m[0] > v ? m[0] : v;
  }
  m[0] = m[0] > m[1] ? m[0] : m[1];
  m[2] = m[2] > m[3] ? m[2] : m[3];
  float best = lane_max(m[0] > m[2] ? m[0] : m[2]);
  for (int64_t j = whole; j < n; ++j) best = best > x[j] ? best : x[j];
  return best;
}

// out(j, e) for each e = exp(x[j] − shift), x[j] <= shift, computed by
// `exp` (on a V of the lanes from j, or on one float in the tail); returns
// the sum of the e.
template <typename V, typename Exp, typename Out>
inline float exp_each_and_sum(const float* x, int64_t n, float shift, Exp exp, Out out) {
  constexpr int64_t kWidth = sizeof(V) / sizeof(float);
  V total{};
  const int64_t whole = n / kWidth * kWidth;
  for (int64_t j = 0; j < whole; j += kWidth) {
    const V e = exp(load<V>(x + j) - shift);
    out(j, e);
    total += e;
  }
  float sum = lane_sum(total);
  for (int64_t j = whole; j < n; ++j) {
    const float e = exp(x[j] - shift);
    out(j, e);
    sum += e;
  }
  return sum;
}

// x[j] = exp(x[j] − shift) for x[j] <= shift; returns their sum. V: Floats8
// or Floats16.
template <typename V>
inline float exp_and_sum(float* x, int64_t n, float shift) {
  return exp_each_and_sum<V>(
      x, n, shift, [](auto v) { return exp_nonpositive(v); },
      [x](int64_t j, auto e) {
        if constexpr (std::is_same_v<decltype(e), float>) x[j] = e;
        else store(x + j, e);
      });
}

// out[j] = bf16(exp(x[j] − shift)) for x[j] <= shift, by
// exp_nonpositive_for_bf16; returns the sum of the exps before rounding. V:
// Floats8 or Floats16; kNative (Floats16 only, in code compiled for AVX-512
// BF16): by exp_nonpositive_for_bf16_native, rounded by store_bf16_native.
template <typename V, bool kNative = false>
inline float exp_and_sum_to_bf16(const float* x, int64_t n, float shift, uint16_t* out) {
  return exp_each_and_sum<V>(
      x, n, shift,
      [](auto v) {
        if constexpr (kNative && !std::is_same_v<decltype(v), float>) {
          V e;
          exp_nonpositive_for_bf16_native(v, &e);
          return e;
        } else {
          return exp_nonpositive_for_bf16(v);
        }
      },
      [out](int64_t j, auto e) {
        if constexpr (std::is_same_v<decltype(e), float>) out[j] = bf16_bits(e);
        else if constexpr (kNative) store_bf16_native(out + j, e);
        else store_bf16(out + j, e);
      });
}

// The smallest and largest of 0 and x[0..n), and whether every x is finite
// (a NaN or an infinity makes x · 0 NaN). V: Floats8 or Floats16 (the lane
// arrays of `sum` below stayed scalar here: three of them spill).
template <typename V>
inline void range_with_zero(const float* x, int64_t n, float* lo, float* hi, bool* finite) {
  constexpr int64_t kWidth = sizeof(V) / sizeof(float);
  V low{}, high{}, probe{};
  const int64_t whole = n / kWidth * kWidth;
  for (int64_t j = 0; j < whole; j += kWidth) {
    const V v = load<V>(x + j);
    low = v < low ? v : low;
    high = v > high ? v : high;
    probe += v * 0.0f;
  }
  float least = lane_min(low), most = lane_max(high), total = lane_sum(probe);  // lanes start at 0
  for (int64_t j = whole; j < n; ++j) {
    least = x[j] < least ? x[j] : least;
    most = x[j] > most ? x[j] : most;
    total += x[j] * 0.0f;
  }
  *lo = least, *hi = most, *finite = total == 0.0f;
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

template <typename T>
inline T gelu_erf(T x) {
  return 0.5f * x * (1.0f + erf(x * 0.70710678f));
}

template <typename T>
inline T gelu_tanh(T x) {
  return 0.5f * x * (1.0f + tanh(0.79788456f * (x + 0.044715f * x * x * x)));
}

}  // namespace semroute::vec
