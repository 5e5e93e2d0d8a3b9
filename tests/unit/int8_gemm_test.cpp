// The int8 GEMM kernel (src/kernels/int8_gemm.h) on every path this CPU runs
// against a plain reference over the unpacked weight: every row tail of each
// path's tile, column counts on and around the panel widths, input lengths
// that are not multiples of 4, bias and residual (in place too), panel
// subsets, and the extreme values each path admits. The integer sums are
// exact; the epilogue may differ by float contraction only.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/int8_gemm.h"
#include "semroute/error.h"

namespace semroute::kernels {
namespace {

struct Problem {
  int64_t rows, n, k;
  std::vector<uint8_t> a;  // rows x padded k
  int64_t a_stride;
  std::vector<int8_t> w;   // n x k
  std::vector<float> weight_scale, row_scale, bias, residual;
  std::vector<int32_t> row_zero;
};

Problem make_problem(int64_t rows, int64_t n, int64_t k, int levels, uint32_t seed, bool extreme = false) {
  std::mt19937 rng(seed);
  Problem p{rows, n, k, {}, (k + 3) / 4 * 4 + 4, {}, {}, {}, {}, {}, {}};
  std::uniform_int_distribution<int> byte(0, levels), weight(-127, 127);
  std::uniform_real_distribution<float> unit(0.5f, 2.0f), signed_unit(-1.0f, 1.0f);
  p.a.assign(static_cast<size_t>(rows * p.a_stride), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < k; ++i) p.a[r * p.a_stride + i] = static_cast<uint8_t>(extreme ? levels : byte(rng));
  p.w.resize(static_cast<size_t>(n * k));
  for (size_t i = 0; i < p.w.size(); ++i) p.w[i] = static_cast<int8_t>(extreme ? (i % 2 ? -127 : 127) : weight(rng));
  for (int64_t c = 0; c < n; ++c) {
    p.weight_scale.push_back(unit(rng) * 0.01f);
    p.bias.push_back(signed_unit(rng));
  }
  for (int64_t r = 0; r < rows; ++r) {
    p.row_scale.push_back(unit(rng) * 0.02f);
    p.row_zero.push_back(static_cast<int32_t>(rng() % static_cast<uint32_t>(levels + 1)));
  }
  p.residual.resize(static_cast<size_t>(rows * n));
  for (auto& v : p.residual) v = signed_unit(rng);
  return p;
}

// y = row_scale · weight_scale · (Σ a·w − zero · Σ w) + bias + residual, from the unpacked weight.
std::vector<float> reference(const Problem& p, bool bias, bool residual) {
  std::vector<float> y(static_cast<size_t>(p.rows * p.n));
  for (int64_t r = 0; r < p.rows; ++r)
    for (int64_t c = 0; c < p.n; ++c) {
      int64_t sum = 0, weight_sum = 0;
      for (int64_t i = 0; i < p.k; ++i) {
        sum += int64_t{p.a[r * p.a_stride + i]} * p.w[c * p.k + i];
        weight_sum += p.w[c * p.k + i];
      }
      double value = static_cast<double>(sum - p.row_zero[r] * weight_sum) * p.row_scale[r] * p.weight_scale[c];
      if (bias) value += p.bias[c];
      if (residual) value += p.residual[r * p.n + c];
      y[r * p.n + c] = static_cast<float>(value);
    }
  return y;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(std::isfinite(got[i])) << what << " at " << i;
    worst = std::max(worst, std::abs(double{got[i]} - want[i]) / (1.0 + std::abs(want[i])));
  }
  EXPECT_LE(worst, 2e-6) << what;
}

std::vector<float> run(const Problem& p, Int8Path path, bool bias, bool residual, bool in_place = false) {
  const PackedInt8Weight packed(p.w.data(), p.n, p.k, p.weight_scale.data(), path);
  std::vector<float> y(static_cast<size_t>(p.rows * p.n), std::nanf(""));
  if (in_place) y = p.residual;
  Int8Output out;
  out.row_scale = p.row_scale.data();
  out.row_zero = p.row_zero.data();
  out.bias = bias ? p.bias.data() : nullptr;
  out.residual = residual ? (in_place ? y.data() : p.residual.data()) : nullptr;
  out.residual_stride = p.n;
  out.y = y.data();
  out.y_stride = p.n;
  packed.multiply(p.a.data(), p.a_stride, p.rows, 0, packed.panels(), out);
  return y;
}

TEST(Int8Gemm, EveryPathEqualsTheReference) {
  for (Int8Path path : int8_paths_here()) {
    const int levels = activation_levels(path);
    for (int64_t rows : {1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 37})
      for (int64_t n : {1, 15, 16, 17, 63, 64, 65, 130})
        for (int64_t k : {1, 3, 4, 5, 67, 256}) {
          const Problem p = make_problem(rows, n, k, levels, static_cast<uint32_t>(rows * 1000 + n * 10 + k));
          const std::string what = std::string(to_string(path)) + " rows " + std::to_string(rows) + " n " +
                                   std::to_string(n) + " k " + std::to_string(k);
          expect_close(run(p, path, true, false), reference(p, true, false), what + " bias");
          if (rows % 3 == 0 || n % 16 == 1) {
            expect_close(run(p, path, false, false), reference(p, false, false), what);
            expect_close(run(p, path, true, true), reference(p, true, true), what + " residual");
            expect_close(run(p, path, false, true, true), reference(p, false, true), what + " residual in place");
          }
        }
  }
}

TEST(Int8Gemm, ExtremeValuesDoNotSaturate) {
  // Every activation at the top level, weights ±127: the largest sums a path
  // can meet (the 16-bit pair sums of the non-VNNI paths included).
  for (Int8Path path : int8_paths_here()) {
    const Problem p = make_problem(7, 70, 4096, activation_levels(path), 3, true);
    expect_close(run(p, path, true, false), reference(p, true, false), to_string(path));
  }
}

TEST(Int8Gemm, PanelRangesCoverTheirColumnsOnly) {
  for (Int8Path path : int8_paths_here()) {
    const Problem p = make_problem(9, 200, 96, activation_levels(path), 5);
    const PackedInt8Weight packed(p.w.data(), p.n, p.k, p.weight_scale.data(), path);
    ASSERT_EQ(packed.panels(), (p.n + packed.panel_width() - 1) / packed.panel_width());
    std::vector<float> y(static_cast<size_t>(p.rows * p.n), -7.0f);
    Int8Output out;
    out.row_scale = p.row_scale.data();
    out.row_zero = p.row_zero.data();
    out.y = y.data();
    out.y_stride = p.n;
    packed.multiply(p.a.data(), p.a_stride, p.rows, 1, 2, out);
    const std::vector<float> want = reference(p, false, false);
    const int64_t first = packed.panel_width(), last = std::min(p.n, 2 * packed.panel_width());
    for (int64_t r = 0; r < p.rows; ++r)
      for (int64_t c = 0; c < p.n; ++c) {
        const float got = y[r * p.n + c];
        if (c >= first && c < last)
          EXPECT_NEAR(got, want[r * p.n + c], 2e-6 * (1 + std::abs(want[r * p.n + c]))) << to_string(path);
        else
          EXPECT_EQ(got, -7.0f) << to_string(path) << " wrote column " << c;
      }
  }
}

TEST(Int8Gemm, RefusesBadArguments) {
  const std::vector<int8_t> w(8, 1);
  const std::vector<float> scale(2, 1.0f);
  EXPECT_THROW(PackedInt8Weight(w.data(), 0, 4, scale.data(), Int8Path::kReference), InternalError);
  const PackedInt8Weight packed(w.data(), 2, 4, scale.data(), Int8Path::kReference);
  const std::vector<uint8_t> a(4, 0);
  Int8Output out;
  EXPECT_THROW(packed.multiply(a.data(), 3, 1, 0, 1, out), InternalError);  // stride < padded k
  EXPECT_THROW(packed.multiply(a.data(), 4, 1, 0, 2, out), InternalError);  // past the last panel
}

TEST(Int8Gemm, PathsFollowTheCpu) {
  const auto paths = int8_paths_here();
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths.back(), Int8Path::kReference);
  EXPECT_EQ(paths.front(), best_int8_path());
  // Under a cap (SEMROUTE_MAX_CPU_ISA, or ONEDNN_MAX_CPU_ISA alone) no wider path is offered.
  const CpuFeatures& cpu = cpu_features();
  for (Int8Path path : paths) {
    std::printf("int8 path available: %s (%s)\n", to_string(path), cpu.describe().c_str());
    const bool runs = path == Int8Path::kAvx512Vnni ? cpu.avx512_vnni
                      : path == Int8Path::kAvx512   ? cpu.avx512
                      : path == Int8Path::kAvxVnni  ? cpu.avx_vnni
                      : path == Int8Path::kAvx2     ? cpu.avx2
                                                    : true;
    EXPECT_TRUE(runs) << to_string(path);
  }
  const char* ours = std::getenv("SEMROUTE_MAX_CPU_ISA");
  const char* onednn = std::getenv("ONEDNN_MAX_CPU_ISA");
  const std::string cap = ours != nullptr ? ours : onednn != nullptr ? cap_of_onednn_isa(onednn) : "";
  if (cap == "avx2") {
    EXPECT_NE(best_int8_path(), Int8Path::kAvx512Vnni);
    EXPECT_NE(best_int8_path(), Int8Path::kAvx512);
    EXPECT_NE(best_int8_path(), Int8Path::kAvxVnni);
  }
}

}  // namespace
}  // namespace semroute::kernels
