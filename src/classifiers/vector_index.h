// A flat index of L2-normalized float vectors with exact top-k by cosine
// similarity. Built once, then read-only: search() is safe from any number of
// threads.
//
// A search reads int8 codes of the rows (a quarter of the float32 bytes: the
// scan is memory-bound), then rescans in float32 only the rows that can still
// make the top k. Each row keeps the norm of its quantization residual, which
// bounds the error of its int8 score, so the result is the exact float32
// top-k, not an approximation:
//   |q·x − s_q s_x (c_q·c_x)| ≤ ‖s_q c_q‖·‖x − s_x c_x‖ + ‖q − s_q c_q‖·‖x‖.
#pragma once

#include <cstdint>
#include <vector>

namespace semroute {

struct Neighbor {
  int64_t row;   // insertion order
  float score;   // cosine similarity
};

// Cosine similarity of two vectors; 0 when either is zero.
float cosine_similarity(const float* a, const float* b, int64_t dimension);

class VectorIndex {
 public:
  explicit VectorIndex(int64_t dimension);

  // Appends a vector (normalized on the way in) and returns its row. Throws
  // InvalidInput for a wrong dimension or a zero vector.
  int64_t add(const float* vector, int64_t dimension);
  // Puts a vector in `row` (an erased one, or one to overwrite), live again.
  void replace(int64_t row, const float* vector, int64_t dimension);
  // Takes `row` out of every search (its storage stays for replace()).
  void erase(int64_t row);
  // The k best rows, best first; ties keep insertion order. k is clamped to
  // the index size; an empty index returns nothing. `rescored`, when given,
  // receives how many rows were rescored in float32.
  std::vector<Neighbor> search(const float* query, int64_t dimension, int64_t k, int64_t* rescored = nullptr) const;

  int64_t size() const { return rows_; }  // rows ever added, erased ones included
  int64_t live() const { return live_count_; }
  int64_t dimension() const { return dimension_; }

 private:
  void check_dimension(int64_t dimension) const;
  void store(int64_t row, const float* vector);

  int64_t dimension_;
  int64_t rows_ = 0;
  std::vector<float> data_;        // rows_ x dimension_, row-major, unit rows
  std::vector<int8_t> codes_;      // rows_ x dimension_: round(x / scale)
  std::vector<int32_t> code_sums_;  // per row: Σ code
  std::vector<float> scales_;      // per row: max |x| / 127
  std::vector<float> residuals_;   // per row: ‖x − scale · code‖
  std::vector<uint8_t> live_;      // per row: 0 once erased
  int64_t live_count_ = 0;
};

}  // namespace semroute
