#include "classifiers/vector_index.h"

#include <ATen/Parallel.h>
#include <Eigen/Core>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "semroute/error.h"

namespace semroute {
namespace {

// int8 codes of a unit vector: x ≈ scale · code, and ‖x − scale · code‖.
struct Quantized {
  std::vector<int8_t> code;
  float scale = 0;
  float residual = 0;
  float norm = 0;  // ‖scale · code‖
};

Quantized quantize(const float* x, int64_t n) {
  Quantized q;
  float max = 0;
  for (int64_t i = 0; i < n; ++i) max = std::max(max, std::abs(x[i]));
  q.scale = max > 0 ? max / 127.0f : 1.0f;
  q.code.resize(static_cast<size_t>(n));
  double residual = 0, norm = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto c = static_cast<int8_t>(std::lround(x[i] / q.scale));
    q.code[static_cast<size_t>(i)] = c;
    const double approx = static_cast<double>(q.scale) * c;
    residual += (x[i] - approx) * (x[i] - approx);
    norm += approx * approx;
  }
  q.residual = static_cast<float>(std::sqrt(residual));
  q.norm = static_cast<float>(std::sqrt(norm));
  return q;
}

int32_t dot_i8_scalar(const int8_t* a, const int8_t* b, int64_t n) {
  int32_t total = 0;
  for (int64_t i = 0; i < n; ++i) total += static_cast<int32_t>(a[i]) * b[i];
  return total;
}

__attribute__((target("avx2"))) int32_t dot_i8_avx2(const int8_t* a, const int8_t* b, int64_t n) {
  __m256i acc = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i va = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m256i vb = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(va, vb));
  }
  __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  sum = _mm_hadd_epi32(sum, sum);
  sum = _mm_hadd_epi32(sum, sum);
  return _mm_cvtsi128_si32(sum) + dot_i8_scalar(a + i, b + i, n - i);
}

// AVX-512 VNNI multiplies unsigned by signed bytes, 64 per instruction: the
// query is passed shifted to unsigned (code + 128), and the row's code sum
// takes the shift back out: Σ (q + 128)·x = Σ q·x + 128·Σ x.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) int32_t dot_u8s8_vnni(const uint8_t* query, const int8_t* row,
                                                                                 int64_t n, int32_t row_sum) {
  __m512i acc = _mm512_setzero_si512();
  int64_t i = 0;
  for (; i + 64 <= n; i += 64)
    acc = _mm512_dpbusd_epi32(acc, _mm512_loadu_si512(query + i), _mm512_loadu_si512(row + i));
  int32_t total = _mm512_reduce_add_epi32(acc);
  for (; i < n; ++i) total += static_cast<int32_t>(query[i]) * row[i];
  return total - 128 * row_sum;
}

bool has_vnni() {
  static const bool yes = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw");
  return yes;
}

using DotI8 = int32_t (*)(const int8_t*, const int8_t*, int64_t);

DotI8 dot_i8() {
  static const DotI8 best = __builtin_cpu_supports("avx2") ? dot_i8_avx2 : dot_i8_scalar;
  return best;
}

}  // namespace

VectorIndex::VectorIndex(int64_t dimension) : dimension_(dimension) {
  if (dimension <= 0) throw InvalidInput("vector index dimension must be positive");
}

void VectorIndex::check_dimension(int64_t dimension) const {
  if (dimension != dimension_)
    throw InvalidInput("vector of dimension " + std::to_string(dimension) + " does not match the index dimension " +
                       std::to_string(dimension_));
}

void VectorIndex::add(const float* vector, int64_t dimension) {
  check_dimension(dimension);
  const Eigen::Map<const Eigen::VectorXf> v(vector, dimension);
  const float norm = v.norm();
  if (!(norm > 0) || !std::isfinite(norm)) throw InvalidInput("cannot index a zero or non-finite vector");
  data_.resize(data_.size() + static_cast<size_t>(dimension));
  float* row = data_.data() + rows_ * dimension_;
  Eigen::Map<Eigen::VectorXf>(row, dimension) = v / norm;
  const Quantized q = quantize(row, dimension);
  codes_.insert(codes_.end(), q.code.begin(), q.code.end());
  code_sums_.push_back(std::accumulate(q.code.begin(), q.code.end(), int32_t{0}));
  scales_.push_back(q.scale);
  residuals_.push_back(q.residual);
  ++rows_;
}

std::vector<Neighbor> VectorIndex::search(const float* query, int64_t dimension, int64_t k,
                                          int64_t* rescored) const {
  check_dimension(dimension);
  if (rescored != nullptr) *rescored = 0;
  if (rows_ == 0 || k <= 0) return {};
  const Eigen::Map<const Eigen::VectorXf> raw(query, dimension);
  const float norm = raw.norm();
  if (!(norm > 0) || !std::isfinite(norm)) throw InvalidInput("cannot search with a zero or non-finite vector");
  const Eigen::VectorXf unit = raw / norm;
  const Quantized q = quantize(unit.data(), dimension);
  const int64_t n = std::min(k, rows_);

  // int8 scores and their error bounds, for every row (the memory-bound scan).
  std::vector<float> approx(static_cast<size_t>(rows_)), bound(static_cast<size_t>(rows_));
  std::vector<uint8_t> shifted(q.code.size());
  for (size_t i = 0; i < shifted.size(); ++i) shifted[i] = static_cast<uint8_t>(q.code[i] + 128);
  const bool vnni = has_vnni();
  const DotI8 dot = dot_i8();
  at::parallel_for(0, rows_, 2048, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const auto i = static_cast<size_t>(r);
      const int8_t* row = codes_.data() + r * dimension_;
      const int32_t d = vnni ? dot_u8s8_vnni(shifted.data(), row, dimension_, code_sums_[i])
                             : dot(q.code.data(), row, dimension_);
      approx[i] = q.scale * scales_[i] * static_cast<float>(d);
      // The bound, widened for float rounding of the products above.
      bound[i] = (q.norm * residuals_[i] + q.residual) * 1.001f + 1e-5f;
    }
  });
  // The k-th largest lower bound: every true top-k row has an upper bound at
  // least this large.
  std::vector<float> lower(static_cast<size_t>(rows_));
  for (size_t i = 0; i < lower.size(); ++i) lower[i] = approx[i] - bound[i];
  std::nth_element(lower.begin(), lower.begin() + (n - 1), lower.end(), std::greater<float>());
  const float threshold = lower[static_cast<size_t>(n - 1)];

  std::vector<Neighbor> candidates;
  for (int64_t r = 0; r < rows_; ++r) {
    const auto i = static_cast<size_t>(r);
    if (approx[i] + bound[i] < threshold) continue;
    const Eigen::Map<const Eigen::VectorXf> row(data_.data() + r * dimension_, dimension_);
    candidates.push_back({r, row.dot(raw) / norm});
  }
  if (rescored != nullptr) *rescored = static_cast<int64_t>(candidates.size());
  std::partial_sort(candidates.begin(), candidates.begin() + n, candidates.end(),
                    [](const Neighbor& a, const Neighbor& b) { return a.score != b.score ? a.score > b.score : a.row < b.row; });
  candidates.resize(static_cast<size_t>(n));
  return candidates;
}

}  // namespace semroute
