#include "kernels/f32_gemm.h"

#include <cstring>
#include <string>

#include "core/cpu_features.h"
#include "core/weight_memory.h"
#include "semroute/error.h"

namespace semroute::kernels {
namespace {

// Columns per panel: three 512-bit registers, or two 256-bit ones (the plain
// path takes the 256-bit layout).
int64_t width_of(F32Path path) { return path == F32Path::kAvx512 ? 48 : 16; }

// The plain C++ path: the same packed layout, one column at a time.
void f32_panels_reference(const F32Panels& p) {
  constexpr int64_t width = 16;
  const F32Output& o = *p.out;
  for (int64_t panel = p.first_panel; panel < p.last_panel; ++panel) {
    const float* b = p.packed + panel * p.k * width;
    for (int64_t r = 0; r < p.rows; ++r) {
      const float* a = p.a + r * p.a_stride;
      for (int64_t c = 0; c < width && panel * width + c < p.n; ++c) {
        float sum = 0;
        for (int64_t k = 0; k < p.k; ++k) sum += a[k] * b[k * width + c];
        const int64_t col = panel * width + c;
        if (o.bias != nullptr) sum += o.bias[col];
        if (o.residual != nullptr) sum += o.residual[r * o.residual_stride + col];
        o.y[r * o.y_stride + col] = sum;
      }
    }
  }
}

}  // namespace

const char* to_string(F32Path path) {
  switch (path) {
    case F32Path::kReference: return "reference";
    case F32Path::kAvx2: return "avx2";
    case F32Path::kAvx512: return "avx512";
  }
  return "unknown";
}

std::vector<F32Path> f32_paths_here() {
  const CpuFeatures& cpu = cpu_features();
  std::vector<F32Path> paths;
  if (cpu.avx512) paths.push_back(F32Path::kAvx512);
  if (cpu.avx2) paths.push_back(F32Path::kAvx2);
  paths.push_back(F32Path::kReference);
  return paths;
}

F32Path best_f32_path() {
  static const F32Path best = f32_paths_here().front();
  return best;
}

PackedF32Weight::PackedF32Weight(const float* w, int64_t n, int64_t k, F32Path path)
    : path_(path), n_(n), k_(k), width_(width_of(path)), panels_((n + width_ - 1) / width_) {
  if (n <= 0 || k <= 0) throw InternalError("fp32 weight of " + std::to_string(n) + " x " + std::to_string(k));
  packed_ = allocate_weight_memory(packed_bytes());
  auto* packed = static_cast<float*>(packed_.get());
  std::memset(packed, 0, packed_bytes());
  for (int64_t col = 0; col < n; ++col) {
    float* panel = packed + col / width_ * k * width_;
    for (int64_t i = 0; i < k; ++i) panel[i * width_ + col % width_] = w[col * k + i];
  }
}

void PackedF32Weight::multiply(const float* a, int64_t a_stride, int64_t rows, int64_t first_panel,
                               int64_t last_panel, const F32Output& out) const {
  if (a_stride < k_ || first_panel < 0 || last_panel > panels_)
    throw InternalError("fp32 product: input stride or panel range out of bounds");
  if (rows <= 0 || first_panel >= last_panel) return;
  const F32Panels p{a, a_stride, rows, static_cast<const float*>(packed_.get()), k_, n_, first_panel, last_panel, &out};
  switch (path_) {
    case F32Path::kAvx512: return f32_panels_avx512(p);
    case F32Path::kAvx2: return f32_panels_avx2(p);
    case F32Path::kReference: return f32_panels_reference(p);
  }
}

}  // namespace semroute::kernels
