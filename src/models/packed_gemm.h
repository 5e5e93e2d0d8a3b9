// y = x · Wᵀ + b on the CPU with the weight reordered once, at load, into
// oneDNN's blocked layout. Unlike BLAS (which repacks W on every call), the
// packed weight keeps short inputs (16-64 tokens, the router's common case)
// near the machine's peak, and bf16 weights run on AMX / AVX-512 BF16 where
// the CPU has them. Where it has no bf16 GEMM (AVX2), bf16 weights are
// widened to fp32 at load and outputs rounded back: libtorch's emulated bf16
// GEMM is slower than fp32.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>

namespace semroute {

class PackedGemm {
 public:
  // Packs `weight` [out, in] (and `bias` [out], optional). Returns null when
  // this weight cannot be packed here (not on the CPU, a dtype other than
  // float32 / bfloat16, or oneDNN refuses the shape): the caller keeps the
  // dense weight then.
  static std::unique_ptr<PackedGemm> pack(const at::Tensor& weight, const at::Tensor& bias);
  ~PackedGemm();

  // x [..., in] in the weight's dtype -> [..., out]. Safe to call from many
  // threads at once: the packed weight is read-only.
  at::Tensor operator()(const at::Tensor& x) const;
  int64_t in_features() const;
  int64_t out_features() const;
  // The dtype the product is computed in (float32 for bf16 weights on a CPU
  // without a bf16 GEMM).
  c10::ScalarType compute_dtype() const;

  // Whether bf16 weights run as bf16 GEMMs here (AVX-512 and oneDNN allowed
  // to use it); else they are widened to fp32.
  static bool native_bf16();

  // Whether the weights of this process are packed (SEMROUTE_PACKED_GEMM=0
  // turns packing off, for comparisons).
  static bool enabled();

 private:
  struct State;
  explicit PackedGemm(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace semroute
