// A flat index of L2-normalized float vectors with exact top-k by cosine
// similarity (one matrix-vector product over all rows, Eigen). Built once,
// then read-only: search() is safe from any number of threads.
#pragma once

#include <cstdint>
#include <vector>

namespace semroute {

struct Neighbor {
  int64_t row;   // insertion order
  float score;   // cosine similarity
};

class VectorIndex {
 public:
  explicit VectorIndex(int64_t dimension);

  // Appends a vector (normalized on the way in). Throws InvalidInput for a
  // wrong dimension or a zero vector.
  void add(const float* vector, int64_t dimension);
  // The k best rows, best first; ties keep insertion order. k is clamped to
  // the index size; an empty index returns nothing.
  std::vector<Neighbor> search(const float* query, int64_t dimension, int64_t k) const;

  int64_t size() const { return rows_; }
  int64_t dimension() const { return dimension_; }

 private:
  void check_dimension(int64_t dimension) const;

  int64_t dimension_;
  int64_t rows_ = 0;
  std::vector<float> data_;  // rows_ x dimension_, row-major
};

}  // namespace semroute
