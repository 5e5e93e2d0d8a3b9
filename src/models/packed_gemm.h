// y = x · Wᵀ + b on the CPU with the weight reordered once, at load, into
// the layout the GEMM reads. Unlike BLAS (which repacks W on every call), the
// packed weight keeps short inputs (16-64 tokens, the router's common case)
// near the machine's peak.
//
// fp32 runs on our kernel (kernels/f32_gemm.h) or oneDNN's packed GEMM,
// whichever measures faster for the shape at load (below; our kernel in a
// sanitizer's build, where a timing measures the instrumentation). bf16
// weights run on oneDNN, on AMX / AVX-512 BF16 where the CPU has them;
// elsewhere they are widened to fp32 at load and outputs rounded back: an
// emulated bf16 GEMM is slower than fp32.
//
// int8 (dynamic quantization): the weight is quantized per output channel
// (symmetric, 127 levels) and packed at load; at run time each input row is
// quantized with its own scale and zero point, the product runs as a u8 x s8
// GEMM on our kernel (kernels/int8_gemm.h: VNNI, AVX-512, AVX2) or oneDNN's,
// its epilogue scaling back to fp32.
//
// Engine choice: the first weight of each shape is timed on both engines
// (16 and 256 rows, one thread's CPU time); oneDNN takes the shape only when
// our kernel's worst slowdown against it clearly exceeds its own against
// ours (SEMROUTE_F32_GEMM / SEMROUTE_INT8_GEMM = own | onednn pins one). Our
// kernels and oneDNN's int8 product answer the same whatever the calling
// thread's team size; oneDNN's fp32 and bf16 ones may differ in the last bits.
//
// The matmul primitives are made at load for a ladder of row counts (rows
// are padded up to the next rung), so the first call at a new length costs
// what later ones do and the number of primitives is bounded; layers of the
// same shape share them.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <optional>

#include "models/parallel_chunks.h"

namespace semroute {

// A GEMM input [rows, width] of float32: a tensor, or the pass that makes it
// (a norm, a gated activation). Given the pass, the int8 product quantizes a
// few rows at a time as they are made, while they are in cache: one parallel
// pass instead of two, and no float tensor written and read back. The other
// products make the whole tensor first.
struct GemmInput {
  using Make = std::function<void(int64_t begin, int64_t end, float* out)>;  // rows [begin, end), `width` apart

  explicit GemmInput(at::Tensor tensor) : tensor(std::move(tensor)) {}
  GemmInput(int64_t rows, int64_t width, Make make) : rows(rows), width(width), make(std::move(make)) {}
  bool made() const { return !tensor.defined(); }
  // The input as a tensor: [rows, width] for a made one, made in parallel.
  at::Tensor materialize() const;

  at::Tensor tensor;
  int64_t rows = 0, width = 0;
  Make make;
};

// Work on a product's output where a panel of it has just been written, on
// the thread that wrote it, while it is in cache: rows [row, row + rows),
// columns [column, column + width) of y (a whole panel, or the last one's
// valid columns).
using PanelFinish = std::function<void(int64_t row, int64_t rows, int64_t column, int64_t width)>;

// The passes of a product on our int8 kernel, to run in a parallel region
// with others (parallel_passes, models/parallel_chunks.h): the input's rows
// quantized, then multiplied into `y` (the residual added). What they read
// must be made by then: a made input may read tensors earlier passes write.
struct ProductPasses {
  at::Tensor y;
  ParallelPass quantize, multiply;
  // Runs on each panel of y as it is written, where set before the passes
  // run: a pass planned after this product (that reads y) may set it.
  std::shared_ptr<PanelFinish> finish = std::make_shared<PanelFinish>();
};

class PackedGemm {
 public:
  // Packs `weight` [out, in] (and `bias` [out], optional); with `int8`,
  // quantizes a float32 weight. Returns null when this weight cannot be
  // packed here (not on the CPU, a dtype other than float32 / bfloat16, or
  // oneDNN refuses the shape): the caller keeps the dense weight then.
  static std::unique_ptr<PackedGemm> pack(const at::Tensor& weight, const at::Tensor& bias, bool int8 = false);
  ~PackedGemm();

  // x [..., in] in the weight's dtype -> [..., out]. Safe to call from many
  // threads at once: the packed weight is read-only.
  at::Tensor operator()(const at::Tensor& x) const;
  // residual + x · Wᵀ + b, `residual` [..., out] like the output: added in the
  // int8 kernel's epilogue (no pass of its own), else in place on the product.
  at::Tensor add_to(const at::Tensor& residual, const at::Tensor& x) const;
  // The same for an input that may be made as it is read (GemmInput).
  at::Tensor operator()(const GemmInput& x) const;
  at::Tensor add_to(const at::Tensor& residual, const GemmInput& x) const;
  // The passes of add_to(residual, x) (an undefined residual: operator()),
  // for float32 2-D rows on our int8 kernel; none otherwise.
  std::optional<ProductPasses> passes(const GemmInput& x, const at::Tensor& residual) const;
  // The output columns a panel of passes() holds (what a finish is handed):
  // 64 on AVX-512, 16 on AVX2; 0 where there are no passes.
  int64_t panel_columns() const;
  int64_t in_features() const;
  int64_t out_features() const;
  // The dtype the product is computed in: float32 (also for bf16 weights on a
  // CPU without a bf16 GEMM), bfloat16, or char (int8).
  c10::ScalarType compute_dtype() const;
  bool quantized() const { return compute_dtype() == at::kChar; }

  // Whether bf16 weights run as bf16 GEMMs here (AVX-512 BF16 or AMX, and
  // oneDNN allowed to use them); else they are widened to fp32.
  static bool native_bf16();
  // Quantized activations use all 8 bits where the int8 kernel has VNNI;
  // without it, pairs of u8 x s8 products are added in 16 bits (vpmaddubsw)
  // and activations keep 7 bits so that the sum cannot saturate. (A shape
  // that measured faster on oneDNN's int8 GEMM takes oneDNN's levels, the
  // same unless the two ISA caps disagree.)
  static int activation_levels();

  // Whether the weights of this process are packed (SEMROUTE_PACKED_GEMM=0
  // turns packing off, for comparisons).
  static bool enabled();

  // The row counts primitives are made for, ascending (exposed for tests):
  // every count up to 32, then steps of 4 to 64, then 8 rungs per doubling
  // to 512 and 4 per doubling to 4096 (padding adds at most 1/8 of the work
  // below 512 rows, 1/4 above). Longer inputs run in chunks of 4096.
  static const std::vector<int64_t>& row_ladder();

 private:
  struct State;
  explicit PackedGemm(std::unique_ptr<State> state);
  at::Tensor run(const at::Tensor& x, const at::Tensor& residual) const;
  at::Tensor run(const GemmInput& x, const at::Tensor& residual) const;
  std::unique_ptr<State> state_;
};

}  // namespace semroute
