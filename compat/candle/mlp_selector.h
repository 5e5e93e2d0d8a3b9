// The router's MLP model selector: a small feed-forward network (linear,
// ReLU, batch norm, dropout layers) read from the JSON its Python trainer
// writes, mapping a feature vector to the name of the model to route to.
// Plain C++: the C API has no equivalent and a few hundred multiply-adds do
// not need libtorch. Immutable after loading; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace candle {

// Arithmetic precision of weights and activations (values rounded to it).
enum class MlpPrecision { kFloat32 = 0, kFloat16 = 1, kBFloat16 = 2 };

class MlpSelector {
 public:
  struct Layer {
    enum Kind { kLinear, kRelu, kBatchNorm, kDropout } kind = kRelu;
    size_t in = 0, out = 0;          // linear: out x in weight; batch norm: in == out features
    std::vector<float> weight, bias;  // batch norm: scale and shift
    std::vector<float> mean, var;     // batch norm running statistics
    float eps = 1e-5f;
    float p = 0;  // dropout (kept for serialisation; a no-op at inference)
  };

  // An untrained selector (select() fails until one is loaded).
  explicit MlpSelector(MlpPrecision precision = MlpPrecision::kFloat32) : precision_(precision) {}

  // Parses and validates the trainer's JSON; throws std::invalid_argument.
  static std::unique_ptr<MlpSelector> from_json(const std::string& json, MlpPrecision precision);
  // The same fields back, layers included (from_json reads it again).
  std::string to_json() const;

  bool trained() const { return trained_; }
  // The model name of the largest output (the last of equal maxima);
  // throws std::invalid_argument for an untrained selector or a wrong width.
  const std::string& select(const double* query, size_t length) const;

 private:
  float round(double v) const;

  MlpPrecision precision_;
  bool trained_ = false;
  std::vector<std::string> model_names_;
  size_t feature_dim_ = 0;
  std::vector<size_t> hidden_sizes_;
  double dropout_ = 0;
  std::vector<Layer> layers_;
};

}  // namespace candle
