// A sentence-transformers model folder: modules.json listing Transformer →
// Pooling (1_Pooling/config.json) → Dense layers (N_Dense/config.json +
// model.safetensors with linear.weight / linear.bias) → Normalize.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <optional>
#include <vector>

#include "models/layers.h"
#include "tasks/pooling.h"

namespace semroute {

class SentenceTransformerModules {
 public:
  // Reads `dir/modules.json`; std::nullopt when the folder has none. Throws
  // LoadError / Unsupported for malformed or unsupported modules.
  static std::optional<SentenceTransformerModules> load(const std::filesystem::path& dir, at::TensorOptions options);

  std::optional<Pooling> pooling() const { return pooling_; }
  bool normalize() const { return normalize_; }
  size_t dense_count() const { return dense_.size(); }
  // Applies Dense layer i to pooled vectors.
  at::Tensor dense(size_t i, const at::Tensor& x) const;
  // Width of the modules' output for pooled vectors of width `pooled`.
  int64_t output_dimension(int64_t pooled) const {
    return dense_.empty() ? pooled : dense_.back().linear.out_features();
  }

 private:
  struct Dense {
    Linear linear;
    bool tanh = false;
  };
  std::optional<Pooling> pooling_;
  std::vector<Dense> dense_;
  bool normalize_ = false;
};

}  // namespace semroute
