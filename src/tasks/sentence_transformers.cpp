#include "tasks/sentence_transformers.h"

#include <ATen/ops/tanh.h>
#include <nlohmann/json.hpp>

#include "core/checkpoint.h"
#include "core/config_reader.h"
#include "core/file_input.h"
#include "core/weight_map.h"
#include "semroute/error.h"

namespace semroute {
namespace fs = std::filesystem;
namespace {

Pooling pooling_from(const ConfigReader& c) {
  if (c.get_bool("pooling_mode_cls_token", false)) return Pooling::kCls;
  if (c.get_bool("pooling_mode_lasttoken", false)) return Pooling::kLastToken;
  if (c.get_bool("pooling_mode_mean_tokens", false)) return Pooling::kMean;
  for (const char* mode : {"pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens",
                           "pooling_mode_weightedmean_tokens"})
    if (c.get_bool(mode, false)) throw Unsupported(c.source() + ": " + mode + " is not supported");
  throw LoadError(c.source() + ": no pooling mode is enabled");
}

}  // namespace

std::optional<SentenceTransformerModules> SentenceTransformerModules::load(const fs::path& dir,
                                                                           at::TensorOptions options) {
  const fs::path modules_json = file_in_dir(dir, "modules.json");
  if (!fs::exists(modules_json)) return std::nullopt;
  const nlohmann::json modules = read_json_file(modules_json);
  if (!modules.is_array()) throw LoadError(modules_json.string() + ": expected a list of modules");
  SentenceTransformerModules st;
  for (const auto& entry : modules) {
    if (!entry.is_object()) throw LoadError(modules_json.string() + ": every module must be an object");
    const ConfigReader module(entry, modules_json.string() + " [module]");
    const std::string type = module.get_string("type", "");
    const auto ends_with = [&](const char* suffix) {
      const std::string s = suffix;
      return type.size() >= s.size() && type.compare(type.size() - s.size(), s.size(), s) == 0;
    };
    if (ends_with(".Transformer")) continue;
    if (ends_with(".Pooling")) {
      st.pooling_ = pooling_from(ConfigReader::from_file(file_in_dir(dir, module.get_string("path", "")) / "config.json"));
    } else if (ends_with(".Dense")) {
      const ConfigReader c = ConfigReader::from_file(file_in_dir(dir, module.get_string("path", "")) / "config.json");
      const int64_t in_features = c.get_int("in_features", 0), out_features = c.get_int("out_features", 0);
      const std::string activation = c.get_string("activation_function", "torch.nn.modules.linear.Identity");
      Dense dense;
      dense.tanh = activation.find("Tanh") != std::string::npos;
      if (!dense.tanh && activation.find("Identity") == std::string::npos)
        throw Unsupported(c.source() + ": Dense activation '" + activation + "' is not supported");
      const Checkpoint weights_file = Checkpoint::open(file_in_dir(dir, module.get_string("path", "")));
      WeightMap weights(weights_file, {""}, options);
      dense.linear = Linear::load(weights, "linear", in_features, out_features, c.get_bool("bias", true));
      weights.check();
      st.dense_.push_back(std::move(dense));
    } else if (ends_with(".Normalize")) {
      st.normalize_ = true;
    } else {
      throw Unsupported(modules_json.string() + ": module type '" + type + "' is not supported");
    }
  }
  return st;
}

at::Tensor SentenceTransformerModules::dense(size_t i, const at::Tensor& x) const {
  const Dense& d = dense_.at(i);
  const at::Tensor y = d.linear(x);
  return d.tanh ? at::tanh(y) : y;
}

}  // namespace semroute
