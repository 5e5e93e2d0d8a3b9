// The fp32 GEMM kernel (src/kernels/f32_gemm.h) on every path this CPU runs
// against a plain double-precision reference over the unpacked weight: every
// row tail of each path's tile, column counts on and around the panel widths
// (16, 48), odd input lengths, bias and residual (in place too), panel
// subsets. The sums differ from the reference by float rounding only.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/bf16_gemm.h"
#include "kernels/f32_gemm.h"
#include "semroute/error.h"

namespace semroute::kernels {
namespace {

struct Problem {
  int64_t rows, n, k, a_stride;
  std::vector<float> a, w, bias, residual;  // a: rows x a_stride; w: n x k
};

Problem make_problem(int64_t rows, int64_t n, int64_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  Problem p{rows, n, k, k + 3, {}, {}, {}, {}};
  const auto fill = [&](std::vector<float>& v, int64_t count) {
    for (int64_t i = 0; i < count; ++i) v.push_back(unit(rng));
  };
  fill(p.a, rows * p.a_stride);
  fill(p.w, n * k);
  fill(p.bias, n);
  fill(p.residual, rows * n);
  return p;
}

std::vector<float> reference(const Problem& p, bool bias, bool residual) {
  std::vector<float> y(static_cast<size_t>(p.rows * p.n));
  for (int64_t r = 0; r < p.rows; ++r)
    for (int64_t c = 0; c < p.n; ++c) {
      double sum = 0;
      for (int64_t i = 0; i < p.k; ++i) sum += double{p.a[r * p.a_stride + i]} * p.w[c * p.k + i];
      if (bias) sum += p.bias[c];
      if (residual) sum += p.residual[r * p.n + c];
      y[r * p.n + c] = static_cast<float>(sum);
    }
  return y;
}

// Float rounding of k products: relative to sqrt(k) · the terms' size.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, int64_t k, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(std::isfinite(got[i])) << what << " at " << i;
    worst = std::max(worst, std::abs(double{got[i]} - want[i]));
  }
  EXPECT_LE(worst, 1e-6 * (2 + std::sqrt(static_cast<double>(k)))) << what;
}

std::vector<float> run(const Problem& p, F32Path path, bool bias, bool residual, bool in_place = false) {
  const PackedF32Weight packed(p.w.data(), p.n, p.k, path);
  std::vector<float> y = in_place ? p.residual : std::vector<float>(static_cast<size_t>(p.rows * p.n), std::nanf(""));
  F32Output out;
  out.bias = bias ? p.bias.data() : nullptr;
  out.residual = residual ? (in_place ? y.data() : p.residual.data()) : nullptr;
  out.residual_stride = p.n;
  out.y = y.data();
  out.y_stride = p.n;
  packed.multiply(p.a.data(), p.a_stride, p.rows, 0, packed.panels(), out);
  return y;
}

TEST(F32Gemm, EveryPathEqualsTheReference) {
  for (F32Path path : f32_paths_here()) {
    for (int64_t rows : {1, 2, 3, 5, 6, 7, 8, 9, 12, 15, 16, 17, 37})
      for (int64_t n : {1, 15, 16, 17, 47, 48, 49, 97, 130})
        for (int64_t k : {1, 3, 64, 67, 300}) {
          const Problem p = make_problem(rows, n, k, static_cast<uint32_t>(rows * 1000 + n * 10 + k));
          const std::string what = std::string(to_string(path)) + " rows " + std::to_string(rows) + " n " +
                                   std::to_string(n) + " k " + std::to_string(k);
          expect_close(run(p, path, true, false), reference(p, true, false), k, what + " bias");
          if (rows % 3 == 0 || n % 16 == 1) {
            expect_close(run(p, path, false, false), reference(p, false, false), k, what);
            expect_close(run(p, path, true, true), reference(p, true, true), k, what + " residual");
            expect_close(run(p, path, false, true, true), reference(p, false, true), k, what + " residual in place");
          }
        }
  }
}

TEST(F32Gemm, PanelRangesCoverTheirColumnsOnly) {
  for (F32Path path : f32_paths_here()) {
    const Problem p = make_problem(9, 200, 96, 5);
    const PackedF32Weight packed(p.w.data(), p.n, p.k, path);
    ASSERT_EQ(packed.panels(), (p.n + packed.panel_width() - 1) / packed.panel_width());
    std::vector<float> y(static_cast<size_t>(p.rows * p.n), -7.0f);
    F32Output out;
    out.y = y.data();
    out.y_stride = p.n;
    packed.multiply(p.a.data(), p.a_stride, p.rows, 1, 2, out);
    const std::vector<float> want = reference(p, false, false);
    const int64_t first = packed.panel_width(), last = std::min(p.n, 2 * packed.panel_width());
    for (int64_t r = 0; r < p.rows; ++r)
      for (int64_t c = 0; c < p.n; ++c) {
        const float got = y[r * p.n + c];
        if (c >= first && c < last)
          EXPECT_NEAR(got, want[r * p.n + c], 2e-5) << to_string(path);
        else
          EXPECT_EQ(got, -7.0f) << to_string(path) << " wrote column " << c;
      }
  }
}

TEST(F32Gemm, RefusesBadArguments) {
  const std::vector<float> w(8, 1.0f), a(4, 0.0f);
  EXPECT_THROW(PackedF32Weight(w.data(), 0, 4, F32Path::kReference), InternalError);
  const PackedF32Weight packed(w.data(), 2, 4, F32Path::kReference);
  F32Output out;
  EXPECT_THROW(packed.multiply(a.data(), 3, 1, 0, 1, out), InternalError);  // stride < k
  EXPECT_THROW(packed.multiply(a.data(), 4, 1, 0, 2, out), InternalError);  // past the last panel
}

TEST(F32Gemm, PathsFollowTheCpu) {
  const auto paths = f32_paths_here();
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths.back(), F32Path::kReference);
  EXPECT_EQ(paths.front(), best_f32_path());
  const CpuFeatures& cpu = cpu_features();
  for (F32Path path : paths) {
    std::printf("fp32 path available: %s (%s)\n", to_string(path), cpu.describe().c_str());
    EXPECT_TRUE(path == F32Path::kAvx512 ? cpu.avx512 : path == F32Path::kAvx2 ? cpu.avx2 : true) << to_string(path);
  }
  // Under a cap (SEMROUTE_MAX_CPU_ISA, or ONEDNN_MAX_CPU_ISA alone) no wider path is offered: neither the
  // 512-bit fp32 tiles nor the bf16 products.
  const char* ours = std::getenv("SEMROUTE_MAX_CPU_ISA");
  const char* onednn = std::getenv("ONEDNN_MAX_CPU_ISA");
  const std::string cap = ours != nullptr ? ours : onednn != nullptr ? cap_of_onednn_isa(onednn) : "";
  if (cap == "avx2") {
    EXPECT_EQ(best_f32_path(), F32Path::kAvx2);
    EXPECT_FALSE(bf16_dot_here());
  }
}

}  // namespace
}  // namespace semroute::kernels
