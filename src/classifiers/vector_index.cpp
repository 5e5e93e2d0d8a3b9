#include "classifiers/vector_index.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/mv.h>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "semroute/error.h"

namespace semroute {
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
  Eigen::Map<Eigen::VectorXf>(data_.data() + rows_ * dimension_, dimension) = v / norm;
  ++rows_;
}

std::vector<Neighbor> VectorIndex::search(const float* query, int64_t dimension, int64_t k) const {
  check_dimension(dimension);
  if (rows_ == 0 || k <= 0) return {};
  const Eigen::Map<const Eigen::VectorXf> q(query, dimension);
  const float norm = q.norm();
  if (!(norm > 0) || !std::isfinite(norm)) throw InvalidInput("cannot search with a zero or non-finite vector");
  // One matrix-vector product through the system BLAS (vectorized and
  // threaded), over rows that stay in one contiguous block.
  const at::Tensor rows = at::from_blob(const_cast<float*>(data_.data()), {rows_, dimension_});
  const at::Tensor query_t = at::from_blob(const_cast<float*>(query), {dimension_});
  const at::Tensor scores_t = at::mv(rows, query_t) / norm;
  const Eigen::Map<const Eigen::VectorXf> scores(scores_t.data_ptr<float>(), rows_);
  std::vector<int64_t> order(static_cast<size_t>(rows_));
  std::iota(order.begin(), order.end(), 0);
  const int64_t n = std::min(k, rows_);
  std::partial_sort(order.begin(), order.begin() + n, order.end(), [&](int64_t a, int64_t b) {
    return scores[a] != scores[b] ? scores[a] > scores[b] : a < b;
  });
  std::vector<Neighbor> out;
  for (int64_t i = 0; i < n; ++i) out.push_back({order[static_cast<size_t>(i)], scores[order[static_cast<size_t>(i)]]});
  return out;
}

}  // namespace semroute
