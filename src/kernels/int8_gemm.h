// The int8 GEMM of the encoders' linear layers: y = dequantize(a · wᵀ) with
// a the activation rows quantized to unsigned 8 bits (per row: scale, zero
// point) and w the weight quantized to signed 8 bits per output channel.
//
// The weight is packed once, at load, in panels of columns laid out the way
// the instruction reads them: for every group of 4 inputs, the panel's
// columns side by side with their 4 bytes each, so that one vector load
// feeds one `vpdpbusd` (or `vpmaddubsw` + `vpmaddwd` without VNNI) per
// register of outputs. A register-blocked micro-kernel keeps a tile of rows
// x one panel in registers over the whole input length and turns it into
// floats in its epilogue (zero-point correction, both scales, bias, and a
// residual where one follows), so the int32 sums never go to memory.
//
// With few rows (a prompt of 8-64 tokens) the product streams the weight
// once from memory and reuses each panel from cache for every row tile;
// callers spread panels (and, for many rows, row ranges) over threads.
//
// Our own kernel rather than oneDNN's: at the router's shapes (16-512 rows,
// 768-2304 columns) Debian's oneDNN 2.6 ran the int8 product 1.3-2x slower
// than the weight stream or the VNNI peak allows (benchmarks/peers).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/int8_panels.h"

namespace semroute::kernels {

// The instruction paths of the kernel.
enum class Int8Path {
  kReference,   // plain C++, any CPU
  kAvx2,        // vpmaddubsw + vpmaddwd on 256-bit registers
  kAvxVnni,     // vpdpbusd on 256-bit registers (AVX-VNNI)
  kAvx512,      // vpmaddubsw + vpmaddwd on 512-bit registers (AVX-512 BW)
  kAvx512Vnni,  // vpdpbusd on 512-bit registers
};

const char* to_string(Int8Path path);
// Every path this CPU runs under the caps of cpu_features(), widest first.
std::vector<Int8Path> int8_paths_here();
// The widest of them.
Int8Path best_int8_path();
// The activation levels a path takes: 255 with VNNI (32-bit sums), 127
// without it, where two u8 x s8 products are added in 16 bits and could
// saturate with 8-bit inputs.
int activation_levels(Int8Path path);

class PackedInt8Weight {
 public:
  // `w` [n][k] row-major int8 (|w| <= 127), `scale` [n]: the weight is
  // w[n][k] · scale[n]. Packed for `path`.
  PackedInt8Weight(const int8_t* w, int64_t n, int64_t k, const float* scale, Int8Path path);

  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  // The row stride (in bytes) `a` must have: k rounded up to 4, the extra
  // bytes zero.
  int64_t padded_k() const { return padded_k_; }
  int64_t panels() const { return panels_; }
  int64_t panel_width() const { return width_; }
  Int8Path path() const { return path_; }
  size_t packed_bytes() const { return static_cast<size_t>(panels_ * width_ * padded_k_); }

  // The outputs of panels [first, last) for rows [0, rows) of `a` (row
  // stride `a_stride` >= padded_k()). Single-threaded; calls for disjoint
  // panels or rows may run at once.
  void multiply(const uint8_t* a, int64_t a_stride, int64_t rows, int64_t first_panel, int64_t last_panel,
                const Int8Output& out) const;

 private:
  Int8Path path_;
  int64_t n_, k_, padded_k_, width_, panels_;
  std::shared_ptr<void> packed_;       // panels x (padded_k / 4) x width x 4 bytes
  std::vector<float> weight_scale_;    // padded to panels x width (zeros)
  std::vector<int32_t> weight_sum_;
};

}  // namespace semroute::kernels
