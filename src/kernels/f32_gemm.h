// The fp32 GEMM of the encoders' linear layers for few rows: y = a · wᵀ
// (+ bias, + residual) with w packed once, at load, in panels of columns:
// for every input k, the panel's columns side by side, so that one vector
// load per register of outputs feeds a broadcast-multiply-add for each row
// of a register-blocked tile. The tile's sums stay in registers over the
// whole input length; bias and residual are added in the epilogue.
//
// Our own kernel beside oneDNN's: on 16-row inputs (a prompt) Debian's
// oneDNN 2.6 ran the packed fp32 product at 44-50 % of the FMA peak, where
// weights that stream once from memory allow most of it
// (benchmarks/kernel_bench). PackedGemm measures both per shape at load and
// takes this one for the row counts where it is faster.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/f32_panels.h"

namespace semroute::kernels {

enum class F32Path {
  kReference,  // plain C++, any CPU
  kAvx2,       // FMA on 256-bit registers
  kAvx512,     // FMA on 512-bit registers
};

const char* to_string(F32Path path);
// Every path this CPU runs under the caps of cpu_features(), widest first.
std::vector<F32Path> f32_paths_here();
F32Path best_f32_path();

class PackedF32Weight {
 public:
  // `w` [n][k] row-major: the product is a · wᵀ. Packed for `path`.
  PackedF32Weight(const float* w, int64_t n, int64_t k, F32Path path);

  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  int64_t panels() const { return panels_; }
  int64_t panel_width() const { return width_; }
  F32Path path() const { return path_; }
  size_t packed_bytes() const { return static_cast<size_t>(panels_ * width_ * k_) * sizeof(float); }

  // The outputs of panels [first, last) for rows [0, rows) of `a` (row
  // stride `a_stride` >= k()). Single-threaded; calls for disjoint panels or
  // rows may run at once.
  void multiply(const float* a, int64_t a_stride, int64_t rows, int64_t first_panel, int64_t last_panel,
                const F32Output& out) const;

 private:
  F32Path path_;
  int64_t n_, k_, width_, panels_;
  std::shared_ptr<void> packed_;  // panels x k x width floats, columns past n zero
};

}  // namespace semroute::kernels
