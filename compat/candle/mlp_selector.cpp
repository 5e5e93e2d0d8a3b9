#include "mlp_selector.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/file_input.h"
#include "semroute/error.h"

namespace candle {
namespace {

using nlohmann::json;

// v rounded to a float with `mantissa_bits` explicit bits and exponents down
// to `min_exponent` (subnormals below), overflowing to infinity past `max`.
double round_to(double v, int mantissa_bits, int min_exponent, double max) {
  if (v == 0 || !std::isfinite(v)) return v;
  int e = 0;
  std::frexp(v, &e);  // v = m * 2^e, 0.5 <= |m| < 1
  const double quantum = std::ldexp(1.0, std::max(e - 1, min_exponent) - mantissa_bits);
  const double r = std::nearbyint(v / quantum) * quantum;
  return std::fabs(r) > max ? std::copysign(std::numeric_limits<double>::infinity(), r) : r;
}

std::vector<float> floats(const json& j, const char* what) {
  std::vector<float> out;
  if (j.is_array() && !j.empty() && j.front().is_array()) {  // a matrix, row-major
    for (const json& row : j)
      for (const json& v : row) out.push_back(v.get<float>());
  } else {
    for (const json& v : j) out.push_back(v.get<float>());
  }
  for (float v : out)
    if (!std::isfinite(v)) throw std::invalid_argument(std::string(what) + " holds a non-finite number");
  return out;
}

std::vector<float> floats_or(const json& layer, const char* key, size_t n, float fill) {
  if (!layer.contains(key) || layer[key].is_null()) return std::vector<float>(n, fill);
  std::vector<float> out = floats(layer[key], key);
  if (out.size() != n) throw std::invalid_argument(std::string(key) + " has the wrong length");
  return out;
}

MlpSelector::Layer parse_layer(const json& j) {
  MlpSelector::Layer l;
  const std::string type = j.at("type").get<std::string>();
  if (type == "linear") {
    l.kind = MlpSelector::Layer::kLinear;
    l.in = j.at("in_features").get<size_t>();
    l.out = j.at("out_features").get<size_t>();
    if (l.in == 0 || l.out == 0 || l.in > 1u << 20 || l.out > 1u << 20 || l.in * l.out > 1u << 26)
      throw std::invalid_argument("linear layer size out of range");
    l.weight = floats(j.at("weight"), "weight");
    if (l.weight.size() != l.in * l.out) throw std::invalid_argument("linear weight is not out_features x in_features");
    l.bias = floats_or(j, "bias", l.out, 0.0f);
  } else if (type == "relu") {
    l.kind = MlpSelector::Layer::kRelu;
  } else if (type == "batch_norm") {
    l.kind = MlpSelector::Layer::kBatchNorm;
    l.in = l.out = j.at("num_features").get<size_t>();
    if (l.in == 0 || l.in > 1u << 20) throw std::invalid_argument("batch_norm size out of range");
    l.weight = floats_or(j, "weight", l.in, 1.0f);
    l.bias = floats_or(j, "bias", l.in, 0.0f);
    l.mean = floats_or(j, "running_mean", l.in, 0.0f);
    l.var = floats_or(j, "running_var", l.in, 1.0f);
    l.eps = j.value("eps", 1e-5f);
    if (!(l.eps >= 0)) throw std::invalid_argument("batch_norm eps must be >= 0");
  } else if (type == "dropout") {
    l.kind = MlpSelector::Layer::kDropout;
    l.p = j.at("p").get<float>();
  } else {
    throw std::invalid_argument("unknown layer type '" + type + "'");
  }
  return l;
}

json layer_json(const MlpSelector::Layer& l) {
  switch (l.kind) {
    case MlpSelector::Layer::kLinear: {
      json weight = json::array();
      for (size_t o = 0; o < l.out; ++o)
        weight.push_back(std::vector<float>(l.weight.begin() + o * l.in, l.weight.begin() + (o + 1) * l.in));
      return {{"type", "linear"}, {"in_features", l.in}, {"out_features", l.out}, {"weight", weight}, {"bias", l.bias}};
    }
    case MlpSelector::Layer::kBatchNorm:
      return {{"type", "batch_norm"}, {"num_features", l.in}, {"weight", l.weight}, {"bias", l.bias},
              {"running_mean", l.mean}, {"running_var", l.var}, {"eps", l.eps}};
    case MlpSelector::Layer::kDropout:
      return {{"type", "dropout"}, {"p", l.p}};
    default:
      return {{"type", "relu"}};
  }
}

}  // namespace

float MlpSelector::round(double v) const {
  switch (precision_) {
    case MlpPrecision::kFloat16: return static_cast<float>(round_to(v, 10, -14, 65504.0));
    case MlpPrecision::kBFloat16: return static_cast<float>(round_to(static_cast<float>(v), 7, -126, 3.3895313892515355e38));
    default: return static_cast<float>(v);
  }
}

std::unique_ptr<MlpSelector> MlpSelector::from_json(const std::string& text, MlpPrecision precision) {
  auto s = std::make_unique<MlpSelector>(precision);
  try {
    const json j = semroute::parse_json(text, "MLP JSON");
    if (j.at("algorithm").get<std::string>() != "mlp") throw std::invalid_argument("algorithm is not \"mlp\"");
    s->trained_ = j.at("trained").get<bool>();
    s->model_names_ = j.at("model_names").get<std::vector<std::string>>();
    s->feature_dim_ = j.at("feature_dim").get<size_t>();
    j.at("n_classes").get<size_t>();
    s->hidden_sizes_ = j.at("hidden_sizes").get<std::vector<size_t>>();
    s->dropout_ = j.at("dropout").get<double>();
    for (const json& layer : j.at("layers")) s->layers_.push_back(parse_layer(layer));
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("MLP JSON: ") + e.what());
  } catch (const semroute::Error& e) {
    throw std::invalid_argument(e.what());
  }
  // The widths must chain from the features to one output per model name.
  size_t width = s->feature_dim_;
  for (Layer& l : s->layers_) {
    if ((l.kind == Layer::kLinear || l.kind == Layer::kBatchNorm) && l.in != width)
      throw std::invalid_argument("MLP JSON: a layer expects " + std::to_string(l.in) + " inputs, gets " +
                                  std::to_string(width));
    if (l.kind == Layer::kLinear || l.kind == Layer::kBatchNorm) width = l.out;
    for (auto* v : {&l.weight, &l.bias, &l.mean, &l.var})
      for (float& x : *v) x = s->round(x);
    l.eps = s->round(l.eps);
  }
  if (s->trained_ && width != s->model_names_.size())
    throw std::invalid_argument("MLP JSON: " + std::to_string(width) + " outputs for " +
                                std::to_string(s->model_names_.size()) + " model names");
  return s;
}

std::string MlpSelector::to_json() const {
  json layers = json::array();
  for (const Layer& l : layers_) layers.push_back(layer_json(l));
  const json j = {{"algorithm", "mlp"},         {"trained", trained_},          {"model_names", model_names_},
                  {"feature_dim", feature_dim_}, {"n_classes", model_names_.size()}, {"hidden_sizes", hidden_sizes_},
                  {"dropout", dropout_},         {"layers", layers}};
  return j.dump();
}

const std::string& MlpSelector::select(const double* query, size_t length) const {
  if (!trained_) throw std::invalid_argument("the MLP selector is not trained");
  if (query == nullptr || length != feature_dim_)
    throw std::invalid_argument("query has " + std::to_string(length) + " features; the MLP expects " +
                                std::to_string(feature_dim_));
  std::vector<float> x(query, query + length);
  for (float& v : x) v = round(v);
  for (const Layer& l : layers_) {
    if (l.kind == Layer::kLinear) {
      std::vector<float> y(l.out);
      for (size_t o = 0; o < l.out; ++o) {
        double sum = l.bias[o];
        for (size_t i = 0; i < l.in; ++i) sum += static_cast<double>(l.weight[o * l.in + i]) * x[i];
        y[o] = round(sum);
      }
      x = std::move(y);
    } else if (l.kind == Layer::kRelu) {
      for (float& v : x) v = std::max(v, 0.0f);
    } else if (l.kind == Layer::kBatchNorm) {
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = round((x[i] - l.mean[i]) / std::sqrt(static_cast<double>(l.var[i]) + l.eps) * l.weight[i] + l.bias[i]);
    }
  }
  size_t best = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) throw std::invalid_argument("the MLP produced NaN");
    if (x[i] >= x[best]) best = i;
  }
  if (x.empty() || best >= model_names_.size()) throw std::invalid_argument("the MLP output has no model name");
  return model_names_[best];
}

}  // namespace candle
