// The bf16 kernel (src/kernels/bf16_gemm.h), where the CPU has AVX-512 BF16:
// against a double-precision product of the same inputs rounded to bf16
// (round to nearest even), over row, column and input tails, B read through
// strides both ways (keys as rows, values as columns), and alpha.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/bf16_gemm.h"
#include "semroute/error.h"

namespace semroute::kernels {
namespace {

double rounded(float v) {  // v rounded to bf16, as a double
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  float r;
  std::memcpy(&r, &bits, 4);
  return r;
}

TEST(Bf16Gemm, EqualsTheRoundedReference) {
  if (!bf16_dot_here()) GTEST_SKIP() << "no AVX-512 BF16 on " << cpu_features().describe();
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> unit(-2.0f, 2.0f);
  for (int64_t rows : {1, 5, 6, 7, 13})
    for (int64_t n : {1, 15, 16, 17, 64, 70})
      for (int64_t k : {1, 2, 31, 64, 67})
        for (const bool transposed : {false, true}) {
          // a: rows x k (stride k + 3); B element (i, j) at i * n_stride + j * k_stride.
          std::vector<float> a(static_cast<size_t>(rows * (k + 3))), b(static_cast<size_t>(n * k));
          for (auto& v : a) v = unit(rng);
          for (auto& v : b) v = unit(rng);
          const int64_t n_stride = transposed ? 1 : k, k_stride = transposed ? n : 1;
          std::vector<uint16_t> packed(bf16_panels_size(n, k)), rows_bf16(static_cast<size_t>(rows * bf16_padded_k(k)));
          pack_bf16_panels(b.data(), n_stride, k_stride, n, k, packed.data());
          bf16_rows(a.data(), k + 3, rows, k, rows_bf16.data());
          const int64_t c_stride = n + 2;
          std::vector<float> c(static_cast<size_t>(rows * c_stride), -7.0f);
          // Rows times their own scales too, where there are several.
          std::vector<float> row_scales(static_cast<size_t>(rows));
          for (int64_t r = 0; r < rows; ++r) row_scales[static_cast<size_t>(r)] = rows > 1 ? 1.0f + 0.25f * r : 1.0f;
          bf16_gemm(rows_bf16.data(), rows, packed.data(), n, k, 0.5f, c.data(), c_stride, 0,
                    rows > 1 ? row_scales.data() : nullptr);
          double worst = 0;
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t i = 0; i < n; ++i) {
              double want = 0;
              for (int64_t j = 0; j < k; ++j)
                want += rounded(a[r * (k + 3) + j]) * rounded(b[i * n_stride + j * k_stride]);
              worst = std::max(worst, std::abs(c[r * c_stride + i] - 0.5 * row_scales[static_cast<size_t>(r)] * want));
            }
            for (int64_t i = n; i < c_stride; ++i) ASSERT_EQ(c[r * c_stride + i], -7.0f) << "wrote past n";
          }
          EXPECT_LT(worst, 1e-5 * (1 + k)) << "rows " << rows << " n " << n << " k " << k << " transposed "
                                           << transposed;
        }
}

TEST(Bf16Gemm, PartsPackedApartMakeTheWhole) {
  if (!bf16_dot_here()) GTEST_SKIP() << "no AVX-512 BF16 on " << cpu_features().describe();
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> unit(-2.0f, 2.0f);
  // B's rows contiguous (the keys), its columns (the values), neither.
  for (int layout = 0; layout < 3; ++layout)
    for (int64_t n : {1, 16, 17, 64, 70})
      for (int64_t k : {1, 2, 31, 64, 67}) {
        const int64_t n_stride = layout == 0 ? k : layout == 1 ? 1 : 2 * k, k_stride = layout == 0 ? 1 : layout == 1 ? n : 2;
        std::vector<float> b(static_cast<size_t>(n * k * 2));
        for (auto& v : b) v = unit(rng);
        const size_t size = bf16_panels_size(n, k);
        std::vector<uint16_t> whole(size, 0xAAAA), parts(size, 0xAAAA);
        pack_bf16_panels(b.data(), n_stride, k_stride, n, k, whole.data());
        // Rows or inputs cut at odd and unaligned places (and not at all).
        const bool by_rows = layout != 1;
        const int64_t length = by_rows ? n : k;
        std::vector<int64_t> cuts{0, std::min<int64_t>(length, 5), std::min<int64_t>(length, 21), length};
        for (size_t c = 0; c + 1 < cuts.size(); ++c) {
          const int64_t lo = cuts[c], hi = cuts[c + 1];
          if (lo == hi) continue;
          pack_bf16_panel_part(b.data(), n_stride, k_stride, n, k, by_rows ? lo : 0, by_rows ? hi : n, by_rows ? 0 : lo,
                               by_rows ? k : hi, parts.data());
        }
        EXPECT_EQ(parts, whole) << "layout " << layout << " n " << n << " k " << k;
      }
  std::vector<uint16_t> out(bf16_panels_size(2, 2));
  const float b[4] = {1, 2, 3, 4};
  EXPECT_THROW(pack_bf16_panel_part(b, 2, 1, 2, 2, 1, 3, 0, 2, out.data()), InternalError);
}

TEST(Bf16Gemm, RefusedWithoutTheInstructions) {
  if (bf16_dot_here()) GTEST_SKIP() << "this CPU has AVX-512 BF16";
  std::vector<uint16_t> out(4);
  const float a[2] = {1, 2};
  EXPECT_THROW(bf16_rows(a, 2, 1, 2, out.data()), InternalError);
}

}  // namespace
}  // namespace semroute::kernels
