#include "kernels/int8_gemm.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/cpu_features.h"
#include "core/weight_memory.h"
#include "semroute/error.h"

namespace semroute::kernels {
namespace {

// Columns per panel: four 512-bit registers of int32 sums, or two 256-bit
// ones (the plain path takes the 256-bit layout).
constexpr int64_t kWideWidth = 64, kNarrowWidth = 16;

int64_t width_of(Int8Path path) {
  return path == Int8Path::kAvx512 || path == Int8Path::kAvx512Vnni ? kWideWidth : kNarrowWidth;
}

// The plain C++ path: the same packed layout, one column at a time.
void int8_panels_reference(const Int8Panels& p) {
  constexpr int64_t width = kNarrowWidth;
  const Int8Output& o = *p.out;
  for (int64_t panel = p.first_panel; panel < p.last_panel; ++panel) {
    const int8_t* b = p.packed + panel * p.groups * width * 4;
    for (int64_t r = 0; r < p.rows; ++r) {
      const uint8_t* a = p.a + r * p.a_stride;
      for (int64_t c = 0; c < width && panel * width + c < p.n; ++c) {
        int32_t sum = 0;
        for (int64_t g = 0; g < p.groups; ++g)
          for (int64_t j = 0; j < 4; ++j) sum += a[4 * g + j] * b[(g * width + c) * 4 + j];
        const int64_t col = panel * width + c;
        float value = static_cast<float>(sum - o.row_zero[r] * p.weight_sum[col]) * (o.row_scale[r] * p.weight_scale[col]);
        if (o.bias != nullptr) value += o.bias[col];
        if (o.residual != nullptr) value += o.residual[r * o.residual_stride + col];
        o.y[r * o.y_stride + col] = value;
      }
    }
  }
}

}  // namespace

const char* to_string(Int8Path path) {
  switch (path) {
    case Int8Path::kReference: return "reference";
    case Int8Path::kAvx2: return "avx2";
    case Int8Path::kAvxVnni: return "avx_vnni";
    case Int8Path::kAvx512: return "avx512";
    case Int8Path::kAvx512Vnni: return "avx512_vnni";
  }
  return "unknown";
}

std::vector<Int8Path> int8_paths_here() {
  const CpuFeatures& cpu = cpu_features();
  std::vector<Int8Path> paths;
  if (cpu.avx512_vnni) paths.push_back(Int8Path::kAvx512Vnni);
  if (cpu.avx512) paths.push_back(Int8Path::kAvx512);
  if (cpu.avx_vnni) paths.push_back(Int8Path::kAvxVnni);
  if (cpu.avx2) paths.push_back(Int8Path::kAvx2);
  paths.push_back(Int8Path::kReference);
  return paths;
}

Int8Path best_int8_path() {
  static const Int8Path best = int8_paths_here().front();
  return best;
}

int activation_levels(Int8Path path) {
  return path == Int8Path::kAvx512Vnni || path == Int8Path::kAvxVnni || path == Int8Path::kReference ? 255 : 127;
}

PackedInt8Weight::PackedInt8Weight(const int8_t* w, int64_t n, int64_t k, const float* scale, Int8Path path)
    : path_(path), n_(n), k_(k), padded_k_((k + 3) / 4 * 4), width_(width_of(path)), panels_((n + width_ - 1) / width_) {
  if (n <= 0 || k <= 0) throw InternalError("int8 weight of " + std::to_string(n) + " x " + std::to_string(k));
  const int64_t groups = padded_k_ / 4, columns = panels_ * width_;
  packed_ = allocate_weight_memory(packed_bytes());
  auto* packed = static_cast<int8_t*>(packed_.get());
  std::memset(packed, 0, packed_bytes());
  weight_scale_.assign(static_cast<size_t>(columns), 0.0f);
  weight_sum_.assign(static_cast<size_t>(columns), 0);
  for (int64_t col = 0; col < n; ++col) {
    const int8_t* row = w + col * k;
    int8_t* panel = packed + col / width_ * groups * width_ * 4;
    const int64_t c = col % width_;
    int32_t sum = 0;
    for (int64_t i = 0; i < k; ++i) {
      panel[(i / 4 * width_ + c) * 4 + i % 4] = row[i];
      sum += row[i];
    }
    weight_scale_[static_cast<size_t>(col)] = scale[col];
    weight_sum_[static_cast<size_t>(col)] = sum;
  }
}

void PackedInt8Weight::multiply(const uint8_t* a, int64_t a_stride, int64_t rows, int64_t first_panel,
                                int64_t last_panel, const Int8Output& out) const {
  if (a_stride < padded_k_ || first_panel < 0 || last_panel > panels_)
    throw InternalError("int8 product: input stride or panel range out of bounds");
  if (rows <= 0 || first_panel >= last_panel) return;
  const Int8Panels p{a,         a_stride, rows, static_cast<const int8_t*>(packed_.get()), padded_k_ / 4,
                     weight_scale_.data(), weight_sum_.data(), n_, first_panel, last_panel, &out};
  switch (path_) {
    case Int8Path::kAvx512Vnni: return int8_panels_avx512_vnni(p);
    case Int8Path::kAvx512: return int8_panels_avx512(p);
    case Int8Path::kAvxVnni: return int8_panels_avx_vnni(p);
    case Int8Path::kAvx2: return int8_panels_avx2(p);
    case Int8Path::kReference: return int8_panels_reference(p);
  }
}

}  // namespace semroute::kernels
