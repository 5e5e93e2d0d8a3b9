#include "classifiers/vector_index.h"

#include <ATen/Parallel.h>
#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "classifiers/int8_dot.h"
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

// The score of an erased row: below any cosine, so it never makes the top k.
constexpr float kErased = 1e30f;

}  // namespace

float cosine_similarity(const float* a, const float* b, int64_t dimension) {
  double dot = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < dimension; ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  return aa > 0 && bb > 0 ? static_cast<float>(dot / std::sqrt(aa * bb)) : 0.0f;
}

VectorIndex::VectorIndex(int64_t dimension) : dimension_(dimension) {
  if (dimension <= 0) throw InvalidInput("vector index dimension must be positive");
}

void VectorIndex::check_dimension(int64_t dimension) const {
  if (dimension != dimension_)
    throw InvalidInput("vector of dimension " + std::to_string(dimension) + " does not match the index dimension " +
                       std::to_string(dimension_));
}

int64_t VectorIndex::add(const float* vector, int64_t dimension) {
  check_dimension(dimension);
  data_.resize(data_.size() + static_cast<size_t>(dimension_));
  codes_.resize(codes_.size() + static_cast<size_t>(dimension_));
  code_sums_.push_back(0);
  scales_.push_back(0);
  residuals_.push_back(0);
  live_.push_back(0);
  try {
    store(rows_, vector);
  } catch (...) {
    data_.resize(data_.size() - static_cast<size_t>(dimension_));
    codes_.resize(codes_.size() - static_cast<size_t>(dimension_));
    code_sums_.pop_back();
    scales_.pop_back();
    residuals_.pop_back();
    live_.pop_back();
    throw;
  }
  return rows_++;
}

void VectorIndex::replace(int64_t row, const float* vector, int64_t dimension) {
  check_dimension(dimension);
  if (row < 0 || row >= rows_) throw InvalidInput("vector index: no row " + std::to_string(row));
  store(row, vector);
}

void VectorIndex::erase(int64_t row) {
  if (row < 0 || row >= rows_) throw InvalidInput("vector index: no row " + std::to_string(row));
  const auto i = static_cast<size_t>(row);
  live_count_ -= live_[i];
  live_[i] = 0;
}

// Normalizes `vector` into `row` and quantizes it; the row is live after.
void VectorIndex::store(int64_t row, const float* vector) {
  const Eigen::Map<const Eigen::VectorXf> v(vector, dimension_);
  const float norm = v.norm();
  if (!(norm > 0) || !std::isfinite(norm)) throw InvalidInput("cannot index a zero or non-finite vector");
  float* unit = data_.data() + row * dimension_;
  Eigen::Map<Eigen::VectorXf>(unit, dimension_) = v / norm;
  const Quantized q = quantize(unit, dimension_);
  const auto i = static_cast<size_t>(row);
  std::copy(q.code.begin(), q.code.end(), codes_.begin() + row * dimension_);
  code_sums_[i] = std::accumulate(q.code.begin(), q.code.end(), int32_t{0});
  scales_[i] = q.scale;
  residuals_[i] = q.residual;
  live_count_ += 1 - live_[i];
  live_[i] = 1;
}

std::vector<Neighbor> VectorIndex::search(const float* query, int64_t dimension, int64_t k,
                                          int64_t* rescored) const {
  check_dimension(dimension);
  if (rescored != nullptr) *rescored = 0;
  if (live_count_ == 0 || k <= 0) return {};
  const Eigen::Map<const Eigen::VectorXf> raw(query, dimension);
  const float norm = raw.norm();
  if (!(norm > 0) || !std::isfinite(norm)) throw InvalidInput("cannot search with a zero or non-finite vector");
  const Eigen::VectorXf unit = raw / norm;
  const Quantized q = quantize(unit.data(), dimension);
  const int64_t n = std::min(k, live_count_);

  // int8 scores and their error bounds, for every row (the memory-bound scan).
  std::vector<float> approx(static_cast<size_t>(rows_)), bound(static_cast<size_t>(rows_));
  std::vector<uint8_t> shifted(q.code.size());
  for (size_t i = 0; i < shifted.size(); ++i) shifted[i] = static_cast<uint8_t>(q.code[i] + 128);
  const bool vnni = has_vnni();
  const DotI8 dot = dot_i8();
  at::parallel_for(0, rows_, 2048, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const auto i = static_cast<size_t>(r);
      if (!live_[i]) {
        approx[i] = -kErased;
        bound[i] = 0;
        continue;
      }
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
    if (!live_[i] || approx[i] + bound[i] < threshold) continue;
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
